"""Where an edited chunk's old text lies in its new document, found by the text itself.

An anchor keeps no old text, only its hash, its length and a 64-slot signature; a share
estimated from 64 slots is too coarse when the decision is whether a new chunk holds half of
the old text. But each slot is one of the old text's shingles, and the new document's text
(put back together from its chunks) shows *where* each such shingle now lies. The words the
found shingles cover mark out the old text word by word; what is left to decide is where
its ends are, and that is either proven or bounded:

- **one piece taken out** (a sentence inserted into the old text): the old text is the new
  document between two words with one run of unseen words removed; every such reading
  whose length fits is checked against the anchor's hash, and exactly one must agree;
- **edited in place** (a few words mended): every stretch of the document whose length is
  within ``LENGTH_SLACK`` characters of the old text's, whose ends lie within ``MARGIN``
  words of a found shingle, with no run of more than ``GAP`` unseen words inside, and that
  holds what the signature finds of the old text in the whole document. Each reading is one
  hypothesis of where the old text is; the caller writes a mapping only when every
  hypothesis leads to the same new chunks.

Anything else (text moved apart, a paragraph gone, more than a few words changed) yields
no reading, and the signature rules decide, as proposals where they cannot be sure.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace

import numpy as np

from ci_eval.core.gold.fingerprint import SHINGLE, text_hash, words_at
from ci_eval.core.gold.minhash import positional_values

# How many words at either end of a reading may show no found shingle. The first word is
# covered by one shingle only, found when one of the 64 slots drew it (about 0.8 of the time
# for a 40-word chunk), and a mended word near an end hides the words beside it too. Every
# reading allowed is a hypothesis the decision must survive, so a wider margin only makes
# the rule more careful: at 3, a true end four unseen words out was left out while shorter
# readings agreed on a wrong chunk set.
MARGIN = 10
# The longest run of unseen words inside an in-place reading: a mended word hides itself
# (every shingle holding it changed), and a slot draw may miss a neighbour; a reworded
# phrase of five words is beyond it, and is left to the signature rules.
GAP = 3
# Characters an in-place edit may add or remove: a few words mended by a letter or two.
LENGTH_SLACK = 8
# The share of the signature a reading must hold: a few mended words cost three shingles
# each, so about a quarter of a 40-word chunk's slots; less than this is not the old text.
FOUND = 0.6
# The fewest words a piece beside an inserted run must have to prove a reading: a shorter one
# can be a phrase that recurs in the document ("of the shell"), the hash then agreeing with
# text that is not the old text's own. A reading the hash proves with a shorter piece is not
# taken, and no in-place reading either: the old text may end past an insertion, where no
# shingle can show it (one word after it), so nothing here is certain.
PIECE = 2 * SHINGLE
# A reading must hold all the signature finds anywhere in the document but one slot (a
# phrase that recurs): old text found outside it means the reading is not all of the old
# text (moved apart, or a piece beyond an inserted sentence).
STRAY = 1.5 / 64


@dataclass(frozen=True)
class Reading:
    """One place the old text may lie in the new document: the characters ``start``..``end``
    less the ``holes`` (an inserted run of words; none for an in-place reading). ``unsure``:
    the unseen words at its ends, which may be old words no slot drew or old words replaced
    by new ones (a reworded phrase reaching into it): a decision must stand either way."""
    start: int
    end: int
    holes: tuple[tuple[int, int], ...]
    unsure: tuple[tuple[int, int], ...]
    proven: bool  # the hash agrees: the old text is exactly this


@dataclass(frozen=True)
class _Seen:
    tokens: list[tuple[int, int]]  # the document's whitespace-separated words
    seen: list[bool]  # whether a found shingle covers the word
    # for each slot, the word (token) ranges of the positions holding its shingle
    slot_tokens: list[list[tuple[int, int]]]


_TOKEN = re.compile(r"\S+")


def _seen(text: str, slots: np.ndarray) -> _Seen | None:
    spans = words_at(text)
    if spans is None:
        return None
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    starts = [s for s, _ in tokens]
    token_of = [bisect.bisect_right(starts, s) - 1 for s, _ in spans]
    values = positional_values([text[s:e].lower() for s, e in spans])
    if values is None or not tokens:
        return None
    hit = values == slots.astype(np.uint32)[:, None]
    seen = [False] * len(tokens)
    slot_tokens: list[list[tuple[int, int]]] = [[] for _ in range(len(slots))]
    for slot, pos in zip(*np.nonzero(hit)):
        first, last = token_of[pos], token_of[pos + SHINGLE - 1]
        slot_tokens[slot].append((first, last))
        for t in range(first, last + 1):
            seen[t] = True
    return _Seen(tokens, seen, slot_tokens)


def _held(s: _Seen, inside) -> float:
    """The share of slots whose shingle lies somewhere ``inside(first, last)`` accepts."""
    return sum(any(inside(a, b) for a, b in ranges) for ranges in s.slot_tokens) / len(s.slot_tokens)


def _unseen_runs(seen: list[bool], a: int, b: int) -> list[tuple[int, int]]:
    runs, start = [], None
    for t in range(a, b):
        if not seen[t] and start is None:
            start = t
        elif seen[t] and start is not None:
            runs.append((start, t))
            start = None
    if start is not None:
        runs.append((start, b))
    return runs


def _fits(runs: list[tuple[int, int]], a: int, b: int) -> bool:
    """No more than MARGIN unseen words at either end, no more than GAP inside."""
    return all(e - st <= (MARGIN if st == a or e == b else GAP) for st, e in runs)


def _unsure(s: _Seen, a: int, b: int) -> tuple[tuple[int, int], ...]:
    """The character ranges of the unseen words at the ends of tokens a..b."""
    out = []
    first = a
    while first < b and not s.seen[first]:
        first += 1
    if first > a:
        out.append((s.tokens[a][0], s.tokens[first - 1][1]))
    last = b
    while last > first and not s.seen[last - 1]:
        last -= 1
    if last < b:
        out.append((s.tokens[last][0], s.tokens[b - 1][1]))
    return tuple(out)


def _starts(s: _Seen) -> list[int]:
    """Words where the old text may begin: at most MARGIN words before a seen one."""
    out, next_seen = [], None
    for t in range(len(s.tokens) - 1, -1, -1):
        if s.seen[t]:
            next_seen = t
        if next_seen is not None and next_seen - t <= MARGIN:
            out.append(t)
    return sorted(out)


def _in_place(s: _Seen, length: int, everywhere: float) -> list[Reading]:
    out = []
    for a in _starts(s):
        for b in range(a + 1, len(s.tokens) + 1):
            size = s.tokens[b - 1][1] - s.tokens[a][0]
            if size > length + LENGTH_SLACK:
                break
            if size < length - LENGTH_SLACK:
                continue
            if not _fits(_unseen_runs(s.seen, a, b), a, b):
                continue
            held = _held(s, lambda x, y, a=a, b=b: a <= x and y < b)
            if held >= FOUND and held >= everywhere - STRAY:
                out.append(Reading(s.tokens[a][0], s.tokens[b - 1][1], (), _unsure(s, a, b), False))
    return out


def _one_hole(s: _Seen, text: str, length: int, digest: str) -> list[Reading]:
    """Readings with one run of unseen words taken out, kept only where the hash agrees."""
    out = []
    holes = _unseen_runs(s.seen, 0, len(s.tokens))
    for a in _starts(s):
        for h0, h1 in holes:
            if h0 <= a or s.tokens[h0][0] - s.tokens[a][0] > length:
                continue
            # a slot draw may miss an old word beside the inserted ones: the hole may be a
            # word or two narrower than the unseen run at either side
            for x in range(max(h0, a + 1), min(h0 + 2, h1 - 1) + 1):
                for y in range(max(h1 - 2, x + 1), h1 + 1):
                    head = s.tokens[x - 1][1] - s.tokens[a][0] + 1
                    for b in range(y + 1, len(s.tokens) + 1):
                        size = head + s.tokens[b - 1][1] - s.tokens[y][0]
                        if size > length + LENGTH_SLACK:
                            break
                        if size >= length - LENGTH_SLACK:
                            old = text[s.tokens[a][0]:s.tokens[x - 1][1]] + " " + text[s.tokens[y][0]:s.tokens[b - 1][1]]
                            if text_hash(old) == digest:
                                sure = x - a >= PIECE and b - y >= PIECE
                                out.append(Reading(s.tokens[a][0], s.tokens[b - 1][1],
                                                   ((s.tokens[x][0], s.tokens[y][0]),), (), sure))
                                if not sure:
                                    out += _without_short_piece(s, a, x, y, b)
    return out


def _without_short_piece(s: _Seen, a: int, x: int, y: int, b: int) -> list[Reading]:
    """The other hypotheses a reading with a short piece beside its hole leaves open: that
    piece's words are not the old text's own but the same words written anew (the old text
    then ends, or starts, at the hole). Marked by ``proven`` False and no hole."""
    out = []
    if x - a < PIECE:
        out.append(Reading(s.tokens[y][0], s.tokens[b - 1][1], (), (), False))
    if b - y < PIECE:
        out.append(Reading(s.tokens[a][0], s.tokens[x - 1][1], (), (), False))
    return out


def readings(text: str, slots: np.ndarray, length: int, digest: str | None) -> list[Reading]:
    """Where the old text (``length`` characters, hash ``digest``, signature ``slots``) may
    lie in the new document ``text``: the one reading the hash proves if there is one, else
    every in-place reading (see the module's docstring); empty when there is none."""
    if "\0" in text:  # a stretch no chunk's text gives: nothing can be read there
        return []
    s = _seen(text, slots)
    if s is None:
        return []
    everywhere = _held(s, lambda a, b: True)
    if everywhere < FOUND:
        return []
    if digest is not None:
        proven = _one_hole(s, text, length, digest)
        # The same start and end with the hole one word over (a word both before and at the
        # end of the inserted run, such as "."): one reading, proven if either is.
        sure = {(r.start, r.end) for r in proven if r.holes and r.proven}
        proven = [replace(r, proven=True) if r.holes and (r.start, r.end) in sure else r for r in proven]
        if proven and all(r.proven for r in proven if r.holes):
            return [r for r in proven if r.holes]
        if proven:
            # A short piece beside the hole (a phrase that may be written anew rather than
            # kept): every hypothesis, with it and without it, none proven; the caller
            # writes a mapping only when they all choose the same chunks.
            return proven
    found = _in_place(s, length, everywhere)
    if digest is not None and _short_piece_beyond(s, text, length, digest, found):
        return []
    if not found and digest is not None:
        return _two_pieces(s, text, length, digest)
    return found


# Words a piece may end short of its last seen word at the junction of two pieces: the
# shingles across the junction are gone, so its last SHINGLE - 1 words show through one
# shingle less, and a slot may have drawn none of them.
_JUNCTION = 2 * (SHINGLE - 1)
# More seen runs than this and the document is not two pieces of the old text apart.
_RUNS = 6


def _two_pieces(s: _Seen, text: str, length: int, digest: str) -> list[Reading]:
    """The old text as two runs of the new document's words, in either order (two
    paragraphs swapped, a paragraph moved away from the old text's other part): the one
    pair of places whose words, put end to end, the hash agrees with. A piece whose words
    recur elsewhere in the document could stand at either place, so it proves nothing."""
    runs = [(a, b) for a, b in _unseen_runs([not v for v in s.seen], 0, len(s.tokens))]
    if not 2 <= len(runs) <= _RUNS:
        return []
    tokens, n = s.tokens, len(s.tokens)

    def piece(a: int, b: int) -> str:
        return text[tokens[a][0]:tokens[b - 1][1]]

    found = []
    for i, (f1, l1) in enumerate(runs):
        for j, (f2, l2) in enumerate(runs):
            if i == j:
                continue
            for a1 in range(max(0, f1 - MARGIN), f1 + 1):
                for b1 in range(l1, min(n, l1 + _JUNCTION) + 1):
                    head = tokens[b1 - 1][1] - tokens[a1][0] + 1
                    if head > length + LENGTH_SLACK:
                        break
                    for a2 in range(max(0, f2 - _JUNCTION), f2 + 1):
                        for b2 in range(l2, min(n, l2 + MARGIN) + 1):
                            if not (b1 <= a2 or b2 <= a1):
                                continue  # two places of the document, not one twice
                            size = head + tokens[b2 - 1][1] - tokens[a2][0]
                            if size > length + LENGTH_SLACK:
                                break
                            if text_hash(piece(a1, b1) + " " + piece(a2, b2)) == digest:
                                found.append(((a1, b1), (a2, b2)))
    if len(found) != 1:
        return []
    (a1, b1), (a2, b2) = found[0]
    words = " ".join(text[x:y] for x, y in tokens)
    for a, b in ((a1, b1), (a2, b2)):
        if words.count(" ".join(text[x:y] for x, y in tokens[a:b])) != 1:
            return []
    (x0, x1), (y0, y1) = sorted(((a1, b1), (a2, b2)))
    return [Reading(tokens[x0][0], tokens[y1 - 1][1], ((tokens[x1 - 1][1], tokens[y0][0]),), (), True)]


# The most words an inserted run may have for the check below to look past it.
_INSERTED = 60


def _short_piece_beyond(s: _Seen, text: str, length: int, digest: str, found: list[Reading]) -> bool:
    """Whether the hash says the old text goes on for a few words past an inserted run at
    either end of an in-place reading: words too few to hold a shingle, so the in-place
    readings cannot see them (``... in such`` + a sentence + ``networks``)."""
    starts = [t0 for t0, _ in s.tokens]
    ends = [t1 for _, t1 in s.tokens]
    seen_at = [t for t, v in enumerate(s.seen) if v]

    def agrees(a: int, x: int, y: int, b: int) -> bool:
        size = ends[x - 1] - starts[a] + 1 + ends[b - 1] - starts[y]
        return abs(size - length) <= LENGTH_SLACK and text_hash(text[starts[a]:ends[x - 1]] + " " + text[starts[y]:ends[b - 1]]) == digest

    n = len(s.tokens)
    for r in found:
        a, b = bisect.bisect_left(starts, r.start), bisect.bisect_left(ends, r.end) + 1
        inside = [t for t in seen_at if a <= t < b]
        if not inside:
            continue
        first, last = inside[0], inside[-1]
        for x in range(last + 1, min(last + SHINGLE + 1, n)):  # a short tail after an insertion
            for y in range(x + 1, min(x + _INSERTED, n)):
                if any(agrees(a, x, y, y + k) for k in range(1, PIECE) if y + k <= n):
                    return True
        for y in range(max(first - SHINGLE, 1), first + 1):  # a short head before one
            for x in range(max(y - _INSERTED, 1), y):
                if any(agrees(x - k, x, y, b) for k in range(1, PIECE) if x - k >= 0):
                    return True
    return False


def word_counter(text: str, holes: tuple[tuple[int, int], ...] = ()):
    """``size(start, end)`` for the span rule: the words of ``text`` starting in
    start..end, those inside ``holes`` left out (they are not the old text)."""
    starts = [m.start() for m in _TOKEN.finditer(text)]

    def words(a: int, b: int) -> int:
        return bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a) if b > a else 0

    def count(a: int, b: int) -> int:
        return words(a, b) - sum(words(max(a, lo), min(b, hi)) for lo, hi in holes)

    return count


