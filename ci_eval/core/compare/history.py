"""Per-question history over a branch's runs: which questions broke when, which flap, and
each tag's trend.

The runs are fed oldest first, a run's columns at a time (``HistoryBuilder.add_run``; a
row at a time, ``add``, for an artefact not in the writer's layout), and nothing of a row is
kept but a few numbers: the first gold rank (int16) and the metric values (float32)
of each question at each run, and one bit per question and run for "its gold changed here".
So N artefacts of 100,000 questions cost about ``N * 100,000 * (2 + 4 * metrics)`` bytes,
never the artefacts themselves (benchmarks/bench_history.py measures it). The CSV of every
question and run (``csv_pieces``) is made from these arrays too, a piece of questions at a time.

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

import csv
import json
import math
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import count, repeat

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


RANK_CAP = 32767  # first gold ranks past int16 are past any recorded depth worth telling apart


@dataclass(frozen=True)
class RunRows:
    """What the history takes of one run's question rows, as columns (inputs/history_file.py
    reads them): a row's id, tags, the ``gold_keys`` of its gold pairs, whether it is
    unanswerable, its first gold rank (0 when no gold chunk was ranked, at most
    ``RANK_CAP``) and its values of ``metrics`` (NaN where none is recorded)."""

    metrics: tuple[str, ...]
    ids: list[str]
    tags: list[tuple[str, ...]]
    gold: np.ndarray  # (rows,) uint64
    unanswerable: np.ndarray  # (rows,) bool
    first_rank: np.ndarray  # (rows,) int16
    values: np.ndarray  # (rows, metrics) float32


class HistoryBuilder:
    """Rows in, oldest run first; ``build`` gives the ``History``."""

    def __init__(self, runs: Sequence[RunMark], metrics: Sequence[str], k: int):
        self.runs, self.metrics, self.k = tuple(runs), tuple(metrics), int(k)
        self._ids: dict[str, int] = {}
        cap = 1024
        self._tags = np.empty(cap, dtype=object)  # each question's latest tags, a tuple
        self._ranks = np.full((cap, len(self.runs)), ABSENT, dtype=np.int16)
        self._values = np.full((cap, len(self.runs), len(self.metrics)), np.nan, dtype=np.float32)
        self._gold_changed = np.zeros((cap, len(self.runs)), dtype=bool)
        self._gold = np.zeros(cap, dtype=np.uint64)  # each question's latest gold_keys
        self._last: tuple = (None, None)  # the ids of the last run added and their rows

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
        tags = np.empty(cap, dtype=object)
        ranks = np.full((cap, len(self.runs)), ABSENT, dtype=np.int16)
        values = np.full((cap, len(self.runs), len(self.metrics)), np.nan, dtype=np.float32)
        changed = np.zeros((cap, len(self.runs)), dtype=bool)
        gold = np.zeros(cap, dtype=np.uint64)
        n = len(self._ids)
        tags[:n], ranks[:n], values[:n], changed[:n] = self._tags[:n], self._ranks[:n], self._values[:n], self._gold_changed[:n]
        gold[:n] = self._gold[:n]
        self._tags, self._ranks, self._values, self._gold_changed, self._gold = tags, ranks, values, changed, gold

    def _row(self, qid: str) -> int:
        row = self._ids.get(qid)
        if row is None:
            row = len(self._ids)
            if row == self._ranks.shape[0]:
                self._grow()
            self._ids[qid] = row
        return row

    def add(self, run: int, qid: str, tags, gold, unanswerable: bool, first_gold_rank: int | None,
            values: dict[str, float | None]) -> None:
        """One question's row of run ``run`` (``values``: metric name -> value): for an
        artefact not in the writer's layout (``add_run`` takes the others)."""
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
            self._ranks[row, run] = MISSED if first_gold_rank is None else min(int(first_gold_rank), RANK_CAP)
        for m, name in enumerate(self.metrics):
            value = values.get(name)
            if value is not None:
                self._values[row, run, m] = value

    def _rows_of(self, ids: list[str]) -> np.ndarray:
        """Each id's row, new ids given the next rows in turn: the previous run's rows when its
        ids were these (a steady gold set), else dict lookups in C and Python only for the ids
        not seen before."""
        if ids == self._last[0]:
            return self._last[1]
        rows = np.fromiter(map(self._ids.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
        new = np.flatnonzero(rows < 0)
        if new.size:
            known = len(self._ids)
            if known + new.size > self._ranks.shape[0]:
                self._grow(max(known + new.size, 2 * self._ranks.shape[0]))
            rows[new] = np.arange(known, known + new.size)
            self._ids.update(zip(map(ids.__getitem__, new.tolist()), rows[new].tolist()))
        self._last = (ids, rows)
        return rows

    def add_run(self, run: int, rows: RunRows) -> None:
        """Every question of run ``run`` at once (ids unique): the same as ``add`` of each row
        in turn, with arrays for the rows' loop."""
        n = len(rows.ids)
        known = len(self._ids)
        at = self._rows_of(rows.ids)
        self._tags[at] = np.fromiter(rows.tags, dtype=object, count=n)  # the latest tags name the question
        self._gold_changed[at[(at < known) & (self._gold[at] != rows.gold)], run] = True
        self._gold[at] = rows.gold
        self._ranks[at, run] = np.where(rows.unanswerable, NO_GOLD, rows.first_rank)
        for m, name in enumerate(self.metrics):
            if name in rows.metrics:
                self._values[at, run, m] = rows.values[:, rows.metrics.index(name)]

    def unlinked(self) -> list[int]:
        """The runs read so far that share no question with the others' group (``linked_runs``)."""
        n = len(self._ids)
        return [int(i) for i in np.nonzero(~linked_runs(self._ranks[:n] != ABSENT))[0]]

    def build(self, dropped: Sequence[int] = ()) -> History:
        """The history, without the runs ``dropped`` (read, then found not to belong) and the
        questions only they held."""
        n = len(self._ids)
        ranks, values, changed = self._ranks[:n], self._values[:n], self._gold_changed[:n]
        ids, tags, runs = tuple(self._ids), tuple(self._tags[:n].tolist()), self.runs
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
        # each array taken in that order as Python values at once, not an element at a time
        ranks = self.ranks[order].tolist()
        hits, misses, changes, flapping, failing, since, retrieved = (
            a[order].tolist() for a in (hits, misses, changes, flapping, failing, since, hit_at >= 0))
        return [QuestionLine(
            id=self.ids[i], row=i, tags=self.tags[i], ranks=tuple(ranks[n]), hits=hits[n], misses=misses[n],
            changes=changes[n], flapping=flapping[n], failing_since=since[n] if failing[n] else None,
            broken_by=since[n] if failing[n] and retrieved[n] else None,
        ) for n, i in enumerate(order.tolist())]

    @cached_property
    def _tag_lists(self) -> tuple[np.ndarray, dict[tuple, int]]:
        """Each question's code of its list of tags, and each distinct list's code: a tag's
        questions are then found over the few distinct lists, not over every question."""
        codes: dict[tuple, int] = {}
        # setdefault's default counts every question, so each list keeps its first question's number
        at = np.fromiter(map(codes.setdefault, self.tags, count()), dtype=np.int64, count=len(self.tags))
        return at, codes

    def tag_names(self) -> list[str]:
        return [ALL] + sorted({t for tags in self._tag_lists[1] for t in tags})

    def _tag_mask(self, tag: str) -> np.ndarray:
        if tag == ALL:
            return np.ones(len(self.ids), dtype=bool)
        at, codes = self._tag_lists
        return np.isin(at, [code for tags, code in codes.items() if tag in tags])

    def trends(self, alpha: float = ALPHA) -> dict[str, dict[str, list[TagPoint]]]:
        """``{tag: {metric: [point per run]}}``: the mean over the tag's answerable
        questions, and the paired test against the run before."""
        answerable = self.ranks != NO_GOLD
        out = {}
        for tag in self.tag_names():
            if tag == ALL:  # every question: no copy
                tag_values, tag_answerable = self.values, answerable
            else:
                mask = self._tag_mask(tag)
                tag_values, tag_answerable = self.values[mask], answerable[mask]
            per_metric = {m: [] for m in self.metrics}
            before = None  # the previous run's (values, measured) of the tag, one run held at a time
            for run in range(len(self.runs)):
                values = tag_values[:, run, :].astype(np.float64)
                ok = ~np.isnan(values) & tag_answerable[:, run][:, None]
                tests = {}  # metric -> (delta, significant)
                if before is not None:
                    shared = before[1].all(axis=1) & ok.all(axis=1)
                    if shared.any():
                        old, new = before[0][shared], values[shared]
                        if np.array_equal(old, new):  # no value moved: every test's delta 0, p = 1
                            tests = dict.fromkeys(self.metrics, (0.0, False))
                        else:
                            tests = {m: (t.delta, t.significant) for m, t in paired_tests(
                                {m: (old[:, j], new[:, j]) for j, m in enumerate(self.metrics)}, alpha=alpha,
                                with_mdc=False, with_interval=False).items()}  # a trend point shows neither
                for j, m in enumerate(self.metrics):
                    column = values[ok[:, j], j]
                    mean = math.fsum(column.tolist()) / column.size if column.size else None
                    delta, significant = tests.get(m, (None, False))
                    per_metric[m].append(TagPoint(mean, int(column.size), delta, bool(significant)))
                before = (values, ok)
            out[tag] = per_metric
        return out


def csv_pieces(history: History, questions: int = 2000) -> Iterator[str]:
    """The CSV of every question and run it is in, one line each (the long table a
    spreadsheet pivots), a piece of ``questions`` questions at a time: question, run (from
    1), sha, created_at, hit (empty with no state), first gold rank (empty when none) and
    each metric's value (6 significant digits: float32 holds about 7, the rest would be its
    noise; empty when not measured). Made with arrays, not a loop over 3,000,000 lines:
    each id, run and rank is quoted or written once, each distinct row of values once, and
    the lines are joined from those texts; quoted as ``csv.writer`` quotes (each text is
    written by it), so the bytes are that writer's."""
    quote = _csv_quoter()
    yield quote(["question", "run", "sha", "created_at", "hit", "first_gold_rank", *history.metrics]) + "\n"
    runs = np.array([f"{r + 1},{quote([run.sha or ''])},{quote([run.created_at or ''])},"
                     for r, run in enumerate(history.runs)], dtype=object)
    ranks_seen, values_seen = {}, {}  # text of each first gold rank, of each distinct row of values
    for start in range(0, len(history.ids), questions):
        ranks = history.ranks[start:start + questions]
        at, run = np.nonzero(ranks != ABSENT)  # question by question, runs in order
        if not at.size:
            continue
        ids = np.array([quote([qid]) + "," for qid in history.ids[start:start + questions]], dtype=object)
        rank_text = _texts(ranks[at, run], lambda x: _rank_cells(x, history.k), ranks_seen)
        values = history.values[start:start + questions][at, run]
        value_text = _texts(_row_keys(values), partial(_value_cells, dtype=values.dtype, metrics=values.shape[1]),
                            values_seen)
        yield "".join((ids[at] + runs[run] + rank_text + value_text).tolist())


def _row_keys(values: np.ndarray) -> np.ndarray:
    """Each row of ``values`` as one opaque value of its bytes, so equal rows are found at once."""
    if not values.shape[1]:
        return np.zeros(len(values), dtype="V1")
    return np.ascontiguousarray(values).view(np.dtype((np.void, values.dtype.itemsize * values.shape[1])))[:, 0]


class _Written(list):
    """What a ``csv.writer`` writes, kept as text: the core opens no stream, not even in memory."""

    write = list.append


def _csv_quoter():
    """A row of texts -> its CSV line as ``csv.writer`` writes it, without the line end."""
    written = _Written()
    writer = csv.writer(written, lineterminator="\n")

    def quote(row: list) -> str:
        written.clear()
        writer.writerow([*row, ""])  # one more, empty: a lone empty text would be written as ""
        return "".join(written)[:-2]

    return quote


def _rank_cells(rank: int, k: int) -> str:
    """The hit and first gold rank cells of a question's rank at a run (``History.states``)."""
    if rank < 0:  # unanswerable: no state
        return ",,"
    return f"{int(0 < rank <= k)},{rank if rank > 0 else ''},"


def _value_cells(row: bytes, dtype, metrics: int) -> str:
    values = np.frombuffer(row, dtype=dtype, count=metrics).tolist()
    return ",".join("" if math.isnan(v) else f"{v:.6g}" for v in values) + "\n"


def _texts(keys: np.ndarray, text, seen: dict) -> np.ndarray:
    """``text(key)`` of each of ``keys`` as an object array, each distinct key's text made
    once (``seen`` keeps them from one piece to the next)."""
    distinct, where = np.unique(keys, return_inverse=True)
    texts = [seen[k] if k in seen else seen.setdefault(k, text(k)) for k in distinct.tolist()]
    return np.array(texts, dtype=object)[where.reshape(-1)]
