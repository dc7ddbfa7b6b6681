"""One artefact's questions as columns, filled while its rows stream by; a ``QuestionResult``
is built only when a reader asks for that question.

A typed record per question, kept for every question of both artefacts, was most of what a
comparison held at a million questions (about 650 bytes a question beyond its id and text:
the record, its top ids, gold pairs and gold ranks as tuples of objects). Here each field is
one packed array or list for the whole artefact: status and flags as bytes, ranks and scores
as machine numbers, the gold pairs, their ranks and the kept top ids as flat runs with an
offset per question, and what few questions have (an error, warnings, stale gold) in a map by
position. ``Questions`` is the sequence of records over them, made on demand and not kept.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from itertools import accumulate, chain, compress, count, cycle, islice, pairwise, repeat
from operator import add, ge

from ci_eval.core.artefact.question_result import MEASURED, GoldRank, QuestionResult, built_question

_NO_RANK = -1  # the gold chunk is not in the recorded ranking (rank None)
_NOT_RELEVANT = -2  # below the relevance level, or stale: no GoldRank for it
_NAN = float("nan")
# The grades almost every gold set uses, one float object each: a gold move keeps its grade.
_GRADES = {grade: float(grade) for grade in (0, 1, 2, 3)}
_BIG = 1 << 31  # a first gold rank this large (the schema sets no bound) is kept aside
_ANSWER = {False: 0, True: 1, None: 2}
_ANSWER_OF = (False, True, None)
_NONE_IS_NAN = {None: _NAN}  # .get(v, v): v, or NaN for None
_NONE_IS_NO_RANK = {None: _NO_RANK}
_INT_OR_NONE = {int, type(None)}


class QuestionColumns:
    """The columns of one artefact's questions (``add``: one question's fields, in
    reading order). ``table``: a MetricTable whose row i is question i, or None when each
    question brings its own metric mapping (version 1)."""

    def __init__(self, table=None, strings: dict | None = None):
        self.table = table
        self.ids: list[str] = []
        self.text_bytes = bytearray()  # the question texts as UTF-8, one after another
        self.text_start = array("Q", [0])
        self.tags = array("I")  # index into tag_lists
        self.tag_lists: list[tuple[str, ...]] = []
        self._tag_index: dict = {}
        self.status = bytearray()  # index into status_names
        self.status_names: list[str] = []
        self.unanswerable = bytearray()
        self.first_rank = array("i")  # -1: None; one past 32 bits is in big_ranks
        self.big_ranks: dict[int, int] = {}
        self.top_score = array("d")  # NaN: None (a recorded score is never NaN)
        self.answer = bytearray()  # 0 False, 1 True, 2 None
        self.returned = array("I")  # a ranking holds at most 10,000 results
        self.gold_start = array("I", [0])  # at most 1,000 gold pairs a question
        self.gold_ids: list[str] = []
        self.gold_grades = array("d")
        self.gold_ranks = array("i")  # per gold pair: its rank, _NO_RANK or _NOT_RELEVANT
        self.top_start = array("Q", [0])
        self.top_ids: list[str] = []
        self.errors: dict[int, str] = {}
        self.warnings: dict[int, tuple[str, ...]] = {}
        self.stale: dict[int, tuple[str, ...]] = {}
        self.answered = False  # whether any question has an answer verdict
        self.own_metrics: list = []  # version 1: each question's metric mapping
        # one string per id kept (``strings``: another artefact's, to share theirs too)
        self.strings: dict[str, str] = {} if strings is None else strings

    def __len__(self) -> int:
        return len(self.ids)

    def done_reading(self) -> None:
        """Forget the id -> string map once no other artefact will be read against it
        (about 80 MB at a million questions; the strings themselves stay in the columns)."""
        self.strings = {}

    def status_code(self, status: str) -> int:
        names = self.status_names
        if status not in names:
            names.append(status)
        return names.index(status)

    def add(self, qid, text, tags, status, unanswerable, gold, stale, rank, top, error,
            answer_correct, warnings, ids, depth: int, relevance: float, metrics=None) -> None:
        """One question: ``gold`` its (chunk id, grade) pairs sorted, ``stale`` its stale ids
        sorted, ``ids`` its ranking's chunk ids best first, ``metrics`` its own mapping
        (version 1; version 2 values go to the table)."""
        i = len(self.ids)
        self.ids.append(self.strings.setdefault(qid, qid))
        self.text_bytes += text.encode("utf-8", "surrogatepass")
        self.text_start.append(len(self.text_bytes))
        where = self._tag_index.get(tags)
        if where is None:
            where = self._tag_index[tags] = len(self.tag_lists)
            self.tag_lists.append(tags)
        self.tags.append(where)
        self.status.append(self.status_code(status))
        self.unanswerable.append(1 if unanswerable else 0)
        if rank is not None and rank >= _BIG:
            self.big_ranks[i], rank = rank, _NO_RANK
        self.first_rank.append(_NO_RANK if rank is None else rank)
        self.top_score.append(_NAN if top is None else top)
        self.answer.append(_ANSWER[answer_correct])
        self.answered = self.answered or answer_correct is not None
        self.returned.append(len(ids))
        self._gold(gold, stale, ids, relevance)
        strings = self.strings
        self.top_ids.extend(map(strings.setdefault, ids[:depth], ids[:depth]))
        self.top_start.append(len(self.top_ids))
        if error is not None:
            self.errors[i] = error
        if warnings:
            self.warnings[i] = tuple(warnings)
        if stale:
            self.stale[i] = stale
        if metrics is not None:
            self.own_metrics.append(metrics)

    def _gold(self, gold, stale, ids, relevance: float) -> None:
        strings = self.strings
        for cid, grade in gold:
            self.gold_ids.append(strings.setdefault(cid, cid))
            self.gold_grades.append(grade)
            if grade < relevance or cid in stale:
                self.gold_ranks.append(_NOT_RELEVANT)
                continue
            try:
                self.gold_ranks.append(ids.index(cid) + 1)  # the first place it came back
            except ValueError:
                self.gold_ranks.append(_NO_RANK)
        self.gold_start.append(len(self.gold_ids))

    def relevant_counts(self) -> list[int]:
        """Per question, how many of its gold pairs were ranked: those at or above the
        relevance level and not stale (what a stage record of it counts)."""
        ranks, starts = self.gold_ranks, self.gold_start
        return [len(ranks[a:b]) - ranks[a:b].count(_NOT_RELEVANT) for a, b in pairwise(starts)]

    # ------------------------------------------------------------------ a block at a time
    def add_block(self, block, depth: int, relevance: float) -> None:
        """A checked block of version 2 rows (core/artefact/row_blocks.py): the same columns as
        ``add`` of each of its questions in turn, each filled for the whole block at once
        (the metric values go to the table separately, ``MetricTable.extend``)."""
        start, field = len(self.ids), block.field
        strings = self.strings
        qids = field("id")
        self.ids.extend(map(strings.setdefault, qids, qids))
        self._texts(field("question"))
        self._tag_block(field("tags"))
        self.status.extend(map(self._codes(field("status")).__getitem__, field("status")))
        self.unanswerable += bytes(field("unanswerable"))
        self._ranks_block(field("first_gold_rank"), start)
        tops = field("top_score")
        self.top_score.extend(map(_NONE_IS_NAN.get, tops, tops))
        answers = field("answer_correct")
        self.answer.extend(map(_ANSWER.__getitem__, answers))
        self.answered = self.answered or answers.count(None) != len(answers)
        self.returned.extend(block.ranking_lens)
        self._gold_block(block, relevance, start)
        self._top_block(block.rankings, block.ranking_ids, block.ranking_lens, depth)
        self._by_position(start, field("error"), field("warnings"), field("stale"))

    def _texts(self, texts) -> None:
        joined = "".join(texts)
        if joined.isascii():  # a character a byte: the lengths are the strings'
            self.text_bytes += joined.encode("ascii")
            lengths = map(len, texts)
        else:
            encoded = list(map(str.encode, texts, repeat("utf-8"), repeat("surrogatepass")))
            self.text_bytes += b"".join(encoded)
            lengths = map(len, encoded)
        self.text_start.extend(_ends(lengths, self.text_start[-1]))

    def _tag_block(self, tag_lists) -> None:
        tags = list(map(tuple, tag_lists))
        index = self._tag_index
        for tag_list in dict.fromkeys(tags):
            if tag_list not in index:
                index[tag_list] = len(self.tag_lists)
                self.tag_lists.append(tag_list)
        self.tags.extend(map(index.__getitem__, tags))

    def _codes(self, statuses) -> dict:
        """Each status of the block -> its code, new names added in first-seen order."""
        return {status: self.status_code(status) for status in dict.fromkeys(statuses)}

    def _ranks_block(self, ranks, start: int) -> None:
        if set(map(type, ranks)) <= _INT_OR_NONE and max(filter(None, ranks), default=0) < _BIG:
            self.first_rank.extend(map(_NONE_IS_NO_RANK.get, ranks, ranks))
            return
        for i, rank in enumerate(ranks, start):  # a whole float, or a rank past 32 bits
            rank = None if rank is None else int(rank)
            if rank is not None and rank >= _BIG:
                self.big_ranks[i], rank = rank, _NO_RANK
            self.first_rank.append(_NO_RANK if rank is None else rank)

    def _gold_block(self, block, relevance: float, start: int) -> None:
        ids, grades = _sorted_gold(block.gold_ids, block.gold_grades, block.gold_lens)
        strings = self.strings
        self.gold_ids.extend(map(strings.setdefault, ids, ids))
        self.gold_grades.extend(grades)
        self.gold_ranks.extend(self._gold_rank_block(block, ids, grades, relevance))
        self.gold_start.extend(_ends(block.gold_lens, self.gold_start[-1]))

    @staticmethod
    def _gold_rank_block(block, ids, grades, relevance: float) -> list:
        """Each gold pair's rank (``_gold``): the place its chunk came back in its own
        row's ranking, _NO_RANK when it did not, _NOT_RELEVANT below the level or stale."""
        counts = block.gold_lens
        owners = list(chain.from_iterable(map(repeat, block.rankings, counts)))  # each pair's ranking
        back = list(map(dict.__contains__, owners, ids))  # whether each gold chunk came back
        places = map(add, map(list.index, map(list, compress(owners, back)), compress(ids, back)), repeat(1))
        ranks = list(places) if all(back) else [next(places) if came else _NO_RANK for came in back]
        if grades and min(grades) < relevance:
            ranks = [_NOT_RELEVANT if g < relevance else r for g, r in zip(grades, ranks)]
        stale = block.field("stale")
        if any(stale):
            rows = chain.from_iterable(map(repeat, stale, counts))
            ranks = [_NOT_RELEVANT if cid in row else r for row, cid, r in zip(rows, ids, ranks)]
        return ranks

    def _top_block(self, rankings, flat: list, counts, depth: int) -> None:
        """The kept top ids: each ranking's first ``depth`` (``flat``: all their ids in one run)."""
        if max(counts, default=0) <= depth:
            ids = flat
        elif min(counts) == max(counts):  # rankings of one length: the same places of each
            ids = list(compress(flat, cycle([1] * depth + [0] * (counts[0] - depth))))
            counts = [depth] * len(counts)
        else:
            ids = list(chain.from_iterable(map(islice, rankings, repeat(depth))))
            counts = list(map(min, counts, repeat(depth)))
        strings = self.strings
        self.top_ids.extend(map(strings.setdefault, ids, ids))
        self.top_start.extend(_ends(counts, self.top_start[-1]))

    def _by_position(self, start: int, errors, warnings, stale) -> None:
        """What few questions have, by position."""
        if errors.count(None) != len(errors):
            self.errors.update((i, e) for i, e in enumerate(errors, start) if e is not None)
        if any(warnings):
            self.warnings.update((i, tuple(w)) for i, w in enumerate(warnings, start) if w)
        if any(stale):
            self.stale.update((i, tuple(sorted(s))) for i, s in enumerate(stale, start) if s)

    # ------------------------------------------------------------------ reading back
    def text(self, i: int) -> str:
        raw = self.text_bytes[self.text_start[i]:self.text_start[i + 1]]
        return raw.decode("utf-8", "surrogatepass")

    def first_gold_rank(self, i: int) -> int | None:
        rank = self.first_rank[i]
        return self.big_ranks.get(i) if rank == _NO_RANK else rank

    def gold(self, i: int) -> tuple[tuple[str, float], ...]:
        a, b = self.gold_start[i], self.gold_start[i + 1]
        return tuple(zip(self.gold_ids[a:b], self.gold_grades[a:b]))

    def gold_id_list(self, i: int) -> list[str]:
        return self.gold_ids[self.gold_start[i]:self.gold_start[i + 1]]

    def top(self, i: int) -> tuple[str, ...]:
        return tuple(self.top_ids[self.top_start[i]:self.top_start[i + 1]])

    def tags_at(self, positions):
        """Each question's index into ``tag_lists`` at ``positions``, as an array."""
        import numpy as np

        return np.frombuffer(self.tags, dtype=np.uint32)[positions]

    def status_of(self, i: int) -> str:
        return self.status_names[self.status[i]]

    def measured_codes(self) -> set[int]:
        return {code for code, name in enumerate(self.status_names) if name in MEASURED}

    def with_status(self, status: str) -> list[int]:
        """The positions of the questions with that status, in reading order."""
        if status not in self.status_names:
            return []
        code = self.status_names.index(status)
        return [i for i, c in enumerate(self.status) if c == code]

    def measured_mask(self):
        """Which questions' metrics count (``QuestionResult.measured``), as a bool array."""
        import numpy as np

        codes = np.frombuffer(bytes(self.status), dtype=np.uint8)
        return np.isin(codes, list(self.measured_codes()))

    def gold_rank_records(self, i: int) -> tuple[GoldRank, ...]:
        """Question i's gold ranks as ``QuestionResult.gold_ranks`` holds them: one
        ``GoldRank`` per relevant, not stale gold pair, in gold order."""
        a, b = self.gold_start[i], self.gold_start[i + 1]
        grades = map(_GRADES.get, self.gold_grades[a:b], self.gold_grades[a:b])
        return tuple(GoldRank(cid, grade, None if rank == _NO_RANK else rank)
                     for cid, grade, rank in zip(self.gold_ids[a:b], grades, self.gold_ranks[a:b])
                     if rank != _NOT_RELEVANT)

    def record(self, i: int) -> QuestionResult:
        top = self.top_score[i]
        metrics = self.own_metrics[i] if self.table is None else self.table.row(i)
        return built_question((
            self.ids[i], self.text(i), self.tag_lists[self.tags[i]], self.status_of(i),
            bool(self.unanswerable[i]), self.gold(i), self.stale.get(i, ()), metrics,
            self.first_gold_rank(i), None if top != top else top,
            self.errors.get(i), _ANSWER_OF[self.answer[i]], self.gold_rank_records(i), self.returned[i],
            self.warnings.get(i, ()), self.top(i)))


