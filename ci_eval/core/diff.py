"""Base run artefact vs head run artefact -> ``Diff``: what moved, where, and can we trust it.

Both inputs are run artefacts as dicts (``docs/design.md``); the base may be ``None`` (no
baseline: a first run, an expired artifact, a base commit never evaluated), which is a
normal branch here, not an error.

Comparisons are made only on *compared* questions: present on both sides, with the same
label (gold ids and grades, unanswerable flag), no stale gold id on either side, and
measured on both (status ``ok`` or ``error``). Everything else is listed, never silently mixed in: questions
added, removed or relabelled in the PR; questions whose gold went stale or came back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ci_eval.core.cutoff import CutoffReport, analyse_cutoff
from ci_eval.core.matrix import FailureMatrix, failure_matrix
from ci_eval.core.stats import PairedTest, paired_tests

MEASURED = ("ok", "error")

# Question kinds, most severe first; the first four are regressions.
REGRESSION_KINDS = ("error", "lost", "dropped", "down")
IMPROVEMENT_KINDS = ("gained", "rose", "up")
KIND_ORDER = REGRESSION_KINDS + IMPROVEMENT_KINDS + ("same",)


@dataclass(frozen=True)
class QuestionRecord:
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

    @property
    def measured(self) -> bool:
        return self.status in MEASURED

    def value(self, metric: str) -> float:
        # error questions score 0 on every metric (design.md): fail closed
        return float(self.metrics.get(metric, 0.0) or 0.0)

    def hit(self, k: int) -> bool:
        v = self.metrics.get(f"hit@{k}")
        if v is not None:
            return float(v) >= 1.0
        return self.first_gold_rank is not None and self.first_gold_rank <= k


@dataclass(frozen=True)
class RunInfo:
    sha: str | None
    ref: str | None
    created_at: str | None
    index_version: str | None
    gold_index_version: str | None
    gold_sha256: str | None
    k: int
    metrics: tuple[str, ...]
    questions: int
    index_checked: bool = True  # False: no index manifest, so stale gold could not be seen


@dataclass(frozen=True)
class MetricChange:
    """A metric on the compared questions (base, head, delta, paired test) and on all of
    head's measured questions (``head_overall``, the number floors apply to)."""

    name: str
    base: float | None
    head: float | None
    delta: float | None
    head_overall: float | None
    base_overall: float | None
    test: PairedTest | None
    missing: str | None  # "base" | "head" when one side did not measure it

    @property
    def compared(self) -> bool:
        return self.test is not None and self.test.n > 0


@dataclass(frozen=True)
class QuestionChange:
    id: str
    question: str
    tags: tuple[str, ...]
    kind: str  # one of KIND_ORDER
    detail: str
    base_rank: int | None
    head_rank: int | None
    deltas: tuple[tuple[str, float], ...]
    error: str | None = None

    @property
    def regression(self) -> bool:
        return self.kind in REGRESSION_KINDS

    @property
    def improvement(self) -> bool:
        return self.kind in IMPROVEMENT_KINDS

    def delta(self, metric: str) -> float:
        return dict(self.deltas).get(metric, 0.0)


@dataclass(frozen=True)
class TagChange:
    tag: str
    n: int
    metrics: tuple[tuple[str, float, float], ...]  # (metric, base mean, head mean)

    def delta(self, metric: str) -> float | None:
        for name, b, h in self.metrics:
            if name == metric:
                return h - b
        return None


@dataclass(frozen=True)
class QuestionRef:
    id: str
    question: str
    note: str = ""


@dataclass(frozen=True)
class GoldSetChanges:
    added: tuple[QuestionRef, ...] = ()
    removed: tuple[QuestionRef, ...] = ()
    relabelled: tuple[QuestionRef, ...] = ()
    base_sha256: str | None = None
    head_sha256: str | None = None

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.relabelled)


@dataclass(frozen=True)
class StaleQuestion:
    id: str
    question: str
    ids: tuple[str, ...]  # the stale gold ids on head (or resolved ones)
    status: str


@dataclass(frozen=True)
class StaleChanges:
    head: tuple[StaleQuestion, ...]  # every head question with stale gold ids
    new: tuple[StaleQuestion, ...]  # stale on head, not (or less) on base
    resolved: tuple[StaleQuestion, ...]  # stale on base, resolved on head
    head_ids: int
    base_ids: int | None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.head)


