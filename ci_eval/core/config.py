"""The one validated configuration object."""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field
from typing import Any

from ci_eval.core.validate import problems_or_none
from ci_eval.errors import InputError, InputErrors

_RUNNER_NEEDS = {"python": "target", "command": "command", "run-file": "path",
                 "langchain": "target", "llamaindex": "target", "haystack": "target"}
# Where each framework's results carry the chunk id unless retriever.id_from says otherwise.
_DEFAULT_ID_FROM = {"langchain": "id", "llamaindex": "node_id", "haystack": "id"}
_TARGET_TYPES = ("python", *_DEFAULT_ID_FROM)


@dataclass(frozen=True)
class RetrieverConfig:
    type: str
    target: str | None = None
    batch: bool = False
    command: tuple[str, ...] = ()
    path: str | None = None
    format: str = "trec"
    depth: int = 15
    concurrency: int = 4
    timeout: float = 30.0
    total_timeout: float | None = None
    params: dict = field(default_factory=dict, hash=False)
    env: dict = field(default_factory=dict, hash=False)
    id_from: str | None = None  # python: None means the callable returns (id, score) pairs
    score: str = "similarity"  # or "distance": negated before ranking
    cache: str | None = None  # folder of the retrieval cache; not part of the recorded config


@dataclass(frozen=True)
class Config:
    source: str
    gold_set: str  # resolved against the config file's folder
    k: int
    metrics: tuple[str, ...]
    relevance_level: int
    abstain_below: float | None
    answers: str | None
    retriever: RetrieverConfig
    manifest: str | None
    manifest_callable: str | None
    index_version: str | None
    gate: dict = field(default_factory=dict, hash=False)
    report: dict = field(default_factory=dict, hash=False)
    raw: dict = field(default_factory=dict, hash=False, compare=False)

    def as_recorded(self) -> dict:
        """The resolved config as the artefact stores it (what the config diff compares)."""
        r = self.retriever
        retriever = {"type": r.type, "depth": r.depth, "params": r.params}
        if r.type == "python":
            retriever.update(target=r.target, batch=r.batch)
            # Recorded only when set, so artefacts from before these keys compare equal.
            if r.id_from is not None or r.score != "similarity":
                retriever.update(id_from=r.id_from, score=r.score)
        elif r.type in _DEFAULT_ID_FROM:
            retriever.update(target=r.target, id_from=r.id_from, score=r.score)
        elif r.type == "command":
            retriever.update(command=list(r.command))
        else:
            retriever.update(path=self.raw.get("retriever", {}).get("path"), format=r.format)
            if r.format == "openinference":
                retriever.update(id_from=r.id_from or "id", score=r.score)
        return {
            "k": self.k,
            "metrics": list(self.metrics),
            "relevance_level": self.relevance_level,
            "abstain_below": self.abstain_below,
            "retriever": retriever,
            "gate": self.gate,
            "index": {k: v for k, v in self.raw.get("index", {}).items()},
            "report": self.report,
        }


def _resolve(base_dir: str, path: str) -> str:
    return path if posixpath.isabs(path) or base_dir in ("", ".") else posixpath.join(base_dir, path)


