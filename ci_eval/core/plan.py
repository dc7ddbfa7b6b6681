"""What `ci-eval action` does for each event: one small table, tested as one table."""

from __future__ import annotations

from dataclasses import dataclass, replace


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


def plan_action(event_name: str, mode: str, is_fork: bool, comment: str) -> ActionPlan:
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


def plan_sharded(event_name: str, mode: str, is_fork: bool, comment: str, shard: str) -> ActionPlan:
    """``plan_action`` for the sharded setup: a matrix job with a ``shard`` input writes one
    part and stops; the ``mode: merge`` job that needs the matrix then does what ``mode: run``
    does with the merged parts as its head. Refusals are plan_action's, on every event."""
    if shard and mode != "run":
        return ActionPlan(False, False, False, False,
                          f"the shard input belongs to the matrix jobs (mode: run), not mode {mode!r}",
                          refused=True)
    plan = plan_action(event_name, mode, is_fork, comment)
    if plan.refused:
        return plan
    if shard:
        return ActionPlan(True, False, False, False,
                          f"running shard {shard}: the part is uploaded for the merge job", shard_part=True)
    if mode == "merge":
        return replace(plan, merge_parts=True, note=f"merging this run's parts; {plan.note}")
    return plan
