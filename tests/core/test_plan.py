"""What `ci-eval action` does for each event, mode, fork-ness and comment setting."""

from __future__ import annotations

import pytest

from ci_eval.core.plan import plan_action

# evaluate, find_baseline, post_comment, post_from_artifact, carry_history, refused
RUN_AND_COMMENT = (True, True, True, False, False, False)
RUN_NO_COMMENT = (True, True, False, False, False, False)
RECORD_BASELINE = (True, False, False, False, True, False)
EVALUATE_ONLY = (True, False, False, False, False, False)
POST_FROM_ARTIFACT = (False, False, False, True, False, False)
NOTHING = (False, False, False, False, False, False)
REFUSED = (False, False, False, False, False, True)

TABLE = [
    # event, mode, is_fork, comment -> plan, a phrase of the note
    ("pull_request", "run", False, "always", RUN_AND_COMMENT, "compare with the base commit"),
    ("pull_request", "run", False, "on-change", RUN_AND_COMMENT, "compare with the base commit"),
    ("pull_request", "run", False, "off", RUN_NO_COMMENT, "compare with the base commit"),
    # A fork's token is read-only: evaluate and gate here, the poster comments.
    ("pull_request", "run", True, "always", RUN_NO_COMMENT, "workflow_run poster"),
    ("pull_request", "run", True, "off", RUN_NO_COMMENT, "workflow_run poster"),
    ("push", "run", False, "always", RECORD_BASELINE, "recording a baseline run"),
    ("push", "run", False, "off", RECORD_BASELINE, "recording a baseline run"),
    ("schedule", "run", False, "always", EVALUATE_ONLY, "only push runs become baselines"),
    ("workflow_dispatch", "run", False, "always", EVALUATE_ONLY, "only push runs become baselines"),
    ("workflow_run", "comment", False, "always", POST_FROM_ARTIFACT, "pull request run"),
    ("workflow_run", "comment", False, "on-change", POST_FROM_ARTIFACT, "pull request run"),
    ("workflow_run", "comment", False, "off", NOTHING, "pull request run"),
    # Misconfigurations that would otherwise end green having done nothing.
    ("workflow_run", "run", False, "always", REFUSED, "needs mode: comment"),
    ("pull_request", "comment", False, "always", REFUSED, "runs on workflow_run events"),
    ("push", "comment", False, "always", REFUSED, "not push"),
    # The PR's code with the base repository's write token: never, whatever else is set.
    ("pull_request_target", "run", False, "always", REFUSED, "pull_request_target is refused"),
    ("pull_request_target", "run", True, "off", REFUSED, "pull_request_target is refused"),
]


@pytest.mark.parametrize(("event", "mode", "is_fork", "comment", "expected", "note"), TABLE)
def test_plan_action(event, mode, is_fork, comment, expected, note):
    plan = plan_action(event, mode, is_fork, comment)
    assert (plan.evaluate, plan.find_baseline, plan.post_comment, plan.post_from_artifact,
            plan.carry_history, plan.refused) == expected
    assert note in plan.note
    assert "\n" not in plan.note


# The sharded setup: event, mode, is_fork, shard -> plan, shard_part, merge_parts, a phrase.
SHARDED = [
    # A matrix job only measures its part, whatever the event: the merge job does the rest.
    ("pull_request", "run", False, "2/8", EVALUATE_ONLY, True, False, "running shard 2/8"),
    ("pull_request", "run", True, "2/8", EVALUATE_ONLY, True, False, "running shard 2/8"),
    ("push", "run", False, "1/4", EVALUATE_ONLY, True, False, "running shard 1/4"),
    # The merge job does what mode: run does on the same event.
    ("pull_request", "merge", False, "", RUN_AND_COMMENT, False, True, "compare with the base commit"),
    ("pull_request", "merge", True, "", RUN_NO_COMMENT, False, True, "workflow_run poster"),
    ("push", "merge", False, "", RECORD_BASELINE, False, True, "recording a baseline run"),
    ("schedule", "merge", False, "", EVALUATE_ONLY, False, True, "only push runs become baselines"),
    # Refusals hold with shards too.
    ("pull_request_target", "run", False, "1/2", REFUSED, False, False, "pull_request_target is refused"),
    ("pull_request_target", "merge", False, "", REFUSED, False, False, "pull_request_target is refused"),
    ("workflow_run", "merge", False, "", REFUSED, False, False, "needs mode: comment"),
    ("pull_request", "merge", False, "1/2", REFUSED, False, False, "belongs to the matrix jobs"),
    ("workflow_run", "comment", False, "1/2", REFUSED, False, False, "belongs to the matrix jobs"),
    # Without a shard or merge, plan_sharded is plan_action.
    ("pull_request", "run", False, "", RUN_AND_COMMENT, False, False, "compare with the base commit"),
]


