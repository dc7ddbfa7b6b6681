"""The one validated configuration object.

``parse_config`` checks a parsed config table section by section and reports every problem
at once, each at its place: the schema, then what the schema cannot say (a TOML date in
``params``, ``depth = 7.0``, a gate rule on a metric that is not measured, a floor of 60
meant as 60 %). ``gold_problems`` checks what needs the gold set too (protected ids, tags).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import math
import posixpath
from dataclasses import dataclass, field
from typing import Any

from ci_eval.core.answers import AnswersSpec
from ci_eval.core.validate import json_path, problems_or_none
from ci_eval.errors import InputError, InputErrors

_RUNNER_NEEDS = {"python": "target", "command": "command", "run-file": "path",
                 "langchain": "target", "llamaindex": "target", "haystack": "target"}
# Where each framework's results carry the chunk id unless retriever.id_from says otherwise.
_DEFAULT_ID_FROM = {"langchain": "id", "llamaindex": "node_id", "haystack": "id"}
_TARGET_TYPES = ("python", *_DEFAULT_ID_FROM)
# Places that take a whole number: TOML's 7.0 is a float there, whatever JSON Schema says.
_WHOLE_NUMBERS = (("k",), ("relevance_level",), ("retriever", "depth"), ("retriever", "concurrency"),
                  ("gate", "max_new_misses"), ("gate", "max_stale"), ("gate", "max_rank_drop"),
                  ("gate", "max_missed_wrong"))
# Every metric ci-eval computes is a share in [0, 1]; so are floors and allowed drops.
_SHARE_RULES = ("min", "max_drop")
# The acceptance file's place unless [gate] accepted names another: beside the gold set
ACCEPTED_FILE = "accepted.toml"


@dataclass(frozen=True)
class RetrieverConfig:
    type: str
    target: str | None = None
    batch: bool = False
    command: tuple[str, ...] = ()
    path: str | None = None
    format: str = "trec"
    # How many results the retriever is asked for: at least 3k (the default), so the
    # artefact can tell "just past k" from "gone". python gets it as its second argument,
    # command as the "k" field of each request line.
    depth: int = 15
    concurrency: int = 4
    timeout: float = 30.0
    total_timeout: float | None = None
    params: dict = field(default_factory=dict, hash=False)
    env: dict = field(default_factory=dict, hash=False)
    id_from: str | None = None  # python: None means the callable returns (id, score) pairs
    score: str = "similarity"  # or "distance": negated before ranking
    cache: str | None = None  # folder of the retrieval cache; not part of the recorded config
    # python: module:function called once, with the params, before the first question and
    # outside its timeout (an index built lazily would time every first question out)
    warmup: str | None = None


@dataclass(frozen=True)
class Config:
    source: str
    gold_set: str  # resolved against the config file's folder
    k: int
    metrics: tuple[str, ...]
    relevance_level: int
    abstain_below: float | None
    answers: AnswersSpec | None  # the end-to-end verdicts' source (core/answers.py)
    retriever: RetrieverConfig
    manifest: str | None
    manifest_callable: str | None
    index_version: str | None
    gate: dict = field(default_factory=dict, hash=False)
    report: dict = field(default_factory=dict, hash=False)
    raw: dict = field(default_factory=dict, hash=False, compare=False)
    # The config file's folder: relative paths, the python import path and the command's
    # working folder all resolve against it, whatever the current folder is.
    base_dir: str = ""
    prefix: tuple = ()  # where the table sits in its file: ("tool", "ci-eval") in pyproject.toml
    # The pipeline's stages in order, the final list placed (core/measure/stages.py); () without [[stages]]
    stages: tuple = ()
    calls_budget: int | None = None  # [calls] budget: chunks sent over all calls (stages.found_at)
    # [index] params: index.callable's keyword arguments; they reach a python or command
    # retriever too (merged into retriever.params), so one value cuts the index and searches it
    index_params: dict = field(default_factory=dict, hash=False)
    label: str | None = None  # the configuration's name in a sweep's table

    @property
    def gate_rules(self) -> dict | None:
        """The ``[gate]`` table, or None when the config has none (the default gate applies:
        core/compare/gate_policy.py's DEFAULT_GATE)."""
        return self.gate if "gate" in self.raw else None

    @property
    def accepted_path(self) -> str:
        """The acceptance file (`ci-eval accept`): ``[gate] accepted``, resolved against the
        config's folder, else ``accepted.toml`` beside the gold set."""
        named = self.gate.get("accepted")
        if isinstance(named, str) and named:
            return _resolve(self.base_dir, named)
        return posixpath.join(posixpath.dirname(self.gold_set), ACCEPTED_FILE)

    @property
    def gold_set_as_written(self) -> str | None:
        """``gold_set`` as the file spells it (the artefact records this, not the resolved path)."""
        return self.raw.get("gold_set")

    def as_recorded(self) -> dict:
        """The resolved config as the artefact stores it (what the config diff compares)."""
        r = self.retriever
        retriever = {"type": r.type, "depth": r.depth, "params": r.params}
        if r.type == "python":
            retriever.update(target=r.target, batch=r.batch)
            if r.warmup is not None:  # recorded only when set, so older artefacts compare equal
                retriever.update(warmup=r.warmup)
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
        # Recorded only when set, so artefacts from before these keys compare equal.
        staged = {"stages": [spec.as_recorded() for spec in self.stages]} if self.stages else {}
        if self.answers is not None:
            staged["answers"] = self.answers.as_recorded()
        if self.calls_budget is not None:
            staged["calls"] = {"budget": self.calls_budget}
        return {
            **staged,
            "k": self.k,
            "metrics": list(self.metrics),
            "relevance_level": self.relevance_level,
            "abstain_below": self.abstain_below,
            "retriever": retriever,
            "gate": self.gate,
            "index": {k: v for k, v in self.raw.get("index", {}).items()},
            "report": self.report,
        }


def did_you_mean(word: str, options) -> str:
    """`` (did you mean 'x'?)`` when one option is close to ``word``, else ``""``."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _resolve(base_dir: str, path: str) -> str:
    return path if posixpath.isabs(path) or base_dir in ("", ".") else posixpath.join(base_dir, path)


class _Problems(list):
    """InputErrors of one config, each placed under the table's prefix in its file."""

    def __init__(self, source: str, prefix: tuple):
        super().__init__()
        self.source, self.prefix = source, tuple(prefix)

    def add(self, place, message: str) -> None:
        parts = place if isinstance(place, tuple) else (place,)
        self.append(InputError(message, self.source, json_path([*self.prefix, *parts])))


def _table(data: dict, *path) -> dict:
    for part in path:
        if isinstance(part, int):  # an entry of an array of tables ([[stages]])
            data = data[part] if isinstance(data, list) and part < len(data) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _schema_problems(data: Any, out: _Problems) -> None:
    """The schema's problems, with a "did you mean" for unknown keys."""
    from ci_eval.schemas import load

    schema = load("config")
    for p in problems_or_none(data, schema, out.source, out.prefix):
        if not p.message.startswith("unknown key"):
            out.append(p)
    # Unknown keys are reported here instead, each on its own with the nearest known key.
    stages = data.get("stages") if isinstance(data, dict) else None
    items = [("stages", i) for i in range(len(stages))] if isinstance(stages, list) else []
    answers = [("answers",)] if isinstance(data, dict) and isinstance(data.get("answers"), dict) else []
    for section in ((), ("retriever",), ("index",), ("gate",), ("report",), ("calls",), *answers, *items):
        sub_schema = schema
        for part in section:
            sub_schema = sub_schema["items"] if isinstance(part, int) else sub_schema["properties"][part]
        table = _table(data, *section) if section else (data if isinstance(data, dict) else {})
        allowed = sorted(sub_schema["properties"])
        for key in table:
            if key not in sub_schema["properties"]:
                out.add(section, f"unknown key {key!r}{did_you_mean(key, allowed)} "
                                 f"(allowed: {', '.join(allowed)})")


def _value_problems(data: Any, out: _Problems) -> None:
    """What TOML can write and the schema lets through: nan/inf, dates and times (in
    ``params`` they would crash the artefact after the whole retrieval), and whole-number
    settings written as floats."""
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            out.add(path, f"expected a finite number, got {node!r}")
        elif isinstance(node, (_dt.date, _dt.time)) and path[:2] == ("retriever", "params"):
            # Elsewhere every value is typed and the schema already said "got date".
            out.add(path, f"a TOML date/time ({node.isoformat()}) cannot be passed to the retriever "
                          f'or recorded in the artefact; quote it: "{node.isoformat()}"')
        elif isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
    for path in _WHOLE_NUMBERS:
        value = _table(data, *path[:-1]).get(path[-1]) if isinstance(data, dict) else None
        # 7.5 the schema reports; 7.0 it takes for a whole number, and slicing by it crashes.
        if isinstance(value, float) and value.is_integer():
            out.add(path, f"expected a whole number, got {value!r} (write {int(value)})")


def _retriever_problems(data: dict, out: _Problems) -> None:
    retriever = _table(data, "retriever")
    kind = retriever.get("type")
    if isinstance(kind, str) and kind in _RUNNER_NEEDS and _RUNNER_NEEDS[kind] not in retriever:
        out.add("retriever", f'retriever type "{kind}" needs "{_RUNNER_NEEDS[kind]}"')
    # id_from and score read objects a callable returns: meaningless for a command or a plain
    # run file, and silently ignoring them would hide the mistake.
    takes_them = kind in _TARGET_TYPES or (kind == "run-file" and retriever.get("format") == "openinference")
    if "warmup" in retriever and kind != "python":
        out.add(("retriever", "warmup"), '"warmup" applies to the python retriever type')
    for key in ("id_from", "score"):
        if key in retriever and not takes_them:
            out.add(("retriever", key), f'"{key}" applies to retriever types {", ".join(_TARGET_TYPES)} and to '
                                        'run-file with format "openinference"')


def _index_problems(data: dict, out: _Problems) -> None:
    """``[index] params`` go to index.callable (a manifest file takes none); a name set in
    both params tables would reach the retriever with one of its two values silently lost."""
    index = _table(data, "index")
    params = index.get("params")
    if not isinstance(params, dict):
        return
    if params and "callable" not in index:
        out.add(("index", "params"), "params are passed to index.callable, which is not set "
                                     "(a manifest file takes none; put the retriever's in [retriever] params)")
    own = _table(data, "retriever", "params")
    for name in params:
        if name in own:
            out.add(("retriever", "params", name), f"{name!r} is set in [index] params too, which reach the "
                                                   "retriever as well: set it once, there")
    kind = _table(data, "retriever").get("type")
    if params and isinstance(kind, str) and kind not in _TAKES_INDEX_PARAMS and kind in _RUNNER_NEEDS:
        out.add(("index", "params"), f"a {kind} retriever is built before ci-eval runs it, so index params "
                                     f"cannot change how it searches; they reach python and command retrievers")


def _gate_tables(data: dict):
    """(place, metric name, value) for every metric the gate names."""
    gate = _table(data, "gate")
    for rule in _SHARE_RULES:
        for name, value in _table(gate, rule).items():
            yield ("gate", rule, name), name, value
    for tag, table in _table(gate, "tag_min").items():
        if isinstance(table, dict):
            for name, value in table.items():
                yield ("gate", "tag_min", tag, name), name, value


def _metric_problems(data: dict, out: _Problems) -> None:
    """Metric names resolve; the gate's metrics are measured; its values are shares."""
    from ci_eval.core.measure.names import resolve_metric

    metrics = data.get("metrics")
    named = [(("metrics", i), name) for i, name in enumerate(metrics if isinstance(metrics, list) else [])]
    for place, name in named:
        if isinstance(name, str):
            try:
                resolve_metric(name)
            except InputError as exc:
                out.add(place, exc.message)
    measured = _measured(data)
    for place, name, value in _gate_tables(data):
        try:
            canonical = resolve_metric(name).name
        except InputError as exc:
            out.add(place, exc.message)
            continue
        if measured is not None and canonical not in measured:
            out.add(place, f"{canonical!r} is not measured, so this rule could never be checked"
                           f"{did_you_mean(canonical, measured)}; measured: {', '.join(measured)} "
                           "(add it to metrics)")
        # An int is exact at any size (math.isfinite would overflow converting it to float).
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                isinstance(value, int) or math.isfinite(value)):
            if 1 < value <= 100:
                out.add(place, f"{value!r} is out of range: metrics are shares between 0 and 1, "
                               f"not percents (for {value:g} % write {value / 100:g})")
            elif not 0 <= value <= 1:
                out.add(place, f"{_number_text(value)} is out of range: metrics are shares between 0 and 1")


