"""Per-question history over a branch's runs: which questions broke when, which flap, and
each tag's trend.

The runs are fed oldest first, a run's columns at a time (``HistoryBuilder.add_columns``; a
row at a time, ``add``, for an artefact not in the writer's layout), and nothing of a row is
kept but a few numbers: the first gold rank (int16) and the metric values (float32)
of each question at each run, and one bit per question and run for "its gold changed here".
So N artefacts of 100,000 questions cost about ``N * 100,000 * (2 + 4 * metrics)`` bytes,
never the artefacts themselves (benchmarks/bench_history.py measures it).

A question's *state* at a run is hit@k: its first gold chunk within the history's k.
- **failing since**: the first run of the unbroken stretch of misses that ends at the last
  run; **broken by**: that run's commit when a hit came before it (the first run that went
  from retrieved to missed and stayed missed). A question never retrieved has no breaker.
- **flapping**: its state changed at least ``FLAP_CHANGES`` times between runs sharing its
  gold (the question's own gold chunks) and the retriever's config (the recorded
  ``config.retriever`` and index version). One change is a break or a fix; a second can be
  a fix of that break; a third return is what a non-deterministic retriever or an
  approximate index does, and a commit rarely does.
- **per tag**: each metric's mean over the tag's answerable questions at each run, and at
  each run the paired sign-flip test of core/compare/stats.py against the run before over
  the questions both hold, the tag's metrics one family (Holm), so a move beyond noise is
  marked exactly as the PR comment marks one.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ci_eval.core.compare.stats import ALPHA, paired_tests

ABSENT = -1  # the question is not in that run's gold set
NO_GOLD = -2  # unanswerable: no gold chunk to find, no state
MISSED = 0  # no gold chunk in the recorded ranking
FLAP_CHANGES = 3
ALL = "(all)"


@dataclass(frozen=True)
class RunMark:
    """One run as the history names it."""

    label: str  # where it was read from
    sha: str | None
    created_at: str | None
    config_key: str  # the retriever's recorded config and index version, hashed

    @property
    def short(self) -> str:
        return self.sha[:7] if self.sha else self.label


def state_changes(state: np.ndarray, config: np.ndarray, gold_changed: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The flapping rule, for `ci-eval history` and for the comment's base-branch window
    alike (core/compare/recent_runs.py). ``state``: (questions, runs) int8, 1 hit at k, 0
    missed, -1 no state; ``config``: (runs,) int64, each run's retriever config key;
    ``gold_changed``: (questions, runs) bool, the question's gold changed at that run (None:
    not known, taken as unchanged). Per question and run: whether its state differs from its
    previous known one, and whether that change counts, i.e. happened between two runs of
    the same config and the same gold. A change that came with a toggled retriever
    parameter, a re-ingested index or a gold edit is what that change did, not noise; a
    question flaps when ``FLAP_CHANGES`` or more of its changes count."""
    q, r = state.shape
    known = state >= 0
    seen = np.where(known, np.arange(r), -1)
    last = np.maximum.accumulate(seen, axis=1)
    prev = np.full((q, r), -1, dtype=np.int64)
    prev[:, 1:] = last[:, :-1]
    has_prev = known & (prev >= 0)
    before = np.maximum(prev, 0)
    changed = has_prev & (state != np.take_along_axis(state, before, axis=1))
    same = config[None, :] == config[before]
    if gold_changed is not None:
        gold_version = np.cumsum(gold_changed, axis=1)
        same &= gold_version == np.take_along_axis(gold_version, before, axis=1)
    return changed, changed & same