def _ends(counts, first: int):
    """The running ends of runs of ``counts`` items after ``first`` (an offset column's
    next entries)."""
    return islice(accumulate(counts, initial=first), 1, None)


def _sorted_gold(ids, grades, counts):
    """The gold pairs sorted by id within each row (``add`` is given them sorted): as they
    are when every row's ids ascend, as the writer writes them."""
    if max(counts, default=0) < 2:
        return ids, grades
    row_starts = set(accumulate(counts))
    if set(compress(count(1), map(ge, ids, islice(ids, 1, None)))) <= row_starts:
        return ids, grades
    pairs = [sorted(zip(ids[a:b], grades[a:b])) for a, b in pairwise(accumulate(counts, initial=0))]
    flat = list(chain.from_iterable(pairs))
    return [cid for cid, _ in flat], [grade for _, grade in flat]


class BuiltOnRead(Sequence):
    """A sequence whose items are made when read: equal to any sequence of equal items."""

    __slots__ = ()
    noun = "items"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self.noun})"


class Questions(BuiltOnRead):
    """The questions of one artefact as records made on demand (``order``: positions to
    show them in, e.g. by id; all of them in reading order by default)."""

    __slots__ = ("columns", "order", "by_id")
    noun = "questions"

    def __init__(self, columns: QuestionColumns, order=None, by_id: bool = False):
        self.columns, self.order = columns, order
        self.by_id = by_id  # ``order`` is every position, stably sorted by id

    def __len__(self) -> int:
        return len(self.columns) if self.order is None else len(self.order)

    def position(self, i: int) -> int:
        return i if self.order is None else int(self.order[i])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        n = len(self)
        if not -n <= i < n:
            raise IndexError("question index out of range")
        return self.columns.record(self.position(i % n))

    def __iter__(self):
        record = self.columns.record
        positions = range(len(self.columns)) if self.order is None else self.order
        return (record(int(p)) for p in positions)