def _number_text(value: int | float) -> str:
    if isinstance(value, int) and value.bit_length() > 200:
        from ci_eval.core.textfmt import integer_size

        return integer_size(value)
    return repr(value)


def _measured(data: dict) -> tuple[str, ...] | None:
    """The metrics a run with this config measures, or None when k or metrics are unusable."""
    from ci_eval.core.measure.names import default_metrics, resolve_metric

    k = data.get("k")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        return None
    try:
        names = [resolve_metric(m).name for m in data.get("metrics") or default_metrics(k)]
    except (InputError, TypeError):
        return None
    # The diff reads hits at k and 3k per question whatever the user chose to average.
    names += [f"hit@{k}", f"hit@{3 * k}"]
    return tuple(dict.fromkeys(names))


# The retriever types that are handed params: a framework object is built before ci-eval
# sees it, so an index param could not change how it searches.
_TAKES_INDEX_PARAMS = ("python", "command")


def _build_retriever(r: dict, k: int, base_dir: str, index_params: dict) -> RetrieverConfig:
    params = dict(r.get("params", {}))
    if r["type"] in _TAKES_INDEX_PARAMS:
        params = {**index_params, **params}
    return RetrieverConfig(
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
        params=params,
        env=dict(r.get("env", {})),
        id_from=r.get("id_from", _DEFAULT_ID_FROM.get(r["type"])),
        score=r.get("score", "similarity"),
        cache=_resolve(base_dir, r["cache"]) if "cache" in r else None,
        warmup=r.get("warmup"),
    )