def worst_first(ids, failing: np.ndarray, broken: np.ndarray, flapping: np.ndarray, failing_for: np.ndarray,
                misses: np.ndarray, changes: np.ndarray) -> np.ndarray:
    """The order every list of questions over runs is shown in (docs/history.md), worst first:
    1. broken now (missed since a run after having been retrieved) and not flapping, the
       longest broken first (most runs missed since);
    2. failing and never in the top k, not flapping, the longest first;
    3. flapping (failing now or not), the most misses first, then the most changes;
    4. the rest, the most misses first;
    then by id. A break that stays is what a reader must see first: a flapping question's
    misses, however many, may be noise, and at 100,000 questions the first rows shown are
    the long breaks, not the flappers."""
    group = np.where(flapping, 2, np.where(broken, 0, np.where(failing, 1, 3)))
    steady_break = group < 2
    first = np.where(steady_break, -failing_for, -misses)
    second = np.where(flapping, -changes, 0)
    return np.lexsort((np.array(ids, dtype=object).astype(str), second, first, group))


def config_key(config: dict, index_version: str | None) -> str:
    """What "the retriever's config" means for flapping: its recorded ``retriever`` table
    and the index version (a re-ingestion changes results legitimately)."""
    text = json.dumps([config.get("retriever"), index_version], sort_keys=True, default=str)
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def project_key(gold_set: dict, config: dict) -> tuple[str, str]:
    """What names the project a run belongs to, as its artefact records it: the gold set
    file its config names (``gold_set.path``) and its comment marker (``config.report``'s
    ``marker``, the one setting that tells two gold sets of one repository apart). The
    gold set's sha256, the retriever and the index change along a project's own history;
    these do not, short of moving the gold set."""
    report = config.get("report") if isinstance(config.get("report"), dict) else {}
    return (str(gold_set.get("path") or ""), str(report.get("marker") or ""))


def project_of(keys: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The project of a folder of runs (``keys`` oldest first): the key most runs hold, the
    newest run's among equals. One artefact of another project is outvoted, never joined."""
    counts: dict = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    most = max(counts.values())
    return next(key for key in reversed(keys) if counts[key] == most)


def linked_runs(present: np.ndarray) -> np.ndarray:
    """Which runs belong together by their questions: ``present`` (questions, runs) bool;
    runs that share a question are linked, and the largest group so linked is kept (the
    one holding the newest run among equals). A run of another project's gold set shares no
    question with this one's runs; a run without questions is kept (it says nothing)."""
    r = present.shape[1]
    shared = present.T.astype(np.float32) @ present.astype(np.float32) > 0
    group = list(range(r))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for a, b in zip(*np.nonzero(np.triu(shared, 1))):
        group[root(int(a))] = root(int(b))
    roots = [root(i) for i in range(r)]
    held = present.any(axis=0)
    sizes: dict = {}
    for i in range(r):
        if held[i]:
            sizes[roots[i]] = sizes.get(roots[i], 0) + 1
    if not sizes:
        return np.ones(r, dtype=bool)
    most = max(sizes.values())
    keep = next(roots[i] for i in reversed(range(r)) if held[i] and sizes[roots[i]] == most)
    return np.array([not held[i] or roots[i] == keep for i in range(r)], dtype=bool)


_MIX = np.uint64(0x9E3779B97F4A7C15)


def gold_keys(ids: Sequence[str], grades, starts) -> np.ndarray:
    """(questions,) uint64: a key of each question's gold pairs (chunk id, grade), whatever
    their order; question i's pairs are ``ids[starts[i]:starts[i + 1]]`` and the same of
    ``grades``. Equal gold, equal key (within one process: str hashes are salted per process);
    a different gold a different key but once in 2**64."""
    pairs = np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids)).view(np.uint64)
    bits = np.asarray(grades, dtype=np.float64).view(np.uint64)
    with np.errstate(over="ignore"):
        mixed = ((pairs * _MIX) ^ bits) * _MIX
        total = np.concatenate([np.zeros(1, np.uint64), np.cumsum(mixed, dtype=np.uint64)])
        at = np.asarray(starts, dtype=np.int64)
        return total[at[1:]] - total[at[:-1]]


