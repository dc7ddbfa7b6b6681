"""One pull-request comment, updated in place.

Our comment is the one whose body starts with the marker line AND whose author is the
account posting now. Anyone may paste the marker into their own comment (quoting ours, for
instance); such comments are never edited or deleted. When concurrent runs left several of
ours, the oldest (lowest id) is kept and the others are deleted.

``comment_mode``:

- ``always``: create or update the comment on every run;
- ``on-change``: update an existing comment; create one only when the results changed;
- ``off``: touch nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

CommentMode = Literal["always", "on-change", "off"]
COMMENT_MODES: tuple[str, ...] = ("always", "on-change", "off")


@dataclass(frozen=True)
class CommentInfo:
    """One issue comment, as the GitHub adapter reports it."""

    id: int
    body: str
    user_login: str
    html_url: str


@dataclass(frozen=True)
class CommentPlan:
    create: bool
    update_id: int | None
    delete_ids: tuple[int, ...]
    keep_id: int | None = None  # our existing comment, whether or not it needs an edit

    @property
    def noop(self) -> bool:
        return not self.create and self.update_id is None and not self.delete_ids


def first_line(text: str) -> str:
    return text.split("\n", 1)[0].rstrip("\r").strip()


def is_ours(comment: CommentInfo, marker: str, author_login: str) -> bool:
    return comment.user_login.lower() == author_login.lower() and first_line(comment.body) == marker


def plan_comment(
    comments: Iterable[CommentInfo],
    marker: str,
    author_login: str,
    body: str,
    mode: CommentMode = "always",
    changed: bool = True,
) -> CommentPlan:
    """Decide what to create, edit and delete so the PR ends with one comment of ours.

    ``body`` must start with ``marker`` as its first line, so the next run finds it.
    ``changed`` says whether the results differ from the baseline (used by ``on-change``).
    An existing comment whose body is already ``body`` is left alone.
    """
    if mode not in COMMENT_MODES:
        raise ValueError(f"comment mode must be one of {', '.join(COMMENT_MODES)}, got {mode!r}")
    if not marker.strip() or first_line(body) != marker.strip():
        raise ValueError("the comment body must start with the marker line")
    if mode == "off":
        return CommentPlan(create=False, update_id=None, delete_ids=())

    ours = sorted(
        (c for c in comments if is_ours(c, marker.strip(), author_login)), key=lambda c: c.id
    )
    if ours:
        keep, extra = ours[0], ours[1:]
        update_id = None if keep.body == body else keep.id
        return CommentPlan(
            create=False,
            update_id=update_id,
            delete_ids=tuple(c.id for c in extra),
            keep_id=keep.id,
        )
    create = mode == "always" or changed
    return CommentPlan(create=create, update_id=None, delete_ids=())
