"""The GitHub Actions environment: inputs, the event payload, outputs, the job summary,
annotations. Everything that crosses into the runner's files or log is neutralised here:
output values cannot forge a delimiter, log lines cannot start a workflow command."""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from ci_eval.blas_threads import as_the_user_set
from ci_eval.core.sticky import COMMENT_MODES
from ci_eval.errors import InputError
from ci_eval.github.token_handover import SECRET_NAMES
from ci_eval.inputs.files import atomic_append, decode, parse_json, read_bytes

MODES = ("run", "comment", "merge")


@dataclass(frozen=True)
class ActionInputs:
    config: str
    token: str | None
    comment: str
    artifact_name: str
    mode: str
    out_dir: str
    fail_on_gate: bool
    author: str  # the login the sticky comment is posted as
    shard: str = ""  # "I/N": this job runs one part of a sharded run and uploads it
    cache: str = ""  # folder of the retrieval cache ("": none; the config's [retriever] cache is not kept)


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    # Actions upper-cases input names and keeps dashes: `artifact-name` -> INPUT_ARTIFACT-NAME.
    key = "INPUT_" + name.upper()
    value = env.get(key)
    if value is None:
        value = env.get(key.replace("-", "_"), default)
    return value.strip()


def read_inputs(env: Mapping[str, str], token: str | None = None) -> ActionInputs:
    """The action's inputs from ``env``; ``token``, when given, is the one handed over on a
    descriptor (github/token_handover.take_handed_token) and wins over any variable."""
    comment = _input(env, "comment", "always") or "always"
    if comment not in COMMENT_MODES:
        raise InputError(f"must be one of {', '.join(COMMENT_MODES)}, got {comment!r}", "input comment")
    mode = _input(env, "mode", "run") or "run"
    if mode not in MODES:
        raise InputError(f"must be one of {', '.join(MODES)}, got {mode!r}", "input mode")
    fail = (_input(env, "fail-on-gate", "true") or "true").lower()
    if fail not in ("true", "false"):
        raise InputError(f"must be true or false, got {fail!r}", "input fail-on-gate")
    name = _input(env, "artifact-name", "ci-eval") or "ci-eval"
    if not all(c.isalnum() or c in "-_." for c in name):
        raise InputError("may hold only letters, digits, '-', '_' and '.'", "input artifact-name")
    out_dir = _input(env, "out-dir") or os.path.join(env.get("RUNNER_TEMP", "."), "ci-eval")
    return ActionInputs(
        config=_input(env, "config", "ci-eval.toml") or "ci-eval.toml",
        token=token or _input(env, "github-token") or env.get("GITHUB_TOKEN") or None,
        comment=comment,
        artifact_name=name,
        mode=mode,
        out_dir=out_dir,
        fail_on_gate=fail == "true",
        author=_input(env, "comment-author", "github-actions[bot]") or "github-actions[bot]",
        shard=_input(env, "shard"),
        cache=_input(env, "cache"),
    )


# What a retriever, the user's code, never sees: the token in every spelling the runner
# and the action give it (SECRET_NAMES, github/token_handover.py), and the action's other inputs.


