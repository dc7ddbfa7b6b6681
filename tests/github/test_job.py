"""github/job.py: the action's log line."""

from __future__ import annotations

import sys

from streams import Writes

from ci_eval.github import job


def test_a_log_line_is_written_whole_with_its_newline_in_one_call(monkeypatch):
    stream = Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    job.log("ci-eval: warning: skipping the baseline from run 7: gone")
    # a progress line written by the retrieval thread can only fall before or after it
    assert stream.calls == ["ci-eval: warning: skipping the baseline from run 7: gone\n"]
