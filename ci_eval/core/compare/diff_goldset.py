"""The gold-set side of a comparison: which questions both runs share with the same label,
which were added, removed or relabelled, whose gold went stale, and why no comparison is
possible when too few questions are left."""

from __future__ import annotations

from dataclasses import dataclass
from operator import ne

import numpy as np

from ci_eval.core.artefact.artefact import QuestionResult, RunHeader
from ci_eval.core.artefact.column_views import blocks, bounds, run_positions
from ci_eval.core.artefact.question_columns import ById, QuestionColumns, same_label
from ci_eval.core.compare.stats import min_shared_questions

# Fewer compared questions than this is "no comparison possible" (see stats).
MIN_SHARED = min_shared_questions()


@dataclass(frozen=True)
class QuestionRef:
    id: str
    question: str
    note: str = ""


@dataclass(frozen=True)
class Rechunk:
    """The shared questions compared across head's recorded gold remap: their gold
    differs from base's only by it (core/gold/remap_record.py)."""

    from_version: str | None  # base's index version
    to_version: str | None  # head's
    questions: int  # compared through the remap
    proposals: int  # distinct old ids among theirs that a person accepted as proposals
    # compared through their span gold instead: the same gold-set file on both sides, its
    # evidence resolved against each side's index (core/gold/evidence.py)
    spans: int = 0


@dataclass(frozen=True)
class GoldSetChanges:
    added: tuple[QuestionRef, ...] = ()
    removed: tuple[QuestionRef, ...] = ()
    relabelled: tuple[QuestionRef, ...] = ()
    base_sha256: str | None = None
    head_sha256: str | None = None
    shared: int = 0  # question ids present on both sides
    rechunk: Rechunk | None = None  # questions compared through a recorded remap

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


def _label(q: QuestionResult) -> tuple:
    """What a question asks for. Stale ids count as gold here, so a re-ingestion that
    drops them from a post-filter gold list does not look like a relabel."""
    ids = frozenset(i for i, _ in q.gold) | frozenset(q.stale)
    return (q.unanswerable, ids)


def _gold_note(bi: frozenset, hi: frozenset, bg: dict, hg: dict) -> str | None:
    """What changed between two gold lists: ids added and removed, else grades changed."""
    if bi != hi:
        parts = []
        if hi - bi:
            parts.append(f"+{len(hi - bi)} gold")
        if bi - hi:
            parts.append(f"-{len(bi - hi)} gold")
        return ", ".join(parts)
    regraded = sorted(i for i in bg.keys() & hg.keys() if bg[i] != hg[i])
    return f"{len(regraded)} gold regraded" if regraded else None


def relabel_note(b: QuestionResult, h: QuestionResult) -> str | None:
    if b.unanswerable != h.unanswerable:
        return "now unanswerable" if h.unanswerable else "now answerable"
    return _gold_note(_label(b)[1], _label(h)[1], dict(b.gold), dict(h.gold))


def _positions(ids, where: dict) -> np.ndarray:
    return np.fromiter(map(where.__getitem__, ids), dtype=np.int64, count=len(ids))


def _gold_differs(bc: QuestionColumns, pb: np.ndarray, hc: QuestionColumns, ph: np.ndarray):
    """Whether base's gold pair at flat position pb[n] differs from head's at ph[n]."""
    ids = np.fromiter(map(ne, map(bc.gold_ids.__getitem__, pb.tolist()),
                          map(hc.gold_ids.__getitem__, ph.tolist())), dtype=bool, count=len(pb))
    return ids | (np.asarray(bc.gold_grades)[pb] != np.asarray(hc.gold_grades)[ph])


def _same_gold_in_place(bc: QuestionColumns, hc: QuestionColumns) -> np.ndarray | None:
    """Per question in reading order, whether its gold pairs are the same on both sides,
    when both sides' gold runs sit at the same flat positions (same ids, same gold counts):
    the flat columns compared element by element. None when they do not."""
    if bc.gold_start != hc.gold_start:
        return None
    differ = np.fromiter(map(ne, bc.gold_ids, hc.gold_ids), dtype=bool, count=len(bc.gold_ids))
    differ |= np.asarray(bc.gold_grades) != np.asarray(hc.gold_grades)
    counts = np.diff(np.asarray(bc.gold_start, dtype=np.int64))
    owner = np.repeat(np.arange(len(counts)), counts)
    return np.bincount(owner, weights=differ, minlength=len(counts)) == 0