def is_secret(name: str) -> bool:
    return name.upper() in SECRET_NAMES or name.upper().startswith("INPUT_")


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for a process ci-eval starts (a retriever's): without the token and the
    ``INPUT_*`` values, and as the user set it (ci_eval/blas_threads.py)."""
    return {k: v for k, v in as_the_user_set(environ).items() if not is_secret(k)}


def withdraw_secrets(environ) -> None:
    """Take the token and the ``INPUT_*`` values out of ``environ`` (``os.environ`` at
    the action's entry point, after they were read): a python retriever runs in this
    process and must not find them there."""
    for name in [k for k in environ if is_secret(k)]:
        del environ[name]


def retry_backoff(env: Mapping[str, str]) -> float:
    """``CI_EVAL_RETRY_BACKOFF``: the first retry's wait in seconds (default 1)."""
    text = env.get("CI_EVAL_RETRY_BACKOFF", "").strip() or "1.0"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 600:  # NaN fails too
        raise InputError(f"must be a number of seconds from 0 to 600, got {text[:40]!r}",
                         "CI_EVAL_RETRY_BACKOFF")
    return value


def require(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if not value:
        raise InputError("is not set: ci-eval action runs inside a GitHub Actions job", name)
    return value


@dataclass(frozen=True)
class Event:
    name: str  # push | pull_request | workflow_run | ...
    repository: str  # owner/name of the repository the workflow runs in
    sha: str
    ref: str | None
    pr_number: int | None = None
    base_sha: str | None = None
    base_ref: str | None = None
    head_sha: str | None = None
    head_repo: str | None = None
    is_fork: bool = False
    run_id: int | None = None  # workflow_run: the run whose artefact is posted
    # workflow_run: the evaluating workflow's file (.github/workflows/ci-eval.yml), whose push
    # runs hold the baselines; the poster's own workflow holds none.
    workflow_path: str | None = None
    default_branch: str | None = None
    # pull_request: the PR's label names as the event reports them (core/compare/acceptance.py
    # ACCEPT_LABEL accepts every per-question loss)
    labels: tuple[str, ...] = ()


def _get(payload, *path):
    node = payload
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _label_names(raw) -> tuple[str, ...]:
    """The names of a pull request's labels (anything not shaped as GitHub sends it is no label)."""
    if not isinstance(raw, list):
        return ()
    return tuple(label["name"] for label in raw if isinstance(label, dict) and isinstance(label.get("name"), str))


def read_event(env: Mapping[str, str]) -> Event:
    name = require(env, "GITHUB_EVENT_NAME")
    repository = require(env, "GITHUB_REPOSITORY")
    path = require(env, "GITHUB_EVENT_PATH")
    payload = parse_json(decode(read_bytes(path, "event payload", 64 * 1024 * 1024), path), path)
    if not isinstance(payload, dict):
        raise InputError("the event payload is not a JSON object", path, "(top level)")
    event = {
        "name": name,
        "repository": repository,
        "sha": require(env, "GITHUB_SHA"),
        "ref": env.get("GITHUB_REF"),
        "default_branch": _get(payload, "repository", "default_branch"),
    }
    if name in ("pull_request", "pull_request_target"):
        pr = payload.get("pull_request")
        number = _get(pr, "number")
        base_sha = _get(pr, "base", "sha")
        for place, value, kind in (("pull_request.number", number, int), ("pull_request.base.sha", base_sha, str)):
            if not isinstance(value, kind) or isinstance(value, bool):
                raise InputError(
                    f"a {name} event needs {place} ({'a number' if kind is int else 'a string'})", path, place
                )
        head_repo = _get(pr, "head", "repo", "full_name")
        event.update(
            pr_number=number,
            base_sha=base_sha,
            base_ref=_get(pr, "base", "ref"),
            head_sha=_get(pr, "head", "sha"),
            head_repo=head_repo,
            # A deleted fork has no head repo: treat it as a fork, the safe side.
            is_fork=head_repo != repository,
            labels=_label_names(_get(pr, "labels")),
        )
    elif name == "workflow_run":
        run = payload.get("workflow_run")
        run_id = _get(run, "id")
        if not isinstance(run_id, int) or isinstance(run_id, bool):
            raise InputError("a workflow_run event needs workflow_run.id (a number)", path, "workflow_run.id")
        event.update(
            run_id=run_id,
            head_sha=_get(run, "head_sha"),
            head_repo=_get(run, "head_repository", "full_name"),
            workflow_path=_get(run, "path") if isinstance(_get(run, "path"), str) else None,
        )
    return Event(**event)


def write_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """Append ``name<<DELIM`` blocks to GITHUB_OUTPUT with a fresh random delimiter that the
    value provably does not contain, so a value cannot end its block early and set others."""
    if not path:
        return
    blocks = []
    for name, value in outputs.items():
        value = str(value)
        delimiter = f"ci_eval_{secrets.token_hex(16)}"
        while delimiter in value:
            delimiter = f"ci_eval_{secrets.token_hex(16)}"
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    atomic_append(path, "".join(blocks))


def append_summary(path: str | None, markdown: str) -> None:
    if path:
        atomic_append(path, markdown.rstrip("\n") + "\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, file: str | None = None, line: int | None = None, title: str | None = None) -> str:
    """A workflow command for an annotation, every user-controlled part escaped."""
    props = []
    if file:
        props.append(f"file={_escape_property(file)}")
    if line:
        props.append(f"line={int(line)}")
    if title:
        props.append(f"title={_escape_property(title)}")
    return f"::{level} {','.join(props)}::{_escape_data(message)}" if props else f"::{level}::{_escape_data(message)}"


# The runner reads the log as .NET's ReadLine does: "\r\n", "\r" and "\n" all end a line.
# It trims leading white space before looking for "::"; so does this pattern (blanks other
# than line ends: Python's set is wider than .NET's, which errs on the safe side).
_COMMAND_START = re.compile(r"(\A|\r\n|\r|\n)([^\S\r\n]*::)")


def safe_log(text: str) -> str:
    """A log line that cannot be read as a workflow command (``::set-output``, ``::stop-commands``):
    a zero-width space goes before any ``::`` that would start a line."""
    return _COMMAND_START.sub(lambda m: m.group(1) + "\u200b" + m.group(2), text)


def mask(secret: str | None) -> str | None:
    return f"::add-mask::{secret}" if secret else None


def find_question_lines(gold_text: str, question_ids: list[str]) -> dict[str, int]:
    """The line of each question's ``"id": "<qid>"`` in the gold file, for annotations."""
    wanted = {json.dumps(q): q for q in question_ids}
    found: dict[str, int] = {}
    for n, line in enumerate(gold_text.split("\n"), 1):
        if '"id"' not in line:
            continue
        for encoded, qid in wanted.items():
            if qid not in found and encoded in line:
                found[qid] = n
    return found
