"""The run artefact: everything needed to answer "did last Tuesday's change help" later.

The format is in docs/artefact.md and schemas/artefact-v2.schema.json (version 1:
schemas/artefact.schema.json). A run streams it through core/artefact/artefact_writer.py, sorted
keys and ``repr`` floats, so the same inputs give the same bytes apart from ``created_at``
and the latencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

# The question record is read from here too, as it was before it had a module of its own.
from ci_eval.core.artefact.question_result import MEASURED, GoldRank, QuestionResult, built_question, in_means  # noqa: F401
from ci_eval.core.artefact.question_row import FIELD, QUESTION_FIELDS
from ci_eval.core.artefact.run_failure import run_failure
from ci_eval.core.artefact.run_head import Repeat, read_repeat
from ci_eval.core.artefact.stage_records import RunStages, read_run_stages
from ci_eval.core.gold.remap_record import RecordedRemap, read_recorded_remap
from ci_eval.core.measure.metric_table import MetricTable
from ci_eval.core.validate import schema_problems, schema_valid
from ci_eval.errors import InputError, InputErrors, NotARunArtefact

if TYPE_CHECKING:
    from ci_eval.core.artefact.question_columns import QuestionColumns, Questions

# Version 2 is written (a question is a row, core/artefact/question_row.py); version 1, an object per
# question as earlier releases wrote it, is still read: a base branch's stored run is version 1
# until the branch runs again. Both are read into the same typed ``Artefact``.
SCHEMA_VERSION = 2
READABLE_VERSIONS = {1, 2}
SCHEMAS = {1: "artefact", 2: "artefact-v2"}
HISTORY_LENGTH = 30


def artefact_head(
    *,
    tool_version: str,
    created_at: str,
    git: dict | None,
    config: dict,
    gold_set: dict,
    index: dict,
    k: int,
    metrics: tuple[str, ...] | list[str],
    abstain_below: float | None,
) -> dict:
    """The top-level keys a run knows before its first question (the writer adds
    ``question_fields``; the rows and the END_KEYS of core/artefact/artefact_writer.py follow)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ci-eval", "version": tool_version},
        "created_at": created_at,
        "git": git,
        "config": config,
        "gold_set": gold_set,
        "index": index,
        "k": k,
        "metrics": list(metrics),
        "abstain_below": abstain_below,
    }


def note_in_head(head: dict, key: str, **notes) -> None:
    """Add ``notes`` to the ``key`` object (``config``, ``index``) of a head made by
    ``artefact_head`` before it is written: the demo records its stand-in judge and remap."""
    head[key].update(notes)


def note_sweep_row(head: dict, number: int, label: str, rows: int) -> None:
    """Record which row of a sweep of ``rows`` rows a head belongs to (`sweep --from` names a
    missing row, and tells an earlier sweep's rows from these). A part's identity includes
    its row, so parts of two rows cannot be merged as one: its shard's config hash is taken
    again."""
    from ci_eval.core.artefact.shard import config_sha256

    note_in_head(head, "config", sweep={"row": number, "label": label, "rows": rows})
    if "shard" in head:
        head["shard"]["config_sha256"] = config_sha256(head["config"])


def history_entry(artefact: Artefact) -> dict:
    """The compact line a later run carries forward to draw a trend without downloads."""
    return {
        "sha": artefact.header.sha,
        "created_at": artefact.header.created_at,
        "index_version": artefact.header.index_version,
        "means": dict(artefact.summary.overall.means),
    }


def carry_history(base: Artefact | None, skip_sha: str | None = None) -> list:
    """The base branch's recent headline metrics: the base's own history (each entry as it
    was recorded) plus the base; none of ``skip_sha`` (a re-run of that very commit would
    list it twice in the trend)."""
    if base is None:
        return []
    entries = ([e.recorded for e in base.history] + [history_entry(base)])[-HISTORY_LENGTH:]
    return [e for e in entries if skip_sha is None or e.get("sha") != skip_sha]