def _same_gold(bc: QuestionColumns, i: np.ndarray, hc: QuestionColumns, j: np.ndarray,
               in_place: bool = False):
    """Whether base question i[n] and head question j[n] have the same unanswerable flag
    and the same gold pairs (``same_label`` but for stale ids), for every n, a block at a
    time (``in_place``: i is j, both sides the same ids in the same order)."""
    flags = (np.frombuffer(bytes(bc.unanswerable), np.uint8)[i]
             == np.frombuffer(bytes(hc.unanswerable), np.uint8)[j])
    whole = _same_gold_in_place(bc, hc) if in_place else None
    if whole is not None:
        return flags & whole[i]
    same = np.zeros(len(i), dtype=bool)
    for a, z in blocks(len(i)):
        (b_from, b_to), (h_from, h_to) = bounds(bc.gold_start, i[a:z]), bounds(hc.gold_start, j[a:z])
        equal = b_to - b_from == h_to - h_from
        pb, owner = run_positions(b_from, np.where(equal, b_to, b_from))
        ph = run_positions(h_from, np.where(equal, h_to, h_from))[0]
        differ = _gold_differs(bc, pb, hc, ph)
        same[a:z] = equal & (np.bincount(owner, weights=differ, minlength=z - a) == 0)
    return flags & same


def _labels(bq: ById, hq: ById, shared: list[str], i: np.ndarray, j: np.ndarray,
            in_place: bool = False):
    """Which shared questions have the very same label (``same_label``) and the relabel
    note of each that has not (None when nothing worth a note changed)."""
    bc, hc = bq.columns, hq.columns
    same = _same_gold(bc, i, hc, j, in_place)
    for n in (np.flatnonzero(np.isin(i, list(bc.stale)) | np.isin(j, list(hc.stale)))
              if bc.stale or hc.stale else ()):
        same[n] = same_label(bc, int(i[n]), hc, int(j[n]))
    notes = {n: relabel_note(bq[shared[n]], hq[shared[n]]) for n in np.flatnonzero(~same).tolist()}
    return same, notes


def _usable(columns: QuestionColumns, rows: np.ndarray) -> np.ndarray:
    """Whether the questions at ``rows`` are measured and have no stale gold."""
    fresh = ~np.isin(rows, list(columns.stale)) if columns.stale else True
    return columns.measured_mask()[rows] & fresh


def _shared(bq: ById, hq: ById, order):
    """The questions added and removed, the shared ids sorted and their positions on each
    side. ``order``: head's positions in id order (``sorted_by_id``), given only when both
    sides have the same ids in the same order (``same_ids``): then they are the shared
    questions' positions on both sides."""
    bc, hc = bq.columns, hq.columns
    if order is not None:
        at = np.asarray(order, dtype=np.int64)
        return [], [], list(map(hc.ids.__getitem__, at.tolist())), at, at
    added = [QuestionRef(i, hc.text(hq.where[i])) for i in sorted(hq.keys() - bq.keys())]
    removed = [QuestionRef(i, bc.text(bq.where[i])) for i in sorted(bq.keys() - hq.keys())]
    shared = sorted(hq.keys() & bq.keys())
    return added, removed, shared, _positions(shared, bq.where), _positions(shared, hq.where)