def _non_finite(data: Any, source: str, prefix: tuple) -> list[InputError]:
    """TOML has ``nan`` and ``inf``; no cutoff, floor or timeout means anything with them, and
    the artefact (strict JSON) could not record them."""
    from ci_eval.core.validate import json_path

    problems = []
    stack: list[tuple[tuple, Any]] = [(tuple(prefix), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            problems.append(InputError(f"expected a finite number, got {node!r}", source, json_path(path)))
        elif isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
    return sorted(problems, key=lambda p: p.place or "")


def _misplaced_keys(retriever: dict, source: str, place: str) -> list[InputError]:
    """``id_from`` and ``score`` read objects a callable returns: meaningless for a command
    or a run file, and silently ignoring them would hide the mistake."""
    if retriever["type"] in _TARGET_TYPES or (retriever["type"] == "run-file" and retriever.get("format") == "openinference"):
        return []
    return [InputError(f'"{key}" applies to retriever types {", ".join(_TARGET_TYPES)} and to run-file with '
                       'format "openinference"', source, f"{place}.{key}") for key in ("id_from", "score") if key in retriever]


def parse_config(data: Any, source: str, base_dir: str = "", prefix: tuple = ()) -> Config:
    """Validate a parsed config table and build a Config. ``prefix`` names where the table
    sits in its file (``("tool", "ci-eval")`` for pyproject.toml) so paths point at it."""
    from ci_eval.core.metrics import default_metrics, resolve_metric
    from ci_eval.schemas import load

    problems = problems_or_none(data, load("config"), source, prefix)
    if isinstance(data, dict):
        here = ".".join(prefix)
        retriever = data.get("retriever")
        if isinstance(retriever, dict) and isinstance(retriever.get("type"), str) and retriever["type"] in _RUNNER_NEEDS:
            needed = _RUNNER_NEEDS[retriever["type"]]
            if needed not in retriever:
                problems.append(
                    InputError(
                        f'retriever type "{retriever["type"]}" needs "{needed}"',
                        source,
                        f"{here + '.' if here else ''}retriever",
                    )
                )
            problems += _misplaced_keys(retriever, source, f"{here + '.' if here else ''}retriever")
        problems += _non_finite(data, source, prefix)
        metric_names = []
        metrics = data.get("metrics")
        for i, name in enumerate(metrics if isinstance(metrics, list) else []):
            metric_names.append((f"metrics[{i}]", name))
        gate = data.get("gate") if isinstance(data.get("gate"), dict) else {}
        for rule in ("min", "max_drop"):
            if isinstance(gate.get(rule), dict):
                metric_names += [(f"gate.{rule}.{m}", m) for m in gate[rule]]
        if isinstance(gate.get("tag_min"), dict):
            for tag, table in gate["tag_min"].items():
                if isinstance(table, dict):
                    metric_names += [(f"gate.tag_min.{tag}.{m}", m) for m in table]
        for place, name in metric_names:
            if not isinstance(name, str):
                continue
            try:
                resolve_metric(name)
            except InputError as exc:
                problems.append(InputError(exc.message, source, ".".join([*prefix, place])))
    if problems:
        raise InputErrors(problems)

    k = data["k"]
    metrics = tuple(dict.fromkeys(resolve_metric(m).name for m in data.get("metrics") or default_metrics(k)))
    # The diff reads hits at k and 3k per question whatever the user chose to average.
    metrics += tuple(m for m in (f"hit@{k}", f"hit@{3 * k}") if m not in metrics)
    r = data["retriever"]
    retriever = RetrieverConfig(
        type=r["type"],
        target=r.get("target"),
        batch=r.get("batch", False),
        command=tuple(r.get("command", ())),
        path=_resolve(base_dir, r["path"]) if "path" in r else None,
        format=r.get("format", "jsonl" if str(r.get("path", "")).endswith(".jsonl") else "trec"),
        depth=max(r.get("depth", 3 * k), 3 * k),
        concurrency=r.get("concurrency", 4),
        timeout=float(r.get("timeout", 30.0)),
        total_timeout=float(r["total_timeout"]) if "total_timeout" in r else None,
        params=dict(r.get("params", {})),
        env=dict(r.get("env", {})),
        id_from=r.get("id_from", _DEFAULT_ID_FROM.get(r["type"])),
        score=r.get("score", "similarity"),
        cache=_resolve(base_dir, r["cache"]) if "cache" in r else None,
    )
    index = data.get("index", {})
    gate = dict(data.get("gate", {}))
    # Canonical metric names in the gate, so "success_5" and "hit@5" are the same rule.
    for rule in ("min", "max_drop"):
        if rule in gate:
            gate[rule] = {resolve_metric(m).name: v for m, v in gate[rule].items()}
    if "tag_min" in gate:
        gate["tag_min"] = {
            t: {resolve_metric(m).name: v for m, v in table.items()} for t, table in gate["tag_min"].items()
        }
    return Config(
        source=source,
        gold_set=_resolve(base_dir, data["gold_set"]),
        k=k,
        metrics=metrics,
        relevance_level=data.get("relevance_level", 1),
        abstain_below=data.get("abstain_below"),
        answers=_resolve(base_dir, data["answers"]) if "answers" in data else None,
        retriever=retriever,
        manifest=_resolve(base_dir, index["manifest"]) if "manifest" in index else None,
        manifest_callable=index.get("callable"),
        index_version=index.get("version"),
        gate=gate,
        report=dict(data.get("report", {})),
        raw=data,
    )