@dataclass(frozen=True)
class ConfigChange:
    path: str
    base: str
    head: str


@dataclass(frozen=True)
class Diff:
    k: int
    head_info: RunInfo
    base_info: RunInfo | None
    metrics: tuple[MetricChange, ...]
    compared: tuple[str, ...]
    questions: tuple[QuestionChange, ...]  # one per compared question, sorted by id
    tags: tuple[TagChange, ...]
    goldset: GoldSetChanges
    stale: StaleChanges
    config: tuple[ConfigChange, ...]
    latency: tuple[tuple[str, float | None, float | None], ...]  # (stat, base, head)
    head_questions: tuple[QuestionRecord, ...]
    base_questions: tuple[QuestionRecord, ...]
    matrix: FailureMatrix
    cutoff: CutoffReport
    history: tuple[tuple[str, str, tuple[tuple[str, float], ...]], ...]  # (sha, at, means)

    @property
    def has_base(self) -> bool:
        return self.base_info is not None

    @property
    def k3(self) -> int:
        return 3 * self.k

    @property
    def index_changed(self) -> bool:
        return (self.base_info is not None
                and self.base_info.index_version != self.head_info.index_version)

    def metric(self, name: str) -> MetricChange | None:
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    @cached_property
    def regressions(self) -> tuple[QuestionChange, ...]:
        return tuple(sorted((q for q in self.questions if q.regression), key=_severity))

    @cached_property
    def improvements(self) -> tuple[QuestionChange, ...]:
        return tuple(sorted((q for q in self.questions if q.improvement), key=_severity))

    @cached_property
    def unchanged(self) -> tuple[QuestionChange, ...]:
        return tuple(q for q in self.questions if q.kind == "same")

    @cached_property
    def errors(self) -> tuple[QuestionRecord, ...]:
        return tuple(q for q in self.head_questions if q.status == "error")

    def head_question(self, qid: str) -> QuestionRecord | None:
        for q in self.head_questions:
            if q.id == qid:
                return q
        return None


def _severity(q: QuestionChange):
    moved = abs(q.delta("mrr")) if q.deltas else 0.0
    return (KIND_ORDER.index(q.kind), -moved, q.id)


# --------------------------------------------------------------------------- reading


def _record(q: dict) -> QuestionRecord:
    gold = q.get("gold") or {}
    if isinstance(gold, dict):
        gold_items = tuple(sorted((str(i), float(g)) for i, g in gold.items()))
    else:  # a plain list of ids: grade 1
        gold_items = tuple(sorted((str(i), 1.0) for i in gold))
    rank = q.get("first_gold_rank")
    top = q.get("top_score")
    return QuestionRecord(
        id=str(q["id"]),
        question=str(q.get("question", "")),
        tags=tuple(str(t) for t in q.get("tags") or ()),
        status=str(q.get("status", "ok")),
        unanswerable=bool(q.get("unanswerable", False)),
        gold=gold_items,
        stale=tuple(sorted(str(i) for i in q.get("stale") or ())),
        metrics=dict(q.get("metrics") or {}),
        first_gold_rank=None if rank is None else int(rank),
        top_score=None if top is None else float(top),
        error=q.get("error"),
        answer_correct=q.get("answer_correct"),
    )


def _info(a: dict) -> RunInfo:
    git = a.get("git") or {}
    gold = a.get("gold_set") or {}
    index = a.get("index") or {}
    return RunInfo(
        sha=git.get("sha"),
        ref=git.get("ref"),
        created_at=a.get("created_at"),
        index_version=index.get("version"),
        gold_index_version=gold.get("index_version"),
        gold_sha256=gold.get("sha256"),
        k=int(a["k"]),
        metrics=tuple(a.get("metrics") or ()),
        questions=len(a.get("questions") or ()),
        index_checked=bool(index.get("checked", True)),
    )


def _label(q: QuestionRecord) -> tuple:
    """What a question asks for. Stale ids count as gold here, so a re-ingestion that
    drops them from a post-filter gold list does not look like a relabel."""
    ids = frozenset(i for i, _ in q.gold) | frozenset(q.stale)
    return (q.unanswerable, ids)