def _through_remap(bq: ById, hq: ById, i, j, notes: dict, base: RunHeader,
                   head: RunHeader) -> dict[int, frozenset]:
    """Of the shared questions whose label differs (``notes``), those whose base gold, put
    through head's recorded remap, is head's gold, grades included (neither side stale,
    the same unanswerable flag): n -> the accepted proposals among the ids it mapped. A
    remap recorded from another index than base's gold was built on does not apply. The
    note of a question a person relabelled besides is reworded on the translated gold (in
    ``notes``), so it says what the person changed, not what the remap renamed."""
    remap = head.gold_remap
    if remap is None or not notes or (remap.from_version is not None and base.gold_index_version
                                      is not None and remap.from_version != base.gold_index_version):
        return {}
    bc, hc, through = bq.columns, hq.columns, {}
    for n, note in notes.items():
        # read from the columns, not records: at a re-chunk nearly every question is here
        b, h = int(i[n]), int(j[n])
        if not note or b in bc.stale or h in hc.stale or bc.unanswerable[b] != hc.unanswerable[h]:
            continue
        b_gold = bc.gold(b)
        used, accepted = remap.used(b_gold)
        if not used:
            continue
        translated, h_gold = remap.translated(b_gold), dict(hc.gold(h))
        if translated == h_gold:
            through[n] = accepted
        else:
            notes[n] = _gold_note(frozenset(translated), frozenset(h_gold), translated, h_gold) or note
    return through


def _through_spans(bq: ById, hq: ById, i, j, notes: dict, base: RunHeader, head: RunHeader) -> dict:
    """Of the shared questions whose label differs (``notes``), those whose chunk
    judgements come from the very same span gold resolved against each side's index: the
    same gold-set file on both sides, which names evidence (neither side stale, the same
    unanswerable flag). A person's relabel changes the file, so none hides here."""
    if not (notes and base.gold_evidence and head.gold_evidence and base.gold_sha256
            and base.gold_sha256 == head.gold_sha256):
        return {}
    bc, hc = bq.columns, hq.columns
    return {n: frozenset() for n, note in notes.items()
            if note and int(i[n]) not in bc.stale and int(j[n]) not in hc.stale
            and bc.unanswerable[int(i[n])] == hc.unanswerable[int(j[n])]}


def _stale_spans(bq: ById, hq: ById, i, j, notes: dict, base: RunHeader, head: RunHeader) -> set:
    """Of the shared questions whose label differs, those of the very same span gold file
    on both sides whose evidence went stale on a side (a document deleted from the index, a
    quote no longer found): stale gold, reported as such, never a person's relabel."""
    if not (notes and base.gold_evidence and head.gold_evidence and base.gold_sha256
            and base.gold_sha256 == head.gold_sha256):
        return set()
    bc, hc = bq.columns, hq.columns
    return {n for n, note in notes.items() if note and (int(i[n]) in bc.stale or int(j[n]) in hc.stale)}


def _rechunk(through: dict, base: RunHeader, head: RunHeader, spans: bool = False) -> Rechunk | None:
    if not through:
        return None
    if spans:
        return Rechunk(base.index_version, head.index_version, 0, 0, len(through))
    remap = head.gold_remap
    return Rechunk(base.index_version or remap.from_version, head.index_version or remap.to_version,
                   len(through), len(frozenset().union(*through.values())))


def partition(bq: ById, hq: ById, base: RunHeader, head: RunHeader, order=None):
    """The gold-set changes, the ids compared (shared, same label, no stale gold on either
    side, measured on both) and their positions in base's and head's columns. Over the
    columns at once; records are made only for a question whose label differs (to word
    the note). ``order``: head's positions in id order (``sorted_by_id``) when both sides
    hold the same ids in the same order, else None. A question whose gold differs only by
    head's recorded remap (``_through_remap``), or only by the index its span gold was
    resolved against (``_through_spans``), is compared, not relabelled."""
    bc, hc = bq.columns, hq.columns
    added, removed, shared, i, j = _shared(bq, hq, order)
    same, notes = _labels(bq, hq, shared, i, j, in_place=i is j)
    through = _through_remap(bq, hq, i, j, notes, base, head)
    spans = not through
    if spans:
        through = _through_spans(bq, hq, i, j, notes, base, head)
    stale_spans = _stale_spans(bq, hq, i, j, notes, base, head)
    relabelled = [QuestionRef(shared[n], hc.text(int(j[n])), note)
                  for n, note in notes.items() if note and n not in through and n not in stale_spans]
    keep = np.flatnonzero(_usable(bc, i) & _usable(hc, j) & ~np.isin(
        np.arange(len(shared)), [n for n, note in notes.items() if note and n not in through]))
    changes = GoldSetChanges(tuple(added), tuple(removed), tuple(relabelled),
                             base.gold_sha256, head.gold_sha256, len(shared),
                             _rechunk(through, base, head, spans))
    return changes, tuple(map(shared.__getitem__, keep.tolist())), (i[keep], j[keep])