def dumps(artefact: dict) -> str:
    """A version 1 artefact object (a question an object) as text: one top-level key per
    line and one question per line, each piece through json's C encoder. Runs write
    version 2 through core/artefact/artefact_writer.py; this stays for artefacts made by hand."""
    from ci_eval.core.artefact.artefact_writer import compact as _compact

    parts = ["{"]
    keys = sorted(artefact)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = artefact[key]
        if key == "questions" and value:
            rows = ",\n  ".join(_compact(q) for q in value)
            parts.append(f' {_compact(key)}: [\n  {rows}\n ]{comma}')
        else:
            parts.append(f" {_compact(key)}: {_compact(value)}{comma}")
    parts.append("}")
    return "\n".join(parts) + "\n"


def is_run_artefact(data: Any) -> bool:
    """Whether a parsed document says it is a run artefact: every release writes ``tool``
    naming ci-eval (both schemas require it). A gold set, a report or a stray JSON file does
    not, and is told so in one line rather than by every key it lacks."""
    tool = data.get("tool") if isinstance(data, dict) else None
    return isinstance(tool, dict) and tool.get("name") == "ci-eval"


def validate_artefact(data: Any, source: str) -> dict:
    """An artefact may come from a fork's run or an old release: check it before use."""
    from ci_eval.schemas import load

    if not isinstance(data, dict):
        raise NotARunArtefact(source)
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version not in READABLE_VERSIONS:
        newer = version > max(READABLE_VERSIONS)
        raise InputError(
            f"artefact schema_version {version} is {'newer' if newer else 'older'} than this ci-eval "
            f"reads ({', '.join(map(str, sorted(READABLE_VERSIONS)))}); "
            + ("upgrade ci-eval" if newer else "re-run the base branch to refresh it"),
            source,
            "schema_version",
        )
    if not is_run_artefact(data):  # after the version: a newer release's artefact says "upgrade"
        raise NotARunArtefact(source)
    # a list or object as the version is unhashable: it is a schema problem, worded below
    schema = load(SCHEMAS.get(version, "artefact") if isinstance(version, int) else "artefact")
    if _fast_valid_artefact(data, schema):
        return data
    bounds = _bound_problems(data, source)
    if bounds:  # the schema's wording would walk every item of a list past its bound
        raise InputErrors(bounds[:20])
    problems = schema_problems(data, schema, source, name_path=_row_fields if version == 2 else None)
    if problems:
        raise InputErrors(problems[:20])
    return data


def _bound_problems(data: dict, source: str) -> list[InputError]:
    """The tags past their bounds (core/limits.py, the gold set's too), found by counting:
    a fork's artefact of 30,000 tags of its own held the privileged poster for minutes,
    a tag at a time, before anything refused it."""
    from ci_eval.core.limits import MAX_TAGS, MAX_TAGS_PER_QUESTION

    problems = []
    summary = data.get("summary")
    by_tag = summary.get("by_tag") if isinstance(summary, dict) else None
    if isinstance(by_tag, dict) and len(by_tag) > MAX_TAGS:
        problems.append(InputError(f"holds {len(by_tag):,} tags, over the limit of {MAX_TAGS:,}",
                                   source, "summary.by_tag"))
    questions = data.get("questions")
    tags: set = set()
    for i, q in enumerate(questions if isinstance(questions, list) else ()):
        own = q[FIELD["tags"]] if isinstance(q, list) and len(q) > FIELD["tags"] else (
            q.get("tags") if isinstance(q, dict) else None)
        if not isinstance(own, list):
            continue
        if len(own) > MAX_TAGS_PER_QUESTION:
            problems.append(InputError(f"holds {len(own):,} tags, over the limit of {MAX_TAGS_PER_QUESTION:,} "
                                       "a question", source, f"questions[{i}].tags"))
        else:
            tags.update(t for t in own if isinstance(t, str))
    if len(tags) > MAX_TAGS:
        problems.append(InputError(f"names {len(tags):,} distinct tags, over the limit of {MAX_TAGS:,}",
                                   source, "questions"))
    return problems