def _relabel_note(b: QuestionRecord, h: QuestionRecord) -> str | None:
    if b.unanswerable != h.unanswerable:
        return "now unanswerable" if h.unanswerable else "now answerable"
    if _label(b) != _label(h):
        bi = {i for i, _ in b.gold} | set(b.stale)
        hi = {i for i, _ in h.gold} | set(h.stale)
        parts = []
        if hi - bi:
            parts.append(f"+{len(hi - bi)} gold")
        if bi - hi:
            parts.append(f"-{len(bi - hi)} gold")
        return ", ".join(parts)
    bg, hg = dict(b.gold), dict(h.gold)
    regraded = sorted(i for i in bg.keys() & hg.keys() if bg[i] != hg[i])
    if regraded:
        return f"{len(regraded)} gold regraded"
    return None


# --------------------------------------------------------------------------- config


def _flatten(value, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key in sorted(value, key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out.update(_flatten(value[key], path))
        if not value and prefix:
            out[prefix] = {}
        return out
    return {prefix: value}


def format_value(value: object) -> str:
    """A config value as users wrote it: strings bare, the rest as compact JSON."""
    if value is _UNSET:
        return "(unset)"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_UNSET = object()


def config_diff(base: dict | None, head: dict | None) -> tuple[ConfigChange, ...]:
    """Dotted paths whose value differs: ``retriever.params.b 0.75 -> 0.9``."""
    b, h = _flatten(base or {}), _flatten(head or {})
    changes = []
    for path in sorted(b.keys() | h.keys()):
        bv, hv = b.get(path, _UNSET), h.get(path, _UNSET)
        if bv is _UNSET or hv is _UNSET or bv != hv or type(bv) is not type(hv):
            changes.append(ConfigChange(path, format_value(bv), format_value(hv)))
    return tuple(changes)


# --------------------------------------------------------------------------- questions


def _rank(r: int | None) -> str:
    return "—" if r is None else str(r)


def _classify(b: QuestionRecord, h: QuestionRecord, k: int) -> tuple[str, str]:
    k3 = 3 * k
    if h.status == "error":
        return "error", f"retriever error: {h.error or 'unknown'}"
    bk, hk, b3, h3 = b.hit(k), h.hit(k), b.hit(k3), h.hit(k3)
    br, hr = b.first_gold_rank, h.first_gold_rank
    if bk and not hk:
        if h3:
            return "lost", f"fell just past k (now rank {hr}, within {k3})"
        return "lost", f"vanished (not in the top {k3})"
    if hk and not bk:
        if b.status == "error":
            return "gained", "retriever error fixed"
        if b3:
            return "gained", f"back within k (was rank {br})"
        return "gained", f"found again (was not in the top {k3})"
    if not hk and b3 and not h3:
        return "dropped", f"left the top {k3}"
    if not hk and h3 and not b3:
        return "rose", f"entered the top {k3}"
    where = (f"still in the top {k}" if hk else f"still in the top {k3}" if h3
             else f"below the top {k3}")
    if br is not None and (hr is None or hr > br):
        return "down", f"moved down, {where}"
    if hr is not None and (br is None or hr < br):
        return "up", f"moved up, {where}"
    return "same", ""


# --------------------------------------------------------------------------- the diff


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _stale_changes(base: dict[str, QuestionRecord] | None,
                   head: dict[str, QuestionRecord]) -> StaleChanges:
    head_stale = tuple(StaleQuestion(q.id, q.question, q.stale, q.status)
                       for q in head.values() if q.stale)
    new, resolved = [], []
    if base is not None:
        for q in head.values():
            b = base.get(q.id)
            before = set(b.stale) if b else set()
            if set(q.stale) - before and b is not None:
                new.append(StaleQuestion(q.id, q.question,
                                         tuple(sorted(set(q.stale) - before)), q.status))
            if b is not None and before - set(q.stale):
                resolved.append(StaleQuestion(q.id, q.question,
                                              tuple(sorted(before - set(q.stale))), q.status))
    return StaleChanges(
        head=head_stale,
        new=tuple(new),
        resolved=tuple(resolved),
        head_ids=sum(len(q.stale) for q in head.values()),
        base_ids=None if base is None else sum(len(q.stale) for q in base.values()),
    )


def diff(base: dict | None, head: dict, *, seed: int | None = None) -> Diff:
    """Compare two run artefacts (dicts in the design.md format). Pure; inputs untouched."""
    head_info = _info(head)
    base_info = _info(base) if base is not None else None
    k = head_info.k
    hq = {r.id: r for r in map(_record, head.get("questions") or ())}
    bq = {r.id: r for r in map(_record, base.get("questions") or ())} if base else None

    added, removed, relabelled, compared = [], [], [], []
    if bq is not None:
        for qid in sorted(hq.keys() - bq.keys()):
            added.append(QuestionRef(qid, hq[qid].question))
        for qid in sorted(bq.keys() - hq.keys()):
            removed.append(QuestionRef(qid, bq[qid].question))
        for qid in sorted(hq.keys() & bq.keys()):
            b, h = bq[qid], hq[qid]
            note = _relabel_note(b, h)
            if note:
                relabelled.append(QuestionRef(qid, h.question, note))
            elif not b.stale and not h.stale and b.measured and h.measured:
                compared.append(qid)
    goldset = GoldSetChanges(
        tuple(added), tuple(removed), tuple(relabelled),
        base_info.gold_sha256 if base_info else None, head_info.gold_sha256,
    )

    head_metrics = head_info.metrics
    base_metrics = set(base_info.metrics) if base_info else set()
    measured_head = [q for q in hq.values() if q.measured]
    measured_base = [q for q in bq.values() if q.measured] if bq is not None else []
    paired = {}
    for name in head_metrics:
        if name in base_metrics and compared:
            paired[name] = (np.array([bq[i].value(name) for i in compared]),
                            np.array([hq[i].value(name) for i in compared]))
    tests = paired_tests(paired, **({"seed": seed} if seed is not None else {}))
    metrics = []
    for name in head_metrics:
        t = tests.get(name)
        missing = None if bq is None or name in base_metrics else "base"
        metrics.append(MetricChange(
            name=name,
            base=t.base_mean if t else None,
            head=t.head_mean if t else None,
            delta=t.delta if t else None,
            head_overall=_mean([q.value(name) for q in measured_head]),
            base_overall=(_mean([q.value(name) for q in measured_base])
                          if name in base_metrics else None),
            test=t,
            missing=missing,
        ))
    for name in sorted(base_metrics - set(head_metrics)):
        metrics.append(MetricChange(name, None, None, None, None,
                                    _mean([q.value(name) for q in measured_base]),
                                    None, "head"))

    questions = []
    for qid in compared:
        b, h = bq[qid], hq[qid]
        kind, detail = _classify(b, h, k)
        deltas = tuple((name, h.value(name) - b.value(name)) for name in paired)
        questions.append(QuestionChange(qid, h.question, h.tags, kind, detail,
                                        b.first_gold_rank, h.first_gold_rank, deltas,
                                        h.error if h.status == "error" else None))

    tags = []
    by_tag: dict[str, list[int]] = {}
    for pos, qid in enumerate(compared):
        for tag in set(hq[qid].tags):
            by_tag.setdefault(tag, []).append(pos)
    for tag in sorted(by_tag):
        rows = np.array(by_tag[tag])
        tags.append(TagChange(tag, int(rows.size), tuple(
            (name, float(paired[name][0][rows].mean()), float(paired[name][1][rows].mean()))
            for name in paired)))

    def latency(a: dict | None) -> dict:
        if a is None:
            return {}
        return ((a.get("summary") or {}).get("latency_ms")) or {}

    bl, hl = latency(base), latency(head)
    lat = tuple((stat, bl.get(stat), hl.get(stat)) for stat in ("mean", "p50", "p95")
                if bl.get(stat) is not None or hl.get(stat) is not None)

    history = []
    for entry in head.get("history") or ():
        means = entry.get("means") or {}
        history.append((str(entry.get("sha") or ""), str(entry.get("created_at") or ""),
                        tuple(sorted((str(m), float(v)) for m, v in means.items()
                                     if v is not None))))

    return Diff(
        k=k,
        head_info=head_info,
        base_info=base_info,
        metrics=tuple(metrics),
        compared=tuple(compared),
        questions=tuple(questions),
        tags=tuple(tags),
        goldset=goldset,
        stale=_stale_changes(bq, hq),
        config=config_diff(base.get("config"), head.get("config")) if base else (),
        latency=lat,
        head_questions=tuple(sorted(hq.values(), key=lambda q: q.id)),
        base_questions=tuple(sorted(bq.values(), key=lambda q: q.id)) if bq else (),
        matrix=failure_matrix(base, head, tuple(compared)),
        cutoff=analyse_cutoff(base, head),
        history=tuple(history),
    )