class HistoryBuilder:
    """Rows in, oldest run first; ``build`` gives the ``History``."""

    def __init__(self, runs: Sequence[RunMark], metrics: Sequence[str], k: int):
        self.runs, self.metrics, self.k = tuple(runs), tuple(metrics), int(k)
        self._ids: dict[str, int] = {}
        self._tags: list[tuple[str, ...]] = []
        cap = 1024
        self._ranks = np.full((cap, len(self.runs)), ABSENT, dtype=np.int16)
        self._values = np.full((cap, len(self.runs), len(self.metrics)), np.nan, dtype=np.float32)
        self._gold_changed = np.zeros((cap, len(self.runs)), dtype=bool)
        self._gold = np.zeros(cap, dtype=np.uint64)  # each question's latest gold_keys

    def reserve(self, questions: int) -> None:
        """Room for ``questions`` questions at once (a run's count, before its rows): a
        steady gold set then takes its arrays once at their size, not doubled past it with
        the old and new copies held together (30 runs of 100,000 questions: peak RSS 405 MB
        with doubling alone, 368 MB reserved; benchmarks/bench_history.py)."""
        if questions > self._ranks.shape[0]:
            self._grow(questions)

    def _grow(self, cap: int | None = None) -> None:
        # doubling keeps the copies linear in the questions seen
        cap = cap or 2 * self._ranks.shape[0]
        ranks = np.full((cap, len(self.runs)), ABSENT, dtype=np.int16)
        values = np.full((cap, len(self.runs), len(self.metrics)), np.nan, dtype=np.float32)
        changed = np.zeros((cap, len(self.runs)), dtype=bool)
        gold = np.zeros(cap, dtype=np.uint64)
        n = len(self._tags)
        ranks[:n], values[:n], changed[:n] = self._ranks[:n], self._values[:n], self._gold_changed[:n]
        gold[:n] = self._gold[:n]
        self._ranks, self._values, self._gold_changed, self._gold = ranks, values, changed, gold

    def _row(self, qid: str) -> int:
        row = self._ids.get(qid)
        if row is None:
            row = self._ids[qid] = len(self._tags)
            if row == self._ranks.shape[0]:
                self._grow()
            self._tags.append(())
        return row

    def add(self, run: int, qid: str, tags, gold, unanswerable: bool, first_gold_rank: int | None,
            values: dict[str, float | None]) -> None:
        """One question's row of run ``run`` (``values``: metric name -> value): for an
        artefact not in the writer's layout (``add_columns`` takes the others)."""
        new = qid not in self._ids
        row = self._row(qid)
        self._tags[row] = tuple(tags)  # the latest tags name the question
        key = gold_keys([c for c, _ in gold], [g for _, g in gold], [0, len(gold)])[0]
        if not new and self._gold[row] != key:
            self._gold_changed[row, run] = True
        self._gold[row] = key
        if unanswerable:
            self._ranks[row, run] = NO_GOLD
        else:
            # ranks past int16 are past any recorded depth worth telling apart
            self._ranks[row, run] = MISSED if first_gold_rank is None else min(int(first_gold_rank), 32767)
        for m, name in enumerate(self.metrics):
            value = values.get(name)
            if value is not None:
                self._values[row, run, m] = value

    def add_columns(self, run: int, metrics: Sequence[str], columns) -> None:
        """Every question of run ``run`` at once from its artefact's columns
        (core/artefact/question_columns.QuestionColumns, ``metrics``: its metric names): the
        same as ``add`` of each row in turn, with arrays for the rows' loop."""
        n = len(columns.ids)
        if n > self._ranks.shape[0] - len(self._tags):
            self._grow(max(len(self._tags) + n, 2 * self._ranks.shape[0]))
        known = len(self._tags)
        rows = np.fromiter(map(self._row, columns.ids), dtype=np.int64, count=n)
        tag_lists = columns.tag_lists
        for row, t in zip(rows.tolist(), columns.tags):
            self._tags[row] = tag_lists[t]  # the latest tags name the question
        keys = gold_keys(columns.gold_ids, columns.gold_grades, columns.gold_start)
        self._gold_changed[rows[(rows < known) & (self._gold[rows] != keys)], run] = True
        self._gold[rows] = keys
        first = np.frombuffer(columns.first_rank, dtype=np.int32).astype(np.int64) if n else np.zeros(0, np.int64)
        for i in columns.big_ranks:
            first[i] = 32767
        ranks = np.where(first < 0, MISSED, np.minimum(first, 32767))  # past int16: past any depth told apart
        unanswerable = np.frombuffer(bytes(columns.unanswerable), dtype=np.uint8).astype(bool)
        self._ranks[rows, run] = np.where(unanswerable, NO_GOLD, ranks)
        table = columns.table.values
        for m, name in enumerate(self.metrics):
            j = columns.table.where.get(name)
            if j is not None:
                self._values[rows, run, m] = table[:, j]

    def unlinked(self) -> list[int]:
        """The runs read so far that share no question with the others' group (``linked_runs``)."""
        n = len(self._tags)
        return [int(i) for i in np.nonzero(~linked_runs(self._ranks[:n] != ABSENT))[0]]

    def build(self, dropped: Sequence[int] = ()) -> History:
        """The history, without the runs ``dropped`` (read, then found not to belong) and the
        questions only they held."""
        n = len(self._tags)
        ranks, values, changed = self._ranks[:n], self._values[:n], self._gold_changed[:n]
        ids, tags, runs = tuple(self._ids), tuple(self._tags), self.runs
        if dropped:
            keep = np.ones(len(runs), dtype=bool)
            keep[list(dropped)] = False
            rows = (ranks[:, keep] != ABSENT).any(axis=1)
            ranks, values, changed = ranks[rows][:, keep], values[rows][:, keep], changed[rows][:, keep]
            ids = tuple(i for i, kept in zip(ids, rows.tolist()) if kept)
            tags = tuple(t for t, kept in zip(tags, rows.tolist()) if kept)
            runs = tuple(run for run, kept in zip(runs, keep.tolist()) if kept)
        return History(runs, self.metrics, self.k, ids, tags, ranks, values, changed)