def _canonical_gate(raw: dict) -> dict:
    """Canonical metric names in the gate, so "success_5" and "hit@5" are the same rule."""
    from ci_eval.core.measure.names import resolve_metric

    gate = dict(raw)
    for rule in _SHARE_RULES:
        if rule in gate:
            gate[rule] = {resolve_metric(m).name: v for m, v in gate[rule].items()}
    if "tag_min" in gate:
        gate["tag_min"] = {
            t: {resolve_metric(m).name: v for m, v in table.items()} for t, table in gate["tag_min"].items()
        }
    return gate


def parse_config(data: Any, source: str, base_dir: str = "", prefix: tuple = ()) -> Config:
    """Validate a parsed config table and build a Config. ``prefix`` names where the table
    sits in its file (``("tool", "ci-eval")`` for pyproject.toml) so paths point at it."""
    problems = _Problems(source, prefix)
    _schema_problems(data, problems)
    if isinstance(data, dict):
        _value_problems(data, problems)
        _retriever_problems(data, problems)
        _index_problems(data, problems)
        _metric_problems(data, problems)
        _stage_problems(data, problems)
        _answers_problems(data, problems)
    if problems:
        raise InputErrors(sorted(problems, key=lambda p: p.place or ""))

    k = data["k"]
    index = data.get("index", {})
    return Config(
        source=source,
        gold_set=_resolve(base_dir, data["gold_set"]),
        k=k,
        metrics=_measured(data),
        relevance_level=data.get("relevance_level", 1),
        abstain_below=data.get("abstain_below"),
        answers=_build_answers(data.get("answers"), base_dir),
        retriever=_build_retriever(data["retriever"], k, base_dir, dict(index.get("params", {}))),
        manifest=_resolve(base_dir, index["manifest"]) if "manifest" in index else None,
        manifest_callable=index.get("callable"),
        index_version=index.get("version"),
        gate=_canonical_gate(data.get("gate", {})),
        report=dict(data.get("report", {})),
        raw=data,
        base_dir=base_dir,
        prefix=tuple(prefix),
        stages=_build_stages(data.get("stages"), k),
        calls_budget=_table(data, "calls").get("budget"),
        index_params=dict(index.get("params", {})),
        label=data.get("label"),
    )


