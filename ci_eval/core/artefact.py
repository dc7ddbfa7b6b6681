"""The run artefact: everything needed to answer "did last Tuesday's change help" later.

The format is in docs/design.md and schemas/artefact-v2.schema.json (version 1:
schemas/artefact.schema.json). A run streams it through core/artefact_writer.py, sorted
keys and ``repr`` floats, so the same inputs give the same bytes apart from ``created_at``
and the latencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ci_eval.core.validate import fast_valid, schema_problems
from ci_eval.errors import InputError, InputErrors

# Version 2 is written (compact rows, core/question_row.py); version 1, the object per
# question of earlier releases, is read still: a base branch's stored run is version 1
# until the branch runs again.
SCHEMA_VERSION = 2
READABLE_VERSIONS = {1, 2}
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
    ``question_fields``; the rows and the END_KEYS of core/artefact_writer.py follow)."""
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


def history_entry(artefact: dict) -> dict:
    """The compact line a later run carries forward to draw a trend without downloads."""
    git = artefact.get("git") or {}
    return {
        "sha": git.get("sha"),
        "created_at": artefact.get("created_at"),
        "index_version": (artefact.get("index") or {}).get("version"),
        "means": dict(artefact.get("summary", {}).get("overall", {}).get("means", {})),
    }


def carry_history(base: dict | None) -> list:
    """The base branch's recent headline metrics: the base's own history plus the base."""
    if not base:
        return []
    return (list(base.get("history") or []) + [history_entry(base)])[-HISTORY_LENGTH:]


def dumps(artefact: dict) -> str:
    """A version 1 artefact object (a question an object) as text: one top-level key per
    line and one question per line, each piece through json's C encoder. Runs write
    version 2 through core/artefact_writer.py; this stays for artefacts made by hand."""
    from ci_eval.core.artefact_writer import compact as _compact

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


def validate_artefact(data: Any, source: str) -> dict:
    """An artefact may come from a fork's run or an old release: check it before use."""
    from ci_eval.schemas import load

    if not isinstance(data, dict):
        raise InputError("a run artefact must be a JSON object", source)
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version not in READABLE_VERSIONS:
        newer = version > SCHEMA_VERSION
        raise InputError(
            f"artefact schema_version {version} is {'newer' if newer else 'older'} than this ci-eval "
            f"reads ({', '.join(map(str, sorted(READABLE_VERSIONS)))}); "
            + ("upgrade ci-eval" if newer else "re-run the base branch to refresh it"),
            source,
            "schema_version",
        )
    schema = load("artefact")
    if _fast_valid_artefact(data, schema):
        return data
    problems = schema_problems(data, schema, source)
    if problems:
        raise InputErrors(problems[:20])
    return data


_SHELLS: dict[int, dict] = {}


def _fast_valid_artefact(data: dict, schema: dict) -> bool:
    """The artefact without its question rows by the compiled check, then the rows by the
    straight-line one: most of an artefact is its rows."""
    from ci_eval.core.artefact_rows import question_row_valid

    shell = _SHELLS.get(id(schema))
    if shell is None:
        rows = schema["properties"]["questions"]
        shell = {**schema, "properties": {**schema["properties"],
                                          "questions": {k: v for k, v in rows.items() if k != "items"}}}
        _SHELLS[id(schema)] = shell
    if fast_valid(data, shell) is not True:
        return False
    questions = data.get("questions")
    return not isinstance(questions, list) or all(question_row_valid(q) for q in questions)


# --------------------------------------------------------------------------- reading
# One reader turns a validated artefact dict into the typed records the comparison uses;
# nothing after it indexes the dict by string keys.

# The statuses whose metrics count: answerable and measured, or failed (scored 0, fail closed).
MEASURED = ("ok", "error")


@dataclass(frozen=True)
class GoldRank:
    """Where one relevant (live, grade >= the relevance level) gold chunk came back; rank
    None: not in the recorded ranking."""

    id: str
    grade: float
    rank: int | None