def _row_fields(path) -> tuple:
    """questions[1][4] -> questions[1].status: a version 2 row's positions named by field."""
    path = tuple(path)
    if len(path) > 2 and path[0] == "questions" and isinstance(path[2], int) and path[2] < len(QUESTION_FIELDS):
        return (*path[:2], QUESTION_FIELDS[path[2]], *path[3:])
    return path


_SHELLS: dict[int, dict] = {}


def shell_valid(data: dict, schema: dict) -> bool:
    """The artefact without its question rows, by jsonschema's check."""
    shell = _SHELLS.get(id(schema))
    if shell is None:
        rows = schema["properties"]["questions"]
        shell = {**schema, "properties": {**schema["properties"],
                                          "questions": {k: v for k, v in rows.items() if k != "items"}}}
        _SHELLS[id(schema)] = shell
    return schema_valid(data, shell)


def _fast_valid_artefact(data: dict, schema: dict) -> bool:
    """The artefact without its question rows by jsonschema's check, then the rows by the
    straight-line one: most of an artefact is its rows."""
    from ci_eval.core.artefact.artefact_rows import question_row_v2_valid, question_row_valid

    if not shell_valid(data, schema):
        return False
    questions = data.get("questions")
    row_valid = question_row_v2_valid if data.get("schema_version") == 2 else question_row_valid
    return not isinstance(questions, list) or all(row_valid(q) for q in questions)


# --------------------------------------------------------------------------- reading
# One reader turns a validated artefact dict into the typed records the comparison uses;
# nothing after it indexes the dict by string keys.


@dataclass(frozen=True)
class RunHeader:
    """What one artefact says about its run as a whole."""

    sha: str | None
    ref: str | None
    dirty: bool | None
    created_at: str | None
    index_version: str | None
    gold_index_version: str | None
    gold_sha256: str | None
    gold_path: str | None
    k: int
    depth: int | None
    metrics: tuple[str, ...]
    questions: int
    abstain_below: float | None = None
    index_checked: bool = True  # False: no index manifest, so stale gold could not be seen
    # index.remap: what `ci-eval gold remap` would do for the stale ids (core/gold/remap.py)
    remap: dict | None = field(default=None, compare=False)
    # index.drifted: stale ids still in the index, whose text no longer matches their anchor
    drifted: frozenset = field(default=frozenset(), compare=False)
    # gold_set.remap: the gold set's last applied remap (core/gold/remap_record.py)
    gold_remap: RecordedRemap | None = field(default=None, compare=False)
    index_ids: int | None = None  # how many chunks the index holds (None: no manifest)
    index_mean_chars: float | None = None  # their mean length (None: not recorded)
    index_cuts: str | None = None  # a digest of where the chunks are cut (None: not recorded)
    gold_evidence: int = 0  # gold_set.evidence: questions whose gold names document spans
    # repeat: what `run --repeat` saw (core/artefact/repeat.py), None when not repeated
    repeat: Repeat | None = field(default=None, compare=False)
    # answers: where the failure matrix's verdicts came from and how they joined (core/answers.py)
    answers: dict | None = field(default=None, compare=False)


def _gold_items(gold) -> tuple[tuple[str, float], ...]:
    if isinstance(gold, dict):
        return tuple(sorted((str(i), float(g)) for i, g in gold.items()))
    if gold and isinstance(gold[0], list):  # version 2: [id, grade] pairs
        return tuple(sorted((str(i), float(g)) for i, g in gold))
    return tuple(sorted((str(i), 1.0) for i in gold or ()))  # a plain list: grade 1


def _entry_id(entry) -> str:
    return str(entry.get("id")) if isinstance(entry, dict) else str(entry)