# What each [answers] type needs, and the keys that mean something only to some types.
_ANSWERS_NEEDS = {"jsonl": ("path",), "promptfoo": ("path",), "deepeval": ("path",),
                  "ragas": ("path", "metric", "threshold"), "command": ("command",)}
_ANSWERS_ONLY = {"path": ("jsonl", "promptfoo", "deepeval", "ragas"), "command": ("command",),
                 "provider": ("promptfoo",), "timeout": ("command",)}


def _answers_problems(data: dict, out: _Problems) -> None:
    """What each source type needs (a file or a command; Ragas has no pass, so a metric and
    its threshold), and keys given to a type that would ignore them."""
    table = data.get("answers")
    kind = table.get("type") if isinstance(table, dict) else None
    if kind not in _ANSWERS_NEEDS:
        return  # a string (jsonl), or a type the schema already refused
    for key in _ANSWERS_NEEDS[kind]:
        if key not in table:
            out.add("answers", f'answers type "{kind}" needs "{key}"'
                    + (" (Ragas writes scores, no pass: name the column and the score that counts "
                       "as correct)" if kind == "ragas" else ""))
    for key, kinds in _ANSWERS_ONLY.items():
        if key in table and kind not in kinds:
            out.add(("answers", key), f'"{key}" applies to answers type {" and ".join(kinds)}, not "{kind}"')
    for key in ("threshold", "timeout"):
        value = table.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 1e300:
            out.add(("answers", key), f"{_number_text(value)} is out of range")
    if kind == "deepeval" and "threshold" in table and "metric" not in table:
        out.add(("answers", "threshold"), 'a DeepEval threshold reads one metric\'s score: set "metric" too')
    if kind == "promptfoo" and "metric" in table and "threshold" not in table:
        out.add(("answers", "metric"), 'promptfoo\'s named scores carry no pass of their own: set "threshold" too')