@dataclass(frozen=True)
class QuestionResult:
    """One question of one artefact, read once with defaults for optional fields."""

    id: str
    question: str
    tags: tuple[str, ...]
    status: str
    unanswerable: bool
    gold: tuple[tuple[str, float], ...]
    stale: tuple[str, ...]
    metrics: dict = field(compare=False)
    first_gold_rank: int | None
    top_score: float | None
    error: str | None
    answer_correct: bool | None
    gold_ranks: tuple[GoldRank, ...] = ()
    returned: int = 0  # how many results the ranking holds
    warnings: tuple[str, ...] = ()

    @property
    def measured(self) -> bool:
        return self.status in MEASURED

    def value(self, metric: str) -> float:
        # error questions score 0 on every metric (design.md): fail closed
        return float(self.metrics.get(metric, 0.0) or 0.0)

    def hit(self, k: int) -> bool | None:
        """hit@k as the run measured it; None when the run did not measure hit@k."""
        v = self.metrics.get(f"hit@{k}")
        return None if v is None else float(v) >= 1.0


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
    # index.remap: what `ci-eval gold remap` would do for the stale ids (core/remap.py)
    remap: dict | None = field(default=None, compare=False)


def _gold_items(gold) -> tuple[tuple[str, float], ...]:
    if isinstance(gold, dict):
        return tuple(sorted((str(i), float(g)) for i, g in gold.items()))
    return tuple(sorted((str(i), 1.0) for i in gold or ()))  # a plain list: grade 1


def _gold_ranks(gold, stale, ranking, relevance: float) -> tuple[GoldRank, ...]:
    live = [(i, g) for i, g in gold if g >= relevance and i not in stale]
    wanted = {i for i, _ in live}
    position: dict[str, int] = {}
    for rank, entry in enumerate(ranking or (), 1):
        if len(position) == len(wanted):
            break  # every gold chunk placed: the rest of the ranking cannot change it
        cid = str(entry.get("id")) if isinstance(entry, dict) else str(entry)
        if cid in wanted:
            position.setdefault(cid, rank)
    return tuple(GoldRank(i, g, position.get(i)) for i, g in live)


def read_question(q: dict, relevance_level: float = 1) -> QuestionResult:
    gold = _gold_items(q.get("gold") or {})
    stale = tuple(sorted(str(i) for i in q.get("stale") or ()))
    rank, top = q.get("first_gold_rank"), q.get("top_score")
    ranking = q.get("ranking") or ()
    return QuestionResult(
        id=str(q["id"]),
        question=str(q.get("question", "")),
        tags=tuple(str(t) for t in q.get("tags") or ()),
        status=str(q.get("status", "ok")),
        unanswerable=bool(q.get("unanswerable", False)),
        gold=gold,
        stale=stale,
        metrics=dict(q.get("metrics") or {}),
        first_gold_rank=None if rank is None else int(rank),
        top_score=None if top is None else float(top),
        error=q.get("error"),
        answer_correct=q.get("answer_correct"),
        gold_ranks=_gold_ranks(gold, set(stale), ranking, relevance_level),
        returned=len(ranking),
        warnings=tuple(str(w) for w in q.get("warnings") or ()),
    )


def read_questions(artefact: dict) -> tuple[QuestionResult, ...]:
    level = (artefact.get("config") or {}).get("relevance_level", 1)
    level = level if isinstance(level, (int, float)) and not isinstance(level, bool) else 1
    return tuple(read_question(q, level) for q in artefact.get("questions") or ())


def read_header(a: dict) -> RunHeader:
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
        questions=len(a.get("questions") or ()),
        abstain_below=None if a.get("abstain_below") is None else float(a["abstain_below"]),
        index_checked=bool(index.get("checked", True)),
        remap=index.get("remap") if isinstance(index.get("remap"), dict) else None,
    )


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


@dataclass(frozen=True)
class Artefact:
    """A run artefact as the comparison sees it: read once, typed, immutable."""

    header: RunHeader
    questions: tuple[QuestionResult, ...]
    summary: Summary
    config: dict = field(compare=False)  # the config as recorded (what the config diff compares)
    history: tuple[HistoryEntry, ...] = ()


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


def _history(raw) -> tuple[HistoryEntry, ...]:
    return tuple(HistoryEntry(str(e.get("sha") or ""), str(e.get("created_at") or ""),
                              _means(e.get("means")))
                 for e in raw or () if isinstance(e, dict))


def read_artefact(data: dict | Artefact) -> Artefact:
    """The one reader: a validated artefact dict -> ``Artefact`` (an ``Artefact`` as is)."""
    if isinstance(data, Artefact):
        return data
    config = data.get("config")
    return Artefact(
        header=read_header(data),
        questions=read_questions(data),
        summary=read_summary(data.get("summary")),
        config=dict(config) if isinstance(config, dict) else {},
        history=_history(data.get("history")),
    )
