"""The job summary of a large gold set, end to end: GitHub drops a step's summary over
1 MiB whole (and shows an error annotation instead), so `ci-eval action` cuts it to the
limit and names the full report in the workflow artifact. A push job records a baseline
of 10,000 questions, then a pull request moves every one of them."""

from __future__ import annotations

import json
import re

from action_harness import BASE as BASE_SHA
from action_harness import (
    MARKER,
    TWO_HOURS,
    add_push_run,
    baseline_line,
    bodies,
    clean_environ,
    pr_event,
    push_event,
    run_action,
    verdict_line,
)

from ci_eval.core.report.budget import GITHUB_LIMIT, SUMMARY_LIMIT

QUESTIONS = 10_000

# Each question's gold chunk sits at a rank set by SHIFT, so the pull request (another
# SHIFT) moves every question: thousands of regressions and improvements to list.
RETRIEVER = f"""
import os

SHIFT = int(os.environ["SUMMARY_TEST_SHIFT"])


def retrieve(question, depth):
    i = int(question.rsplit(" ", 1)[1])
    ids = [f"c{{(i + 1 + j) % {QUESTIONS}}}" for j in range(depth)]
    rank = (SHIFT * i) % 12
    if rank < depth:
        ids[rank] = f"c{{i}}"
    return [(cid, 1.0 / (r + 1)) for r, cid in enumerate(ids)]
"""


def _project(root):
    # Text outside ASCII: the limit is in bytes, the comment's budget in characters.
    questions = [{"id": f"q{i}", "question": f"Où trouve-t-on la réponse — Übersicht, Frage {i}", "gold": [f"c{i}"],
                  "tags": [f"t{i % 7}"]} for i in range(QUESTIONS)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    (root / "big_retriever.py").write_text(RETRIEVER)
    (root / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 5\n[retriever]\n'
                                       'type = "python"\ntarget = "big_retriever:retrieve"\n')
    return root


def _environ(shift: int) -> dict[str, str]:
    return clean_environ() | {"SUMMARY_TEST_SHIFT": str(shift)}


def test_a_summary_over_github_s_limit_is_cut_to_it_and_names_the_full_report(gh, tmp_path):
    (tmp_path / "project").mkdir()
    project = _project(tmp_path / "project")
    push = run_action(gh, tmp_path, project, "push", push_event(BASE_SHA), sha=BASE_SHA,
                      ref="refs/heads/main", environ=_environ(1))
    assert push.code == 0, push.stderr
    add_push_run(gh, BASE_SHA, push.bundle_zip(), TWO_HOURS)

    pr = run_action(gh, tmp_path, project, "pull_request", pr_event(), environ=_environ(5))

    assert pr.code in (0, 1), pr.stderr
    full = (pr.bundle / "summary.md").read_text()
    summary = pr.summary
    # The full report is over the limit: a summary of it all would be dropped.
    assert len(full.encode()) > SUMMARY_LIMIT
    assert len(summary.encode()) <= SUMMARY_LIMIT
    # Nearly all of the room is used: the cut is by sections, not by a wide margin.
    assert len(summary.encode()) > SUMMARY_LIMIT * 0.95
    assert summary.rstrip().endswith(
        f"this summary is cut to GitHub's limit of {SUMMARY_LIMIT:,} bytes for one step; "
        "summary.md in this run's `ci-eval` artifact holds the whole report.")
    # What the comment leads with, the summary does too, word for word.
    [body] = bodies(gh)
    assert body.splitlines()[0] == MARKER and len(body) < GITHUB_LIMIT
    assert verdict_line(summary) == verdict_line(body) == verdict_line(full)
    assert baseline_line(summary) == baseline_line(body) == baseline_line(full)
    # Every list it cuts points at the artifact, never at the summary it is in.
    cuts = re.findall(r"… \+\d+ more [^\n]*", summary)
    assert cuts
    assert all("summary.md in this run's `ci-eval` artifact" in c for c in cuts)
    assert "the job summary" not in summary
    # The comment's own cut lists still point at the job summary.
    assert "(see the job summary or the JSON report)" in body
