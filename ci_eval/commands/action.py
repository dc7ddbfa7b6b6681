"""`ci-eval action`: what the GitHub Action runs. Reads INPUT_* and the GITHUB_* environment."""

from __future__ import annotations

HELP = """Run inside a GitHub Actions job (action.yml calls it). Reads its inputs from INPUT_*
variables and the event from GITHUB_EVENT_NAME / GITHUB_EVENT_PATH:

  push          evaluate and write the artefact: a baseline for later pull requests,
                carrying the branch's previous artefact's history forward (the trend)
  pull_request  evaluate, compare with the artefact of the PR's base commit (or the
                nearest older one, said so), upsert one sticky comment, write the job
                summary and outputs, annotate stale gold ids, then exit 1 if the gate fails
  workflow_run  with INPUT_MODE=comment: post the comment of a fork's pull-request run
  INPUT_SHARD=I/N    a matrix job: run shard I of N and write the part for the merge job
  INPUT_MODE=merge   the job that needs the matrix: merge this run's parts (artifacts
                named <artifact-name>-part-I-of-N), then compare, comment and gate as run does
  pull_request_target is refused (exit 2): it runs the PR's code with a write token

example (the token on a descriptor, as action/run.sh passes it, never in the environment
that the retriever's processes could read):
  CI_EVAL_TOKEN_FD=3 INPUT_CONFIG=ci-eval.toml ci-eval action 3<<<"$GITHUB_TOKEN"
Started with the token in its environment instead (INPUT_GITHUB-TOKEN, GITHUB_TOKEN; a run
by hand), it starts itself again without it, the token on a descriptor, before anything runs.
exit codes: 0 ok; 1 gate failed; 2 bad input; 4 the retriever failed; 5 GitHub failed."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("action", help="run as the GitHub Action (reads INPUT_* and GITHUB_*)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=run)


def run(args) -> int:
    import os
    import sys

    from ci_eval.github.token_handover import exec_without_token, take_handed_token

    # Started with the token in its environment (a run by hand, a job-level GITHUB_TOKEN):
    # this process starts again without it before anything else, so no child of it can read
    # the token back from /proc/<this pid>/environ.
    exec_without_token([sys.executable, *sys.orig_argv[1:]], os.environ)

    from ci_eval.core.plan import plan_sharded
    from ci_eval.errors import InputError
    from ci_eval.github.env import (
        mask,
        read_event,
        read_inputs,
        require,
        retry_backoff,
        withdraw_secrets,
    )
    from ci_eval.github.job import log
    from ci_eval.github.shard_steps import part_mode
    from ci_eval.github.steps import comment_mode, run_mode, workflow_file
    from ci_eval.inputs.files import check_writable

    env = dict(os.environ)
    inputs = read_inputs(env, take_handed_token(env))
    withdraw_secrets(os.environ)  # the retriever is the user's code: it gets no token
    if inputs.token:
        # Before anything else is logged: the runner then hides the token in every line.
        print(mask(inputs.token), flush=True)
    event = read_event(env)
    plan = plan_sharded(event.name, inputs.mode, event.is_fork, inputs.comment, inputs.shard,
                        workflow_known=workflow_file(env.get("GITHUB_WORKFLOW_REF")) is not None)
    if plan.refused:
        raise InputError(plan.note, plan.refused_by)
    backoff = retry_backoff(env)
    if plan.evaluate:  # before the retriever runs, not after
        check_writable(os.path.join(inputs.out_dir, "ci-eval-run.json"))
    log(f"ci-eval: {plan.note}")

    def port_factory():
        # The one GitHub client of the run, built here and passed in.
        from ci_eval.github.api import PyGithubPort, build_client

        client = build_client(require(env, "GITHUB_API_URL"), inputs.token or "", retry_backoff=backoff,
                              pace_requests=False)
        return PyGithubPort(client, event.repository)

    if plan.post_from_artifact:
        return comment_mode(inputs, event, env, port_factory())
    if plan.shard_part:
        return part_mode(inputs, event, env)
    if not plan.evaluate:
        return 0
    return run_mode(inputs, event, env, port_factory, plan)
