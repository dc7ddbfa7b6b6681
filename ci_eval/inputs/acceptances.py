"""The acceptance file `ci-eval accept` writes and the gate reads (core/compare/acceptance.py):
read when it exists, refused with its place when it is not that shape, written whole."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ci_eval.core.compare.acceptance import Acceptance, Accepted, acceptances_toml, parse_acceptances


def read_acceptances(path: str | os.PathLike | None, label: str | None = None) -> Accepted:
    """The committed acceptances at ``path`` (none when the file does not exist, or no path)
    and the PR's label when it carries the accept label."""
    from ci_eval.inputs.files import read_toml

    if path is None or not os.path.isfile(path):
        return Accepted((), str(path or ""), label)
    return Accepted(parse_acceptances(read_toml(path, "acceptance file"), str(path)), str(path), label)


def write_acceptances(path: str | os.PathLike, entries: tuple[Acceptance, ...]) -> None:
    from ci_eval.inputs.files import atomic_write

    atomic_write(path, acceptances_toml(entries))


@dataclass(frozen=True)
class AcceptRequest:
    questions: tuple[str, ...]
    every: bool
    reason: str
    base: str | None
    head: str | None
    losses: tuple[tuple[str, str, str, str], ...]
    file: str | None
    config: str | None


def _where(request: AcceptRequest):
    """The acceptance file and the gate policy (whose max_rank_drop says which falls count)."""
    from ci_eval.core.compare.gate_policy import GatePolicy
    from ci_eval.errors import UsageError
    from ci_eval.inputs.loaders import discover_config, load_config

    path = request.config or discover_config(".")
    config = load_config(path) if path is not None else None
    policy = GatePolicy.from_mapping(config.gate_rules if config is not None else None)
    if request.file:
        return request.file, policy
    if config is None:
        raise UsageError("no ci-eval.toml (or [tool.ci-eval] in pyproject.toml) here or above "
                         "to say where the acceptance file is: give --file")
    return config.accepted_path, policy


def _compared_losses(request: AcceptRequest, policy) -> list:
    from ci_eval.core.compare.acceptance import fell_by_more, lost_at_k
    from ci_eval.core.compare.diff import diff
    from ci_eval.errors import UsageError
    from ci_eval.inputs.paired_read import read_pair

    if not (request.base and request.head):
        raise UsageError("question ids and --all need the comparison: give --base and --head "
                         "(the two run artefacts), or spell each loss out with --loss")
    base, head = read_pair(request.base, request.head)
    d = diff(base, head)
    if d.no_comparison:
        raise UsageError(f"no comparison possible: {d.no_comparison}")
    losses = lost_at_k(d)
    if policy.max_rank_drop is not None:
        seen = {x.question for x in losses}
        losses += [x for x in fell_by_more(d, policy.max_rank_drop) if x.question not in seen]
    return losses


def accept(request: AcceptRequest) -> str:
    """Write the acceptances ``request`` asks for into the acceptance file (merged with what
    it holds); returns what was written, in a few lines."""
    from ci_eval.core.compare.acceptance import MAX_REASON, chosen, given_loss, merge_acceptances
    from ci_eval.errors import UsageError

    reason = " ".join(request.reason.split())
    if not reason:
        raise UsageError("--reason must say why these losses are intended")
    if len(reason) > MAX_REASON:
        raise UsageError(f"--reason is {len(reason)} characters, over the {MAX_REASON} allowed")
    if request.every and request.questions:
        raise UsageError("give question ids or --all, not both")
    if request.losses and (request.every or request.questions):
        raise UsageError("give --loss entries, or question ids / --all with --base and --head, not both")
    if not (request.losses or request.every or request.questions):
        raise UsageError("name the losses to accept: question ids, --all, or --loss (see 'ci-eval accept --help')")
    path, policy = _where(request)
    if request.losses:
        given = [given_loss(list(x)) for x in request.losses]
        new = chosen(given, [x.question for x in given], False, reason)
    else:
        new = chosen(_compared_losses(request, policy), request.questions, request.every, reason)
    if not new:
        raise UsageError("this comparison lost no question: nothing to accept")
    old = read_acceptances(path).entries
    write_acceptances(path, merge_acceptances(old, new))
    lines = [f"accepted {len(new)} loss{'es' if len(new) != 1 else ''} in {path}:"]
    lines += [f"  {a.question}: {a.chunk} rank {a.base_rank} -> {a.head_rank if a.head_rank is not None else 'gone'}"
              for a in new]
    lines.append("commit it with the pull request: its diff is the review")
    return "\n".join(lines)