@dataclass(frozen=True)
class QuestionLine:
    """What the history says of one question."""

    id: str
    row: int  # its row in the history's arrays
    tags: tuple[str, ...]
    ranks: tuple[int, ...]  # per run: first gold rank, MISSED, NO_GOLD or ABSENT
    hits: int
    misses: int
    changes: int  # state changes between runs of the same gold and config
    flapping: bool
    failing_since: int | None  # run index
    broken_by: int | None  # run index of the break (a hit before it)


@dataclass(frozen=True)
class TagPoint:
    """One tag's metric at one run."""

    mean: float | None
    n: int
    delta: float | None = None  # against the run before, over the questions both hold
    significant: bool = False


@dataclass(frozen=True)
class History:
    runs: tuple[RunMark, ...]
    metrics: tuple[str, ...]
    k: int
    ids: tuple[str, ...]
    tags: tuple[tuple[str, ...], ...]
    ranks: np.ndarray  # (questions, runs) int16
    values: np.ndarray  # (questions, runs, metrics) float32, NaN where not measured
    gold_changed: np.ndarray  # (questions, runs) bool

    @property
    def hit_metric(self) -> str:
        return f"hit@{self.k}"

    def states(self) -> np.ndarray:
        """(questions, runs) int8: 1 hit at k, 0 missed, -1 no state (absent, unanswerable)."""
        known = self.ranks >= 0
        hit = (self.ranks > 0) & (self.ranks <= self.k)
        return np.where(known, hit.astype(np.int8), np.int8(-1))

    def _changes(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cfg = np.array([int(run.config_key, 16) for run in self.runs], dtype=np.int64)
        return state_changes(state, cfg, self.gold_changed)

    def lines(self) -> list[QuestionLine]:
        """Every question, worst first (``worst_first``)."""
        state = self.states()
        q, r = state.shape
        if q == 0:
            return []
        changed, flaps = self._changes(state)
        hits = (state == 1).sum(axis=1)
        misses = (state == 0).sum(axis=1)
        changes = flaps.sum(axis=1)
        known = state >= 0
        last_known = np.where(known.any(axis=1), r - 1 - np.argmax(known[:, ::-1], axis=1), -1)
        last_state = np.take_along_axis(state, np.maximum(last_known, 0)[:, None], axis=1)[:, 0]
        failing = (last_known >= 0) & (last_state == 0)
        hit_at = np.where(state == 1, np.arange(r), -1).max(axis=1)
        # the first known run after the last hit (or the first known run: never retrieved)
        after = known & (np.arange(r)[None, :] > hit_at[:, None])
        since = np.where(failing, np.argmax(after, axis=1), -1)
        failing_for = np.where(failing, after.sum(axis=1), 0)  # known runs missed since
        broken = failing & (hit_at >= 0)
        flapping = changes >= FLAP_CHANGES
        order = worst_first(self.ids, failing, broken, flapping, failing_for, misses, changes)
        out = []
        for i in order:
            f = bool(failing[i])
            out.append(QuestionLine(
                id=self.ids[i], row=int(i), tags=self.tags[i], ranks=tuple(int(x) for x in self.ranks[i]),
                hits=int(hits[i]), misses=int(misses[i]), changes=int(changes[i]),
                flapping=bool(flapping[i]),
                failing_since=int(since[i]) if f else None,
                broken_by=int(since[i]) if f and hit_at[i] >= 0 else None,
            ))
        return out

    def tag_names(self) -> list[str]:
        return [ALL] + sorted({t for tags in self.tags for t in tags})

    def _tag_mask(self, tag: str) -> np.ndarray:
        if tag == ALL:
            return np.ones(len(self.ids), dtype=bool)
        return np.array([tag in tags for tags in self.tags], dtype=bool)

    def trends(self, alpha: float = ALPHA) -> dict[str, dict[str, list[TagPoint]]]:
        """``{tag: {metric: [point per run]}}``: the mean over the tag's answerable
        questions, and the paired test against the run before."""
        answerable = self.ranks != NO_GOLD
        out = {}
        for tag in self.tag_names():
            mask = self._tag_mask(tag)
            per_metric = {m: [] for m in self.metrics}
            before = None  # the previous run's (values, measured) of the tag, one run held at a time
            for run in range(len(self.runs)):
                values = self.values[mask, run, :].astype(np.float64)
                ok = ~np.isnan(values) & answerable[mask, run][:, None]
                tests = {}
                if before is not None:
                    shared = before[1].all(axis=1) & ok.all(axis=1)
                    if shared.any():
                        tests = paired_tests({m: (before[0][shared, j], values[shared, j])
                                              for j, m in enumerate(self.metrics)}, alpha=alpha,
                                          with_mdc=False, with_interval=False)  # a trend point shows neither
                for j, m in enumerate(self.metrics):
                    column = values[ok[:, j], j]
                    mean = math.fsum(column.tolist()) / column.size if column.size else None
                    t = tests.get(m)
                    per_metric[m].append(TagPoint(mean, int(column.size), None if t is None else t.delta,
                                                  bool(t is not None and t.significant)))
                before = (values, ok)
            out[tag] = per_metric
        return out


def csv_rows(history: History) -> Iterator[list]:
    """One row per question and run it is in: the long table a spreadsheet pivots."""
    yield ["question", "run", "sha", "created_at", "hit", "first_gold_rank", *history.metrics]
    state = history.states()
    for i, qid in enumerate(history.ids):
        for r, run in enumerate(history.runs):
            rank = int(history.ranks[i, r])
            if rank == ABSENT:
                continue
            # float32 holds about 7 digits: 6 are written, the rest would be float32 noise
            values = ["" if math.isnan(v) else f"{v:.6g}" for v in history.values[i, r].tolist()]
            yield [qid, r + 1, run.sha or "", run.created_at or "",
                   "" if state[i, r] < 0 else int(state[i, r]),
                   "" if rank <= 0 else rank, *values]