def _question_fields(fields: dict, metrics, ids: list, relevance_level: float, depth: int) -> tuple:
    """A version 1 object's fields in ``QuestionColumns.add``'s order; of the ranking only
    what the comparison reads is kept."""
    gold = _gold_items(fields.get("gold") or ())
    stale = tuple(sorted(str(i) for i in fields.get("stale") or ()))
    rank, top = fields.get("first_gold_rank"), fields.get("top_score")
    return (str(fields["id"]), str(fields.get("question", "")),
            tuple(str(t) for t in fields.get("tags") or ()), str(fields.get("status", "ok")),
            bool(fields.get("unanswerable", False)), gold, stale,
            None if rank is None else int(rank), None if top is None else float(top),
            fields.get("error"), fields.get("answer_correct"),
            tuple(str(w) for w in fields.get("warnings") or ()), ids, depth, relevance_level,
            metrics)


def _question_columns(table: MetricTable | None = None):
    from ci_eval.core.artefact.question_columns import QuestionColumns

    return QuestionColumns(table)


def read_question(q: dict, relevance_level: float = 1, depth: int = 0) -> QuestionResult:
    """A version 1 question object; ``depth``: how many of the top results to keep."""
    columns = _question_columns()
    add_question(columns, q, relevance_level, depth)
    return columns.record(0)


def add_question(columns, q: dict, relevance_level: float = 1, depth: int = 0) -> None:
    """A version 1 question object into ``columns`` (core/artefact/question_columns.py)."""
    ids = [_entry_id(entry) for entry in q.get("ranking") or ()]
    columns.add(*_question_fields(q, dict(q.get("metrics") or {}), ids, relevance_level, depth))


def add_row(columns, row: list, relevance_level: float = 1, depth: int = 0, ids=None) -> None:
    """A schema-valid version 2 question row into ``columns``, whose table takes its metric
    values: the same question as its version 1 object gives, taken straight from the row's
    positions (every type is already the schema's). ``ids``: the ranking's chunk ids, when
    the caller has them already."""
    (qid, text, tags, unanswerable, status, gold_pairs, stale_ids, values, rank, top, _latency,
     answer_correct, _judged, error, warnings, ranking) = row
    gold = sorted((cid, float(grade)) for cid, grade in gold_pairs)
    if ids is None:
        ids = [cid for cid, _ in ranking]
    columns.table.append(values)
    columns.add(qid, text, tuple(tags), status, unanswerable, gold,
                tuple(sorted(stale_ids)) if stale_ids else (),
                None if rank is None else int(rank), None if top is None else float(top),
                error, answer_correct, warnings, ids, depth, relevance_level)


def add_block(columns, block, relevance_level: float = 1, depth: int = 0) -> None:
    """A checked block of version 2 rows (core/artefact/row_blocks.py) into ``columns``: the same
    columns as ``add_row`` of each of its rows in turn, filled a field at a time."""
    columns.table.extend(block.field("metrics"))
    columns.add_block(block, depth, relevance_level)


def rankings(artefact: dict) -> dict[str, list[str]]:
    """Every question's whole ranking, chunk ids best first, from a validated artefact of
    either version (the labelling pool reads all of it, not just the top)."""
    if artefact.get("schema_version") == 2:
        qid, ranking = FIELD["id"], FIELD["ranking"]
        return {row[qid]: [cid for cid, _ in row[ranking]] for row in artefact.get("questions") or ()}
    return {q["id"]: [_entry_id(r) for r in q.get("ranking") or ()] for q in artefact.get("questions") or ()}


def relevance_level(artefact: dict) -> float:
    level = (artefact.get("config") or {}).get("relevance_level", 1)
    return level if isinstance(level, (int, float)) and not isinstance(level, bool) else 1


def kept_depth(artefact: dict, top: int = 0) -> int:
    """How many of each ranking's top results the typed question keeps: the artefact's own
    k (judged@k), or more when the other side of a comparison has a larger k."""
    k = artefact.get("k")
    k = int(k) if isinstance(k, (int, float)) and not isinstance(k, bool) else 0  # 5.0 is an integer
    return max(k, top)