def shared_unusable(bq: ById, hq: ById) -> tuple[int, int]:
    """Of the shared questions, how many have stale gold on either side and how many are
    not measured on one side (why too few may be compared)."""
    bc, hc = bq.columns, hq.columns
    b_measured, h_measured = bc.measured_codes(), hc.measured_codes()
    stale = unmeasured = 0
    for qid, j in hq.where.items():
        i = bq.where.get(qid)
        if i is None:
            continue
        stale += i in bc.stale or j in hc.stale
        unmeasured += not (bc.status[i] in b_measured and hc.status[j] in h_measured)
    return stale, unmeasured


def _stale_question(columns: QuestionColumns, i: int, ids: tuple[str, ...]) -> StaleQuestion:
    return StaleQuestion(columns.ids[i], columns.text(i), ids, columns.status_of(i))


def stale_changes(base: ById | None, head: ById) -> StaleChanges:
    """Read from the few questions with stale gold, in head's order."""
    hc = head.columns
    head_stale = tuple(_stale_question(hc, j, ids) for j, ids in hc.stale.items())
    new, resolved = [], []
    touched = set(hc.stale)
    if base is not None:
        touched |= {head.where[base.columns.ids[i]] for i in base.columns.stale
                    if base.columns.ids[i] in head.where}
    for j in sorted(touched) if base is not None else ():
        i = base.where.get(hc.ids[j])
        if i is None:
            continue
        before, now = set(base.columns.stale.get(i, ())), set(hc.stale.get(j, ()))
        if now - before:
            new.append(_stale_question(hc, j, tuple(sorted(now - before))))
        if before - now:
            resolved.append(_stale_question(hc, j, tuple(sorted(before - now))))
    return StaleChanges(
        head=head_stale,
        new=tuple(new),
        resolved=tuple(resolved),
        head_ids=len({i for ids in hc.stale.values() for i in ids}),
        base_ids=None if base is None else len({i for ids in base.columns.stale.values() for i in ids}),
    )


def _sha(sha: str | None) -> str:
    return (sha or "?")[:7]


def no_comparison_reason(goldset: GoldSetChanges, compared: int, base: RunHeader,
                         head: RunHeader, stale_shared: int, unmeasured_shared: int) -> str | None:
    """Why the runs cannot be compared (None when they can): the comment's own verdict."""
    if compared >= MIN_SHARED:
        return None
    if goldset.shared == 0:
        if head.questions == 0:
            return "the head run has no questions"
        if base.questions == 0:
            return "the base run has no questions"
        if goldset.base_sha256 != goldset.head_sha256:
            return (f"different gold sets (sha256 {_sha(goldset.base_sha256)} → "
                    f"{_sha(goldset.head_sha256)}): every base question was removed or "
                    "renamed, no question id is in common")
        return "base and head share no question id"
    why = []
    if goldset.relabelled:
        why.append(f"{len(goldset.relabelled)} relabelled")
    if stale_shared:
        drift = (f" (index {base.index_version or 'unversioned'} → "
                 f"{head.index_version or 'unversioned'})"
                 if base.index_version != head.index_version else "")
        why.append(f"{stale_shared} with stale gold{drift}")
    if unmeasured_shared:
        why.append(f"{unmeasured_shared} not measured on one side")
    if stale_shared == goldset.shared and base.index_version != head.index_version:
        why[-1:] = [f"the index changed ({base.index_version or 'unversioned'} → "
                    f"{head.index_version or 'unversioned'}) and every shared question's "
                    "gold went stale"]
    reason = f" ({'; '.join(why)})" if why else ""
    return (f"only {compared} of the {goldset.shared} shared questions can be compared"
            f"{reason}; a comparison needs at least {MIN_SHARED}, the fewest on which a "
            "paired test can call any change significant")