class ById(Mapping):
    """Question id -> its record, made on demand; ``where``: id -> position, the one map
    a comparison keeps per artefact while it aligns the two."""

    __slots__ = ("columns", "_where")

    def __init__(self, questions: Questions):
        self.columns = questions.columns
        self._where: dict[str, int] | None = None

    @property
    def where(self) -> dict[str, int]:
        """Made when first asked for: two artefacts with the same ids in the same order
        (``same_ids``) are aligned without it."""
        if self._where is None:
            self._where = {qid: i for i, qid in enumerate(self.columns.ids)}
        return self._where

    def __getitem__(self, qid: str) -> QuestionResult:
        return self.columns.record(self.where[qid])

    def __iter__(self):
        return iter(self.where)

    def __len__(self) -> int:
        return len(self.where)

    def __contains__(self, qid) -> bool:
        return qid in self.where

    def tags(self, qid: str) -> tuple[str, ...]:
        columns = self.columns
        return columns.tag_lists[columns.tags[self.where[qid]]]

    def keys(self):
        return self.where.keys()

    def values(self):
        return Questions(self.columns)


def same_label(a: QuestionColumns, i: int, b: QuestionColumns, j: int) -> bool:
    """Whether question i of ``a`` and j of ``b`` have the very same label: unanswerable
    flag, gold pairs and stale ids (then no relabel note is possible)."""
    ga, gb = slice(a.gold_start[i], a.gold_start[i + 1]), slice(b.gold_start[j], b.gold_start[j + 1])
    return (a.unanswerable[i] == b.unanswerable[j] and a.gold_ids[ga] == b.gold_ids[gb]
            and a.gold_grades[ga] == b.gold_grades[gb] and a.stale.get(i) == b.stale.get(j))


def same_ids(a: QuestionColumns, b: QuestionColumns) -> bool:
    """Whether ``a`` and ``b`` hold the same question ids in the same order, each once: then
    question i of one is question i of the other, as two runs of one gold set are."""
    return a.ids == b.ids and len(set(a.ids)) == len(a.ids)


def sorted_by_id(questions: Questions) -> Questions:
    """The same questions in id order."""
    ids = questions.columns.ids
    return Questions(questions.columns, array("Q", sorted(range(len(ids)), key=ids.__getitem__)),
                     by_id=True)