def whole_copy(text: str, slots: np.ndarray, digest: str, words: int | None = None) -> tuple[int, int] | None:
    """Where the new document ``text`` holds the old text whole, up to whitespace (a
    re-ingestion that unwraps lines or collapses spaces moves every offset and changes the
    length, not the words): the character span of the one run of whole words whose
    whitespace-normalised hash is ``digest``, or None when there is none or more than one.

    A verbatim copy holds every shingle of the old text, so it covers at least one place of
    each of the signature's slots: only the shortest runs of words covering every slot are
    looked at, widened by up to ``MARGIN`` unseen words at either end (the first and last
    words are covered by one shingle each, which no slot may have drawn), and each is
    proven by the hash. With the old text's word count (``words``), a copy has exactly that
    many (the hash is of its words), so the start is counted back from each end: a text
    that repeats a phrase of its own lets the shortest covering run start at the repeat."""
    if "\0" in text:
        return None
    s = _seen(text, slots)
    if s is None or any(not ranges for ranges in s.slot_tokens):
        return None
    found: set[tuple[int, int]] = set()
    for first, last in _covering_runs(s.slot_tokens):
        for b in range(last + 1, min(len(s.tokens), last + 1 + MARGIN) + 1):
            starts = range(max(0, first - MARGIN), first + 1) if words is None else [b - words]
            for a in starts:
                if 0 <= a <= first and text_hash(text[s.tokens[a][0]:s.tokens[b - 1][1]]) == digest:
                    found.add((s.tokens[a][0], s.tokens[b - 1][1]))
    return found.pop() if len(found) == 1 else None


def _covering_runs(slot_tokens: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """The shortest stretches of tokens (first, last) holding one place of every slot: a
    window over the places in document order, shrunk from the left while it still holds
    every slot (the classic minimum covering window, every minimal one kept)."""
    places = sorted((a, b, slot) for slot, ranges in enumerate(slot_tokens) for a, b in ranges)
    need, count, have = len(slot_tokens), {}, 0
    out, left = [], 0
    for right, (_, _, slot) in enumerate(places):
        count[slot] = count.get(slot, 0) + 1
        have += count[slot] == 1
        while have == need:
            a0, _, s0 = places[left]
            count[s0] -= 1
            if count[s0] == 0:  # the window from here to right is the shortest ending there
                have -= 1
                out.append((a0, max(p[1] for p in places[left:right + 1])))
            left += 1
    return sorted(set(out))
