"""An artefact's head, typed: every top-level key but the question rows.

What reads an artefact without its rows takes this rather than the JSON: ``ci-eval merge``
(a part's shard record and the keys every part of one run shares), the history a run
carries forward from its base, and the terminal summary of a run just written. Built here
from a schema-checked header dict, the one place besides core/artefact/artefact.py that reads an
artefact's keys by name; the keys the merge writes back verbatim (``git``, ``config``,
``gold_set``, ``index``, ``history``) are kept as the JSON values they are.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShardRecord:
    """A part's ``shard`` key (core/artefact/shard.shard_record)."""

    index: int
    count: int
    gold_sha256: str
    config_sha256: str
    index_version: str | None
    ids: list
    positions: list

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Unanswerable:
    count: int
    abstained: int
    cutoff: float | None


@dataclass(frozen=True)
class Repeat:
    """A repeated run's ``repeat`` key (core/artefact/repeat.py): ``flapping`` holds
    (id, passes whose ranking differed, passes whose outcome differed), up to its bound."""

    passes: int
    questions: int
    changed: int
    flapping: tuple[tuple[str, int, int], ...]
    # (questions the retriever failed on in a further pass, the first one's id, its error)
    failed: tuple[int, str, str] | None = None

    @property
    def deterministic(self) -> bool:
        return self.changed == 0

    @property
    def flapping_ids(self) -> frozenset:
        return frozenset(entry[0] for entry in self.flapping)


@dataclass(frozen=True)
class RunHead:
    """An artefact's top-level keys but its rows. ``tool``, ``git``, ``config``,
    ``gold_set``, ``index`` and ``history`` are the recorded JSON values, compared and
    written back as they are."""

    tool: dict
    created_at: str | None
    git: dict | None
    config: dict
    gold_set: dict
    index: dict
    k: int | float
    metrics: tuple[str, ...]
    abstain_below: float | None
    history: list
    shard: ShardRecord | None = None
    cache: tuple[int, int] | None = None  # (hits, misses)
    summary: dict | None = None  # the recorded summary (RunTotals reads it)
    stages: dict | None = None  # the recorded ``stages`` and ``calls`` keys, as written
    calls: dict | None = None
    repeat: Repeat | None = None  # present when the run was repeated (--repeat)
    answers: dict | None = None  # where the end-to-end verdicts came from ([answers], core/answers.py)

    @property
    def tool_version(self) -> str:
        return str(self.tool.get("version"))

    @property
    def sha(self) -> str | None:
        """The commit the run measured (None: not recorded)."""
        return (self.git or {}).get("sha")

    @property
    def gold_sha256(self) -> str | None:
        return self.gold_set.get("sha256")

    @property
    def gold_questions(self) -> int | None:
        """How many questions the whole gold set has (None: not recorded)."""
        return self.gold_set.get("questions")

    @property
    def index_version(self) -> str | None:
        return self.index.get("version")

    @property
    def gold_index_version(self) -> str | None:
        return self.gold_set.get("index_version")

    @property
    def index_checked(self) -> bool:
        return bool(self.index.get("checked", True))

    @property
    def drifted(self) -> tuple[str, ...]:
        """Gold ids still in the index whose text no longer matches their anchor."""
        return tuple(self.index.get("drifted") or ())

    @property
    def depth(self) -> int | None:
        retriever = self.config.get("retriever")
        depth = retriever.get("depth") if isinstance(retriever, dict) else None
        return depth if isinstance(depth, int) and not isinstance(depth, bool) else None


def _shard(raw) -> ShardRecord | None:
    if not isinstance(raw, dict):
        return None
    return ShardRecord(raw["index"], raw["count"], raw["gold_sha256"], raw["config_sha256"],
                       raw["index_version"], raw["ids"], raw["positions"])


def read_repeat(raw) -> Repeat | None:
    """A schema-checked ``repeat`` key, typed (None: the run was not repeated)."""
    if not isinstance(raw, dict):
        return None
    failed = raw.get("failed")
    return Repeat(raw["passes"], raw["questions"], raw["changed"],
                  tuple((str(qid), int(ranking), int(outcome)) for qid, ranking, outcome in raw["flapping"]),
                  None if failed is None else (int(failed["questions"]), *map(str, failed["first"])))


def read_run_head(data: dict) -> RunHead:
    """A schema-checked artefact's top-level keys (``questions``, when present, unread)."""
    cache = data.get("cache")
    return RunHead(
        tool=data["tool"], created_at=data.get("created_at"), git=data.get("git"),
        config=data["config"], gold_set=data["gold_set"], index=data.get("index") or {},
        k=data["k"], metrics=tuple(data["metrics"]), abstain_below=data.get("abstain_below"),
        history=list(data.get("history") or []), shard=_shard(data.get("shard")),
        cache=(cache["hits"], cache["misses"]) if isinstance(cache, dict) else None,
        summary=data.get("summary"), stages=data.get("stages"), calls=data.get("calls"),
        repeat=read_repeat(data.get("repeat")),
        answers=data.get("answers") if isinstance(data.get("answers"), dict) else None,
    )


@dataclass(frozen=True)
class RunTotals:
    """A written run's summary as the terminal prints it."""

    head: RunHead
    count: int
    means: tuple[tuple[str, float], ...]  # in the order of the artefact's metrics
    stale_ids: int
    stale_questions: int
    unanswerable: Unanswerable
    judged_mean: float | None
    judged_k: int | None
    latency_ms: tuple[float, float, float] | None  # (mean, p50, p95)


def run_totals(head: RunHead) -> RunTotals:
    """``head`` of a run with its summary (a run just written, or a stored one)."""
    s = head.summary or {}
    overall, stale, u = s.get("overall") or {}, s.get("stale") or {}, s.get("unanswerable") or {}
    means = overall.get("means") or {}
    judged, lat = s.get("judged_at_k") or {}, s.get("latency_ms")
    return RunTotals(
        head=head, count=overall.get("count", 0),
        means=tuple((m, means[m]) for m in head.metrics if m in means),
        stale_ids=stale.get("ids", 0), stale_questions=stale.get("questions", 0),
        unanswerable=Unanswerable(u.get("count", 0), u.get("abstained", 0), u.get("cutoff")),
        judged_mean=judged.get("mean"), judged_k=judged.get("k"),
        latency_ms=(lat["mean"], lat["p50"], lat["p95"]) if lat else None,
    )