def read_questions(artefact: dict, top: int = 0) -> tuple[QuestionResult, ...]:
    return tuple(_typed_questions(artefact, top))


def _typed_questions(artefact: dict, top: int):
    """The questions' columns (core/artefact/question_columns.py); for version 2 a table holds their
    metric values."""
    from ci_eval.core.artefact.question_columns import Questions

    level, depth = relevance_level(artefact), kept_depth(artefact, top)
    questions = artefact.get("questions") or ()
    if artefact.get("schema_version") == 2:
        columns = _question_columns(MetricTable(tuple(artefact.get("metrics") or ())))
        for row in questions:
            add_row(columns, row, level, depth)
        columns.table.finish()
    else:
        columns = _question_columns()
        for q in questions:
            add_question(columns, q, level, depth)
    return Questions(columns)


def read_header(a: dict, questions: int | None = None) -> RunHeader:
    git = a.get("git") or {}
    gold = a.get("gold_set") or {}
    index = a.get("index") or {}
    retriever = (a.get("config") or {}).get("retriever")
    depth = retriever.get("depth") if isinstance(retriever, dict) else None
    return RunHeader(
        sha=git.get("sha"),
        ref=git.get("ref"),
        dirty=git.get("dirty"),
        created_at=a.get("created_at"),
        index_version=index.get("version"),
        gold_index_version=gold.get("index_version"),
        gold_sha256=gold.get("sha256"),
        gold_path=gold.get("path"),
        k=int(a["k"]),
        depth=depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
        metrics=tuple(a.get("metrics") or ()),
        questions=len(a.get("questions") or ()) if questions is None else questions,
        abstain_below=None if a.get("abstain_below") is None else float(a["abstain_below"]),
        index_checked=bool(index.get("checked", True)),
        remap=index.get("remap") if isinstance(index.get("remap"), dict) else None,
        drifted=frozenset(d for d in index.get("drifted") or () if isinstance(d, str)),
        gold_remap=read_recorded_remap(gold.get("remap")),
        index_ids=index.get("ids"), index_mean_chars=index.get("mean_chars"), index_cuts=index.get("cuts"),
        gold_evidence=_count(gold.get("evidence")),
        repeat=read_repeat(a.get("repeat")),
        answers=a.get("answers") if isinstance(a.get("answers"), dict) else None,
    )


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class Group:
    """The measured questions of the whole run or of one tag: how many, and the means."""

    count: int
    means: tuple[tuple[str, float], ...]

    def mean(self, metric: str) -> float | None:
        return dict(self.means).get(metric)


@dataclass(frozen=True)
class Summary:
    overall: Group
    by_tag: tuple[tuple[str, Group], ...]
    stale_questions: int
    stale_ids: int
    errors: int
    latency_ms: tuple[tuple[str, float], ...]  # ("mean" | "p50" | "p95", ms); () when unknown

    def latency(self, stat: str) -> float | None:
        return dict(self.latency_ms).get(stat)


@dataclass(frozen=True)
class HistoryEntry:
    """One earlier run of the base branch, as carried forward in ``history``."""

    sha: str
    created_at: str
    means: tuple[tuple[str, float], ...]
    recorded: dict = field(default_factory=dict, compare=False, repr=False)  # carried forward as is