def _build_answers(raw, base_dir: str) -> AnswersSpec | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return AnswersSpec("jsonl", _resolve(base_dir, raw), raw)
    return AnswersSpec(
        type=raw["type"],
        path=_resolve(base_dir, raw["path"]) if "path" in raw else None,
        path_as_written=raw.get("path"),
        command=tuple(raw.get("command", ())),
        id_field=raw.get("id_field", "id"),
        question_field=raw.get("question_field"),
        metric=raw.get("metric"),
        threshold=float(raw["threshold"]) if "threshold" in raw else None,
        repeats=raw.get("repeats", "all"),
        provider=raw.get("provider"),
        timeout=float(raw.get("timeout", 600.0)),
    )


def _stage_problems(data: dict, out: _Problems) -> None:
    """Each stage is read at a depth or packed to a budget, never both; names are distinct;
    packing needs chunk lengths, so a manifest; a stage floor names a stage."""
    from ci_eval.core.measure.stages import FINAL

    stages = data.get("stages")
    stages = [s for s in stages if isinstance(s, dict)] if isinstance(stages, list) else []
    seen = set()
    for i, stage in enumerate(stages):
        name = stage.get("name")
        if not isinstance(name, str):
            continue  # the schema said what is wrong with it
        if name in seen:
            out.add(("stages", i, "name"), f"stage {name!r} is named twice")
        seen.add(name)
        if "depth" in stage and "chars" in stage:
            out.add(("stages", i), "a stage is read at a depth or packed to chars, not both")
        elif "depth" not in stage and "chars" not in stage and name != FINAL:
            out.add(("stages", i), f'stage {name!r} needs "depth" (read from the answer) or "chars" '
                                   "(the final list packed to that many characters)")
        if "chars" in stage and name == FINAL:
            out.add(("stages", i, "chars"), f'"{FINAL}" is the final list; name the packing stage otherwise')
        if "chars" in stage and not _table(data, "index"):
            out.add(("stages", i, "chars"), "packing needs each chunk's length: set [index] manifest "
                                            "(chunk text or spans) or callable")
    for name in _table(data, "gate", "stage_min"):
        if name not in seen:
            out.add(("gate", "stage_min", name), f"no stage is named {name!r}{did_you_mean(name, seen)}; "
                                                 f"stages: {', '.join(map(str, seen)) or 'none ([[stages]] is not set)'}")
        elif isinstance(floor := _table(data, "gate", "stage_min")[name], (int, float)) and not 0 <= floor <= 1:
            out.add(("gate", "stage_min", name), "a recall floor is a share between 0 and 1")


def _build_stages(raw, k: int) -> tuple:
    from ci_eval.core.measure.stages import StageSpec, stage_chain

    if not raw:
        return ()
    return stage_chain([StageSpec(s["name"], s.get("depth"), s.get("chars")) for s in raw], k)


def gold_problems(config: Config, question_ids, tags) -> list[InputError]:
    """The gate's protected ids and tag_min tags must name questions and tags of the gold
    set: a rule on a name that is not there would pass forever."""
    out = _Problems(config.source, config.prefix)
    ids, tag_names = set(question_ids), set(tags)
    for i, qid in enumerate(config.gate.get("protected", ())):
        if qid not in ids:
            out.add(("gate", "protected", i), f"question {qid!r} is not in the gold set "
                                              f"{config.gold_set}{did_you_mean(qid, ids)}")
    for tag in config.gate.get("tag_min", {}):
        if tag not in tag_names:
            known = ", ".join(sorted(tag_names)) or "none"
            out.add(("gate", "tag_min", tag), f"no question of the gold set has the tag {tag!r}"
                                              f"{did_you_mean(tag, tag_names)}; tags: {known}")
    return list(out)
