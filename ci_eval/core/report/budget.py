"""The comment's size budget: GitHub refuses comments over 65,536 characters, and drops a
step's job summary over 1 MiB. Sections are cut least important first, each to the largest
number of items that still fits (found by bisection, never below the section's floor);
what is cut ends with a "+N more" line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_BUDGET = 65_000
GITHUB_LIMIT = 65_536
# Bytes of one step's job summary: GitHub drops a larger one whole ("$GITHUB_STEP_SUMMARY
# upload aborted, supports content up to a size of 1024k") and shows an error annotation.
SUMMARY_LIMIT = 1_048_576
_TRUNCATED = "\n\n… report truncated to fit a comment; the job summary has all of it.\n"


@dataclass
class Section:
    key: str
    render: Callable[[int | None], str]
    size: int  # items, for the budget's limit search
    floor: int = 0  # the budget never cuts below this many items
    text: str = ""
    # A length the whole section is known to reach without rendering it (its rows times the
    # shortest row a table can have): over the budget, it is never rendered in full.
    at_least: int = 0
    # measure(n, room): len(render(n)) without rendering, None for an n it cannot count;
    # when that length is over ``room``, it may give any number over ``room`` instead
    # (only whether a length fits is asked, so the search goes the same way)
    measure: Callable[[int, int], int | None] | None = None


def join(head: str, sections: list[Section]) -> str:
    parts = [head] + [s.text for s in sections if s.text]
    return "\n\n".join(parts) + "\n"


def _fit(s: Section, room: int) -> str:
    """The section at the largest item limit whose text is at most ``room`` characters.
    The search gallops up from the floor before it bisects: a probe never measures much
    more than what fits, where bisecting from the middle would measure half of 100,000
    rows. A section that can count its length (``measure``) is rendered once, at the end."""
    size, render = _sizer(s, room)
    lo, hi = min(s.floor, s.size), s.size
    if size(lo) > room:
        return render(lo)
    step = 1
    while lo < hi:
        probe = min(lo + step, hi)
        if size(probe) > room:
            hi = probe - 1
            break
        lo, step = probe, step * 2
    lo, best = lo + 1, lo
    while lo <= hi:
        mid = (lo + hi) // 2
        if size(mid) <= room:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return render(best)


def _sizer(s: Section, room: int):
    """The section's length at a limit (or a number over ``room`` when it is over), counted
    when it can be, else rendered; and its rendering at a limit (one already made for its
    length is not made again)."""
    rendered: dict[int, str] = {}

    def render(n: int) -> str:
        if n not in rendered:
            rendered[n] = s.render(n)
        return rendered[n]

    def size(n: int) -> int:
        counted = s.measure(n, room) if s.measure is not None else None
        return len(render(n)) if counted is None else counted

    return size, render


def pack(head: str, sections: list[Section], drop_order: tuple[str, ...],
         budget: int | None) -> str:
    """Render every section in full, then cut in ``drop_order`` until it fits ``budget``
    (hard-capped below GitHub's limit); ``None`` keeps everything (the job summary).

    A section whose ``at_least`` is over the budget is not rendered in full: it will be cut,
    and while it is uncut every other section's room is below zero whatever its exact
    length, so those cut before it are cut to their floor, as they would be: they are not
    rendered in full either (``_pending``). The comment is the same."""
    if budget is not None:
        budget = min(budget, GITHUB_LIMIT - 1)
    return pack_cut(head, sections, drop_order, budget, _TRUNCATED)[0]


def pack_cut(head: str, sections: list[Section], drop_order: tuple[str, ...],
             budget: int | None, truncated: str) -> tuple[str, bool]:
    """``pack`` without the comment's cap, ending with ``truncated`` when only the fixed
    parts are left to cut; and whether anything was cut."""
    pending = _pending(sections, drop_order, budget)
    for s in sections:
        s.text = "" if s.key in pending else s.render(None)
    if budget is None:
        return join(head, sections), False
    by_key = {s.key: s for s in sections}
    total = _length(head, sections, pending)
    cut = False
    for key in drop_order:
        if total <= budget:
            break
        s = by_key[key]
        own = s.at_least if key in pending else len(s.text)
        fitted = _fit(s, budget - (total - own))
        # a section whose floor holds all its items fits as it was: nothing of it is cut
        cut = cut or key in pending or fitted != s.text
        s.text = fitted
        pending.discard(key)
        total = _length(head, sections, pending)
    text = join(head, sections)
    if len(text) > budget:  # only the fixed parts left: cut at a line boundary
        at = text.rfind("\n", 0, budget - len(truncated))
        text, cut = text[: max(at, 0)] + truncated, True
    return text, cut


def _pending(sections: list[Section], drop_order: tuple[str, ...], budget: int | None) -> set[str]:
    """The sections whose full text the packing never reads: each whose ``at_least`` is over
    the budget, and every section cut before the first of them (its room is below zero, so
    ``_fit`` gives its floor whatever its length; until it is cut it counts as its
    ``at_least``, a lower bound, which leaves that room below zero)."""
    if budget is None:
        return set()
    over = {s.key for s in sections if s.at_least > budget and s.key in drop_order}
    first = next((i for i, key in enumerate(drop_order) if key in over), None)
    return over if first is None else over | set(drop_order[:first])


def _length(head: str, sections: list[Section], pending: set[str]) -> int:
    """``len(join(head, sections))``, a section not yet rendered counted at its ``at_least``."""
    sizes = [s.at_least if s.key in pending else len(s.text) for s in sections]
    return len(head) + sum(size + 2 for size in sizes if size) + 1