@pytest.mark.parametrize(("event", "mode", "is_fork", "shard", "expected", "part", "merge", "note"), SHARDED)
def test_plan_sharded(event, mode, is_fork, shard, expected, part, merge, note):
    from ci_eval.core.plan import plan_sharded

    plan = plan_sharded(event, mode, is_fork, "always", shard)
    assert (plan.evaluate, plan.find_baseline, plan.post_comment, plan.post_from_artifact,
            plan.carry_history, plan.refused) == expected
    assert (plan.shard_part, plan.merge_parts) == (part, merge)
    assert note in plan.note and "\n" not in plan.note


# Without GITHUB_WORKFLOW_REF: event, mode, is_fork, shard -> plan, a phrase of the note.
NO_WORKFLOW = [
    # A pull request could never be compared: refused before the retriever runs, never a
    # green check that compared nothing.
    ("pull_request", "run", False, "", REFUSED, "GitHub Actions sets it in every job"),
    ("pull_request", "run", True, "", REFUSED, "GitHub Actions sets it in every job"),
    ("pull_request", "merge", False, "", REFUSED, "GitHub Actions sets it in every job"),
    # A push still records its baseline; only the trend it carries starts over, said so.
    ("push", "run", False, "", EVALUATE_ONLY, "the trend starts over"),
    # Neither looks a baseline up: the workflow's name changes nothing.
    ("pull_request", "run", False, "2/8", EVALUATE_ONLY, "running shard 2/8"),
    ("schedule", "run", False, "", EVALUATE_ONLY, "only push runs become baselines"),
    ("pull_request_target", "run", False, "", REFUSED, "pull_request_target is refused"),
]


@pytest.mark.parametrize(("event", "mode", "is_fork", "shard", "expected", "note"), NO_WORKFLOW)
def test_plan_without_the_workflow_s_name(event, mode, is_fork, shard, expected, note):
    from ci_eval.core.plan import plan_sharded

    plan = plan_sharded(event, mode, is_fork, "always", shard, workflow_known=False)
    assert (plan.evaluate, plan.find_baseline, plan.post_comment, plan.post_from_artifact,
            plan.carry_history, plan.refused) == expected
    assert note in plan.note and "\n" not in plan.note
    assert plan.refused_by == ("GITHUB_WORKFLOW_REF" if "every job" in note else "GITHUB_EVENT_NAME")


# gate passed, run failure, lookup failure, fail_on_gate -> verdict, exit code
OUTCOMES = [
    (True, None, None, True, "pass", 0),
    (False, None, None, True, "fail", 1),
    (False, None, None, False, "fail", 0),  # the user asked a failed gate not to fail the job
    # A failed run is an error whatever the gate says or the user asked.
    (True, "the retriever failed on 1 question(s)", None, True, "error", 4),
    (True, "the retriever failed on 1 question(s)", None, False, "error", 4),
    (False, "the retriever failed on 1 question(s)", "GitHub failed", True, "error", 4),
    # GitHub failing the baseline lookup: never "pass" while the job exits 5.
    (True, None, "GitHub failed", True, "error", 5),
    (True, None, "GitHub failed", False, "error", 5),
    # A floor failed on the run alone: that is a fail, with or without a baseline.
    (False, None, "GitHub failed", True, "fail", 1),
]


@pytest.mark.parametrize(("passed", "run_failure", "lookup", "fail_on_gate", "verdict", "code"), OUTCOMES)
def test_decide_outcome(passed, run_failure, lookup, fail_on_gate, verdict, code):
    from ci_eval.core.plan import decide_outcome

    outcome = decide_outcome(passed, run_failure, lookup, fail_on_gate)
    assert (outcome.verdict, outcome.exit_code) == (verdict, code)
    # every failure that is not the gate's is said in the log
    assert (outcome.error is not None) == (verdict == "error")
