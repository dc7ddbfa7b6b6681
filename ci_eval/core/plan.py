"""What `ci-eval action` does for each event: one small table, tested as one table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ActionPlan:
    evaluate: bool  # run the retriever and write the artefact
    find_baseline: bool  # look up the base commit's stored artefact
    post_comment: bool  # upsert the sticky comment from this job
    post_from_artifact: bool  # the workflow_run poster: comment from another run's artifact
    note: str  # one sentence for the log and the job summary


def plan_action(event_name: str, mode: str, is_fork: bool, comment: str) -> ActionPlan:
    if mode == "comment":
        if event_name != "workflow_run":
            return ActionPlan(False, False, False, False,
                              f"mode 'comment' runs on workflow_run events, not {event_name}: nothing to do")
        return ActionPlan(False, False, False, comment != "off",
                          "posting the comment of the pull request run that triggered this workflow")
    if event_name == "pull_request_target":
        # Running a PR's code with the base repository's token is how secrets leak.
        return ActionPlan(False, False, False, False,
                          "pull_request_target is refused: use pull_request plus a workflow_run poster")
    if event_name == "pull_request":
        if is_fork:
            return ActionPlan(True, True, False, False,
                              "fork pull request: the token is read-only, so the comment is uploaded "
                              "with the artefact for the workflow_run poster to post")
        return ActionPlan(True, True, comment != "off", False, "pull request: compare with the base commit")
    if event_name == "workflow_run":
        return ActionPlan(False, False, False, False,
                          "workflow_run event in mode 'run': set mode: comment to post comments")
    # push, schedule, workflow_dispatch: record a baseline for later pull requests.
    return ActionPlan(True, False, False, False, f"{event_name}: recording a baseline run")
