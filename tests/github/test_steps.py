"""The action's steps that need no GitHub: the stale-id annotations a step prints."""

from __future__ import annotations

import pytest
from factories import artefact, spec

from ci_eval.github.steps import stale_annotations


def _head(stale_questions: int, answered: int = 3):
    specs = [spec(f"q{i}", [f"gone-{i}", "kb/a"], ["kb/a"], stale=[f"gone-{i}"])
             for i in range(stale_questions)]
    specs += [spec(f"ok{i}", ["kb/a"], ["kb/a"]) for i in range(answered)]
    return artefact(specs)


@pytest.mark.parametrize("stale", [1, 9, 10])
def test_up_to_ten_stale_questions_are_each_annotated(stale):
    lines = stale_annotations(_head(stale), None)
    assert [line.split("title=ci-eval%3A ")[1].split("::")[0] for line in lines] == [
        f"q{i}" for i in range(stale)]
    assert all(f"stale gold id(s) not in the current index: gone-{i}" in line
               for i, line in enumerate(lines))


@pytest.mark.parametrize("stale", [11, 50, 400])
def test_past_ten_nine_are_annotated_and_the_tenth_counts_the_rest(stale):
    lines = stale_annotations(_head(stale), None)
    # GitHub shows ten warnings a step: every one printed is shown
    assert len(lines) == 10 and all(line.startswith("::warning ") for line in lines)
    assert [line.split("title=ci-eval%3A ")[1].split("::")[0] for line in lines[:9]] == [
        f"q{i}" for i in range(9)]
    assert lines[9] == ("::warning title=ci-eval%3A stale gold::"
                        f"{stale - 9} more questions with stale gold ids, listed in the job "
                        "summary's Stale gold section")


def test_no_stale_question_no_annotation():
    assert stale_annotations(_head(0), None) == []