@dataclass(frozen=True)
class Artefact:
    """A run artefact as the comparison sees it: read once, typed, immutable."""

    header: RunHeader
    questions: Questions  # records made on demand from the columns (core/artefact/question_columns.py)
    summary: Summary
    config: dict = field(compare=False)  # the config as recorded (what the config diff compares)
    history: tuple[HistoryEntry, ...] = ()
    depth: int = field(default=0, compare=False)  # how many top results each question keeps
    # The recorded stages and calls (core/artefact/stage_records.py); empty when the run had neither
    stages: RunStages = field(default_factory=RunStages, compare=False)
    # Columns built on first use, once (tuple keys: ("column", metric) for version 1). A
    # column of the metric table is cut from it again at each use instead (a copy of every
    # metric's values kept per artefact is 80 MB at a million questions; cutting one takes
    # milliseconds).
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def columns(self) -> QuestionColumns:
        return self.questions.columns

    @property
    def failure(self) -> str | None:
        """Why this artefact's run failed (core/artefact/run_failure.py), or None."""
        return run_failure(self.summary.errors, self.header.repeat)

    def column(self, metric: str):
        """Every question's ``value(metric)``, in question order, as a float array."""
        columns = self.columns
        if columns.table is not None:
            return columns.table.column(metric)
        key = ("column", metric)
        if key not in self._cache:
            import numpy as np

            self._cache[key] = np.array(
                [float(m.get(metric, 0.0) or 0.0) for m in columns.own_metrics], dtype=float)
        return self._cache[key]

    def measured_mask(self):
        """Which questions' metrics count (``QuestionResult.measured``), as a bool array."""
        return self.columns.measured_mask()

    def positions(self, ids):
        """Where each of ``ids`` sits in ``questions``, as an index array (asked once per
        comparison: the id -> position map is not kept)."""
        import numpy as np

        where = {qid: i for i, qid in enumerate(self.columns.ids)}
        return np.array([where[i] for i in ids], dtype=np.intp)


def _means(raw) -> tuple[tuple[str, float], ...]:
    raw = raw if isinstance(raw, dict) else {}
    return tuple(sorted((str(m), float(v)) for m, v in raw.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)))


def _group(raw) -> Group:
    raw = raw if isinstance(raw, dict) else {}
    return Group(int(raw.get("count") or 0), _means(raw.get("means")))


def read_summary(raw) -> Summary:
    raw = raw if isinstance(raw, dict) else {}
    stale = raw.get("stale") or {}
    latency = raw.get("latency_ms") or {}
    return Summary(
        overall=_group(raw.get("overall")),
        by_tag=tuple(sorted((str(t), _group(g)) for t, g in (raw.get("by_tag") or {}).items())),
        stale_questions=int(stale.get("questions") or 0),
        stale_ids=int(stale.get("ids") or 0),
        errors=int(raw.get("errors") or 0),
        latency_ms=tuple((s, float(latency[s])) for s in ("mean", "p50", "p95")
                         if latency.get(s) is not None),
    )


def with_carried_history(head: Artefact, base: Artefact | None) -> Artefact:
    """``head`` with the history ``base`` carries forward in place of its own: what a
    report trusts when ``head`` came from someone else (a fork's run recorded its own)."""
    return replace(head, history=_history(carry_history(base)))


def _history(raw) -> tuple[HistoryEntry, ...]:
    return tuple(HistoryEntry(str(e.get("sha") or ""), str(e.get("created_at") or ""),
                              _means(e.get("means")), e)
                 for e in raw or () if isinstance(e, dict))


def read_artefact(data: dict | Artefact, top: int = 0) -> Artefact:
    """The one reader: a validated artefact dict (either version) -> ``Artefact`` (an
    ``Artefact`` as is). ``top``: keep at least that many of each ranking's top results."""
    if isinstance(data, Artefact):
        return data
    return typed_artefact(data, _typed_questions(data, top), kept_depth(data, top))


def typed_artefact(data: dict, questions: Questions, depth: int) -> Artefact:
    """The ``Artefact`` of a header (every key but ``questions``) and its questions' columns."""
    config = data.get("config")
    return Artefact(
        header=read_header(data, len(questions)),
        questions=questions,
        summary=read_summary(data.get("summary")),
        config=dict(config) if isinstance(config, dict) else {},
        history=_history(data.get("history")),
        depth=depth,
        stages=read_run_stages(data.get("stages"), data.get("calls")),
    )
