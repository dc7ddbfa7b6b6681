"""What `ci-eval action` does for each event: one small table, tested as one table."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ci_eval.errors import EXIT_GATE_FAILED, EXIT_GITHUB_FAILED, EXIT_OK, EXIT_RETRIEVER_FAILED


@dataclass(frozen=True)
class ActionPlan:
    evaluate: bool  # run the retriever and write the artefact
    find_baseline: bool  # look up the base commit's stored artefact and compare with it
    post_comment: bool  # upsert the sticky comment from this job
    post_from_artifact: bool  # the workflow_run poster: comment from another run's artifact
    note: str  # one sentence for the log and the job summary
    # push: carry the branch's previous artefact's history forward (the comment's trend)
    carry_history: bool = False
    refused: bool = False  # a setup ci-eval will not run in: exit 2 with the note
    shard_part: bool = False  # run one shard and write its part; nothing else (a matrix job)
    merge_parts: bool = False  # the head is this run's uploaded parts, merged, not a new run
    refused_by: str = "GITHUB_EVENT_NAME"  # what a refusal's message names as its place


# Why a pull request is refused without the workflow's name (docs/reliability.md): its
# baseline is a push run of the same workflow, and without the name no baseline can be looked
# for, so the relative rules could never run: a green check that compared nothing.
NO_WORKFLOW = ("is not set, so the workflow whose push runs hold the baseline is unknown and this "
               "pull request cannot be compared; GitHub Actions sets it in every job (a runner "
               "or GitHub Enterprise Server too old to set it: add GITHUB_WORKFLOW_REF: "
               "${{ github.workflow_ref }} to the step's env); outside GitHub Actions use "
               "`ci-eval run` and `ci-eval compare` (docs/other-ci.md)")


def plan_action(event_name: str, mode: str, is_fork: bool, comment: str,
                workflow_known: bool = True) -> ActionPlan:
    """What the job does; ``workflow_known``: GITHUB_WORKFLOW_REF names the workflow whose
    push runs hold the baselines."""
    plan = _plan_event(event_name, mode, is_fork, comment)
    if workflow_known or plan.refused:
        return plan
    if plan.find_baseline:
        return ActionPlan(False, False, False, False, NO_WORKFLOW, refused=True, refused_by="GITHUB_WORKFLOW_REF")
    if plan.carry_history:
        return replace(plan, carry_history=False,
                       note=f"{plan.note} (GITHUB_WORKFLOW_REF is not set: the branch's earlier runs are "
                            "not looked up, so the trend starts over)")
    return plan


def _plan_event(event_name: str, mode: str, is_fork: bool, comment: str) -> ActionPlan:
    if mode == "comment":
        if event_name != "workflow_run":
            # A green check that did nothing is how a misconfiguration hides: refuse it.
            return ActionPlan(False, False, False, False,
                              f"mode 'comment' runs on workflow_run events, not {event_name}",
                              refused=True)
        return ActionPlan(False, False, False, comment != "off",
                          "posting the comment of the pull request run that triggered this workflow")
    if event_name == "pull_request_target":
        # Running a PR's code with the base repository's token is how secrets leak.
        return ActionPlan(False, False, False, False,
                          "pull_request_target is refused: use pull_request plus a workflow_run poster",
                          refused=True)
    if event_name == "pull_request":
        if is_fork:
            return ActionPlan(True, True, False, False,
                              "fork pull request: the token is read-only, so the comment is uploaded "
                              "with the artefact for the workflow_run poster to post")
        return ActionPlan(True, True, comment != "off", False, "pull request: compare with the base commit")
    if event_name == "workflow_run":
        return ActionPlan(False, False, False, False,
                          "a workflow_run event needs mode: comment (the poster of fork comments)",
                          refused=True)
    if event_name == "push":
        return ActionPlan(True, False, False, False, "push: recording a baseline run for later pull requests",
                          carry_history=True)
    # schedule, workflow_dispatch: pull requests compare only with push runs.
    return ActionPlan(True, False, False, False,
                      f"{event_name}: evaluating; only push runs become baselines for pull requests")


def plan_sharded(event_name: str, mode: str, is_fork: bool, comment: str, shard: str,
                 workflow_known: bool = True) -> ActionPlan:
    """``plan_action`` for the sharded setup: a matrix job with a ``shard`` input writes one
    part and stops; the ``mode: merge`` job that needs the matrix then does what ``mode: run``
    does with the merged parts as its head. Refusals are plan_action's, on every event."""
    if shard and mode != "run":
        return ActionPlan(False, False, False, False,
                          f"the shard input belongs to the matrix jobs (mode: run), not mode {mode!r}",
                          refused=True)
    # A matrix job looks no baseline up: it needs no workflow name.
    plan = plan_action(event_name, mode, is_fork, comment, workflow_known or bool(shard))
    if plan.refused:
        return plan
    if shard:
        return ActionPlan(True, False, False, False,
                          f"running shard {shard}: the part is uploaded for the merge job", shard_part=True)
    if mode == "merge":
        return replace(plan, merge_parts=True, note=f"merging this run's parts; {plan.note}")
    return plan


@dataclass(frozen=True)
class Outcome:
    """What a job that compared says, decided once so its parts cannot disagree: the
    ``verdict`` output (pass | fail | error), the exit code, and the error line for the log
    when the job fails for something other than the gate."""

    verdict: str
    exit_code: int
    error: str | None = None


def decide_outcome(gate_passed: bool, run_failure: str | None, lookup_failure: str | None,
                   fail_on_gate: bool) -> Outcome:
    """The job's outcome: a run that failed (core/artefact/run_failure.py) first, then a gate
    that failed, then a baseline GitHub failed to give (the comparison the gate promised did
    not happen: never "pass", whatever the floors say), else pass. ``fail_on_gate`` false
    keeps a failed gate's verdict but exits 0; it never turns an error green."""
    if run_failure:
        return Outcome("error", EXIT_RETRIEVER_FAILED, run_failure)
    if not gate_passed:
        return Outcome("fail", EXIT_GATE_FAILED if fail_on_gate else EXIT_OK)
    if lookup_failure:
        return Outcome("error", EXIT_GITHUB_FAILED, lookup_failure)
    return Outcome("pass", EXIT_OK)
