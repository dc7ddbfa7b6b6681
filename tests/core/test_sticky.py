"""One sticky comment: found by marker and author, updated in place, duplicates removed."""

from __future__ import annotations

import pytest

from ci_eval.core.sticky import CommentInfo, CommentPlan, plan_comment

MARKER = "<!-- ci-eval -->"
BOT = "github-actions[bot]"
BODY = f"{MARKER}\n**ci-eval**: hit@5 0.81 (+0.02)"


def comment(comment_id, body, login=BOT) -> CommentInfo:
    return CommentInfo(
        comment_id, body, login, f"https://github.com/acme/rag-app/pull/7#issuecomment-{comment_id}"
    )


OURS_OLD = comment(10, f"{MARKER}\nold numbers")
OURS_SAME = comment(11, BODY)
OURS_DUP = comment(12, f"{MARKER}\nfrom a concurrent run")
OURS_DUP2 = comment(13, f"{MARKER}\r\nanother")
QUOTED = comment(20, f"{MARKER}\n> this regressed, why?", login="octo-dev")
QUOTED_LATER = comment(21, f"Look at this:\n{MARKER}\nold numbers")
HUMAN = comment(30, "LGTM", login="octo-dev")


@pytest.mark.parametrize(
    ("case", "comments", "mode", "changed", "plan"),
    [
        ("none yet: create", [HUMAN], "always", True, CommentPlan(True, None, ())),
        ("none yet, unchanged, always: create", [], "always", False, CommentPlan(True, None, ())),
        (
            "ours exists: update in place",
            [HUMAN, OURS_OLD],
            "always",
            True,
            CommentPlan(False, 10, (), keep_id=10),
        ),
        (
            "ours already says this: nothing to do",
            [OURS_SAME],
            "always",
            True,
            CommentPlan(False, None, (), keep_id=11),
        ),
        (
            "someone else's comment quoting the marker is not ours",
            [QUOTED],
            "always",
            True,
            CommentPlan(True, None, ()),
        ),
        (
            "the marker must be the first line",
            [QUOTED_LATER],
            "always",
            True,
            CommentPlan(True, None, ()),
        ),
        (
            "duplicates: keep the oldest, delete the rest",
            [OURS_DUP2, QUOTED, OURS_DUP, OURS_OLD],
            "always",
            True,
            CommentPlan(False, 10, (12, 13), keep_id=10),
        ),
        (
            "on-change, unchanged, none yet: stay quiet",
            [QUOTED],
            "on-change",
            False,
            CommentPlan(False, None, ()),
        ),
        (
            "on-change, changed, none yet: create",
            [],
            "on-change",
            True,
            CommentPlan(True, None, ()),
        ),
        (
            "on-change, unchanged, ours exists: keep it current",
            [OURS_OLD],
            "on-change",
            False,
            CommentPlan(False, 10, (), keep_id=10),
        ),
        ("off: touch nothing", [OURS_OLD, OURS_DUP], "off", True, CommentPlan(False, None, ())),
    ],
    ids=lambda value: value if isinstance(value, str) and " " in value else "",
)
def test_plan_comment(case, comments, mode, changed, plan):
    assert plan_comment(comments, MARKER, BOT, BODY, mode=mode, changed=changed) == plan


def test_author_login_compares_case_insensitively():
    plan = plan_comment([OURS_OLD], MARKER, "GitHub-Actions[bot]", BODY)
    assert plan.update_id == 10


def test_another_bot_account_is_not_us():
    other_bot = comment(40, f"{MARKER}\nfrom another app", login="other-app[bot]")
    assert plan_comment([other_bot], MARKER, BOT, BODY) == CommentPlan(True, None, ())


def test_noop_says_when_nothing_is_to_be_done():
    assert plan_comment([OURS_SAME], MARKER, BOT, BODY).noop
    assert not plan_comment([], MARKER, BOT, BODY).noop


@pytest.mark.parametrize(
    ("body", "mode", "message"),
    [
        ("no marker here", "always", "must start with the marker"),
        (f"text\n{MARKER}", "always", "must start with the marker"),
        (BODY, "sometimes", "comment mode must be one of always, on-change, off"),
    ],
)
def test_programming_mistakes_are_refused(body, mode, message):
    with pytest.raises(ValueError, match=message):
        plan_comment([], MARKER, BOT, body, mode=mode)
