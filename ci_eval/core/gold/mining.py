"""Candidate questions mined from what users asked: count, fold near-duplicates, sample.

The log's lines are normalised (``candidates.normalise``: case, punctuation, spacing), so the
same question typed twice is one question asked twice (its *frequency*). Distinct questions
are then folded into groups of near-duplicates, greedily in order of frequency: each
question joins the most similar group leader already standing, else leads a group of its
own, so the most-asked spelling speaks for its group and no chain of small edits links two
unrelated questions. A question near one of the gold set's (or one already kept or binned)
is dropped: it is asked already.

Similarity is the Jaccard similarity of the two questions' *term sets*: their words outside
a short list of function words, plus every pair of adjacent words (so word order still
counts, and "how do I" is not a topic). The anchors' word 3-shingles would give a typo in an
eight-word question a similarity of about 0.3; terms give it about 0.6. Candidate pairs come from the
anchors' MinHash signatures (``fingerprint.batch_slots``) cut into 16 bands of 4 slots
(locality-sensitive hashing: a pair at similarity s shares a band with probability
1 - (1 - s**4)**16: 0.64 at 0.5, 0.89 at 0.6, 0.99 at 0.7), and each candidate pair is then
checked on the exact sets; a log of at most EXHAUSTIVE distinct questions has every pair
checked instead. The work is bounded whatever the log (unbounded, a crafted one of 3,000
questions whose every pair sits just under the threshold took 24 s of CPU, and the pairs grow
as the square): a band bucket takes at most BUCKET leaders, and a question is checked
exactly against at most CHECKS candidates, those whose signatures agree most (the others
would need a signature estimate far off its true similarity to fold). How many pairs were
checked, and how often a bound cut in, is said aloud (``Mined.compared``, ``Mined.capped``,
``Mined.full``). The default threshold, 0.5, is the one benchmarks/bench_mine.py found best
on planted near-duplicates (docs/question-set.md).

The sample is spread over strata: topic clusters (spherical k-means over a random projection
of the questions' tf-idf term vectors) crossed with frequency bands (1, 2-3, 4-7, 8 or more
askings). Strata are drawn from in turn, so a small topic or the long tail of questions
asked once still gets its share; within a stratum the order is a seeded shuffle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ci_eval.core.gold.candidates import normalise
from ci_eval.core.gold.fingerprint import shingle_hash
from ci_eval.core.gold.minhash import SLOTS, batch_slots

BANDS, ROWS = 16, 4
EXHAUSTIVE = 2000
CHECKS = 32  # exact similarity checks one question gets, at most
BUCKET = 200  # leaders one band bucket holds, at most
DIMENSIONS = 64
KMEANS_ROUNDS = 15
BAND_NAMES = ("1", "2-3", "4-7", "8+")
# Words that carry the asking, not the topic; they still count inside adjacent pairs.
FUNCTION_WORDS = frozenset(
    "a an and are as at be by can could do does did for from how i in is it its me my of on or "
    "should that the their there this to was we what when where which who why will with would you your".split())


@dataclass(frozen=True)
class Group:
    """One question as the candidates file will show it, with what was folded into it."""

    question: str  # the most-asked spelling of the group's leader
    frequency: int  # log lines folded into the group (the leader's and its near-duplicates')
    members: tuple[str, ...]  # the normalised texts folded in, the leader first
    topic: int = -1
    band: int = 0


@dataclass(frozen=True)
class Mined:
    read: int  # questions read from the log
    distinct: int  # distinct after normalising
    known: tuple[str, ...]  # normalised texts dropped as (near) the gold set's questions
    groups: tuple[Group, ...]  # every group after folding, most asked first
    chosen: tuple[Group, ...]  # the sample, in the order a person should see it
    topics: tuple[tuple[str, ...], ...]  # each topic cluster's most telling terms
    compared: int = 0  # pairs of questions checked on their exact term sets
    capped: int = 0  # questions with more than CHECKS candidates (their likeliest CHECKS checked)
    full: int = 0  # band buckets that reached BUCKET leaders (later leaders not added to them)

    @property
    def folded(self) -> int:
        return sum(len(g.members) - 1 for g in self.groups)


def terms(normalised: str) -> list[str]:
    words = normalised.split()
    found = {w for w in words if w not in FUNCTION_WORDS}
    found.update(f"{a} {b}" for a, b in zip(words, words[1:]))
    return sorted(found) or [normalised]


def band_of(frequency: int) -> int:
    return min(len(BAND_NAMES) - 1, int(frequency).bit_length() - 1)


def _count(texts: Sequence[str]) -> tuple[list[str], list[int], dict[str, str]]:
    """Distinct normalised texts, most asked first (ties in text order), their counts, and
    each one's most-typed spelling (the first typed among equals)."""
    counts: Counter = Counter()
    spellings: dict[str, Counter] = {}
    for text in texts:
        key = normalise(text)
        if not key:
            continue
        counts[key] += 1
        spellings.setdefault(key, Counter())[" ".join(text.split())] += 1
    order = sorted(counts, key=lambda k: (-counts[k], k))
    spelled = {k: spellings[k].most_common(1)[0][0] for k in order}
    return order, [counts[k] for k in order], spelled


class _TermSets:
    """Every text's sorted term hashes in one flat array, and the signatures over them."""

    def __init__(self, texts: Sequence[str]):
        hashes: list[int] = []
        owners: list[int] = []
        for i, text in enumerate(texts):
            values = sorted({shingle_hash(t) for t in terms(text)})
            hashes.extend(values)
            owners.extend([i] * len(values))
        self.hashes = np.array(hashes, dtype=np.uint64)
        self.starts = np.searchsorted(np.array(owners, dtype=np.int64), np.arange(len(texts) + 1))
        self.slots = batch_slots(self.hashes, np.array(owners, dtype=np.int64), len(texts))

    def of(self, i: int) -> np.ndarray:
        return self.hashes[self.starts[i]:self.starts[i + 1]]

    def jaccards(self, i: int, others: np.ndarray) -> list[float]:
        """The Jaccard similarity of text ``i``'s term set with each of ``others``' (a term
        set is a few dozen hashes: Python's sets beat a numpy call per pair tenfold)."""
        a = set(self.of(i).tolist())
        out = []
        for s, e in zip(self.starts[others].tolist(), self.starts[others + 1].tolist()):
            shared = len(a.intersection(self.hashes[s:e].tolist()))
            out.append(shared / (len(a) + (e - s) - shared))
        return out


def _leaders(sets: _TermSets, count: int, threshold: float,
             tick: Callable[[int, int], None]) -> tuple[np.ndarray, tuple[int, int, int]]:
    """For each text (in order), the index of the leader it folds into (itself when it leads);
    and the work done: (pairs checked exactly, questions capped at CHECKS, buckets full)."""
    buckets: list[dict[bytes, list[int]]] = [{} for _ in range(BANDS)]
    leader = np.arange(count)
    keys = np.ascontiguousarray(sets.slots[:, :BANDS * ROWS]).view(np.uint8).reshape(count, BANDS, ROWS * 4)
    # A signature pair far below the threshold is not worth the exact check (the estimate's
    # standard error is at most 0.5 / sqrt(64) = 0.0625, so 0.2 under is over three of them).
    floor = max(0.0, threshold - 0.2) * SLOTS
    # A small log compares every pair (at most EXHAUSTIVE**2 / 2 signature checks, well under
    # a second): there the bands would only lose the pairs near the threshold they miss.
    everyone = count <= EXHAUSTIVE
    leading: list[int] = []
    compared = capped = full = 0
    for i in range(count):
        row = keys[i]
        seen: set[int] = set(leading) if everyone else set()
        for b in range(0 if everyone else BANDS):
            seen.update(buckets[b].get(row[b].tobytes(), ()))
        best, best_sim = i, threshold
        if seen:
            near = np.fromiter(seen, dtype=np.int64, count=len(seen))
            agree = np.count_nonzero(sets.slots[near] == sets.slots[i], axis=1)
            likely = agree >= floor
            near, agree = near[likely], agree[likely]
            if len(near) > CHECKS:
                # the most agreeing signatures first, ties by index: the same pairs every run
                capped += 1
                near = near[np.lexsort((near, -agree))[:CHECKS]]
            compared += len(near)
            for j, sim in zip(near.tolist(), sets.jaccards(i, near) if len(near) else ()):
                # The most similar leader wins; among equals the earlier (more asked) one.
                if sim > best_sim or (sim == best_sim and (best == i or j < best)):
                    best, best_sim = j, sim
        if best == i:
            leading.append(i)
            for b in range(0 if everyone else BANDS):
                bucket = buckets[b].setdefault(row[b].tobytes(), [])
                if len(bucket) < BUCKET:
                    bucket.append(i)
                    full += len(bucket) == BUCKET
        else:
            leader[i] = best
        if i % 1000 == 999 or i == count - 1:
            tick(i % 1000 + 1, count)
    return leader, (compared, capped, full)


def _topics(texts: Sequence[str], weights: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """Spherical k-means over tf-idf term vectors projected on DIMENSIONS random directions
    (a projection keeps cosines on average and keeps memory at n x 64 floats)."""
    n = len(texts)
    k = max(1, min(k, n))
    words = [[w for w in t.split() if w not in FUNCTION_WORDS] or t.split() for t in texts]
    vocab = sorted({w for ws in words for w in ws})
    index = {w: i for i, w in enumerate(vocab)}
    rows = np.fromiter((r for r, ws in enumerate(words) for _ in ws), dtype=np.int64)
    cols = np.fromiter((index[w] for ws in words for w in ws), dtype=np.int64)
    df = np.bincount(np.unique(rows * len(vocab) + cols) % len(vocab), minlength=len(vocab))
    idf = np.log((n + 1) / (df + 1)) + 1
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((len(vocab), DIMENSIONS)).astype(np.float32)
    vectors = np.zeros((n, DIMENSIONS), dtype=np.float32)
    for lo in range(0, len(rows), 1 << 16):  # in slices: len(rows) x 64 floats at once is large
        r, c = rows[lo:lo + (1 << 16)], cols[lo:lo + (1 << 16)]
        np.add.at(vectors, r, directions[c] * idf[c, None].astype(np.float32))
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    centres = vectors[rng.choice(n, size=k, replace=False)]
    assign = np.zeros(n, dtype=np.int64)
    for _ in range(KMEANS_ROUNDS):
        assign = np.argmax(vectors @ centres.T, axis=1)
        for c in range(k):
            mine = vectors[assign == c]
            if len(mine):
                centre = mine.sum(axis=0)
                centres[c] = centre / max(float(np.linalg.norm(centre)), 1e-12)
    labels = []
    for c in range(k):
        score: Counter = Counter()
        for r in np.flatnonzero(assign == c):
            for w in set(words[r]):
                score[w] += float(weights[r] * idf[index[w]])
        labels.append(tuple(w for w, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:3]))
    return assign, labels


def stratified(strata: dict, count: int, seed: int) -> list:
    """Up to ``count`` items drawn from every stratum in turn (equal shares, so a small stratum
    is not crowded out), strata and each stratum's items in an order seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    queues = [[strata[key][j] for j in rng.permutation(len(strata[key]))] for key in sorted(strata)]
    queues = [queues[j] for j in rng.permutation(len(queues))]
    chosen: list = []
    depth = 0
    while len(chosen) < count and any(depth < len(q) for q in queues):
        chosen.extend(q[depth] for q in queues if depth < len(q))
        depth += 1
    return chosen[:count]


def _sample(groups: Sequence[Group], count: int, seed: int) -> list[Group]:
    strata: dict[tuple[int, int], list[Group]] = {}
    for g in groups:
        strata.setdefault((g.topic, g.band), []).append(g)
    return stratified(strata, count, seed)


def mine(texts: Sequence[str], known: Sequence[str] = (), count: int = 50, seed: int = 0,
         topics: int = 10, threshold: float = 0.5, tick: Callable[[int, int], None] = lambda n, total: None) -> Mined:
    """Fold ``texts`` (a log's questions, one per asking) into groups and sample ``count``.
    ``known`` are questions already in the gold set (or decided): their near-duplicates go.
    ``tick(n, total)`` hears of every n questions folded, for a progress bar."""
    order, counts, spelled = _count(texts)
    known_keys = sorted({k for k in map(normalise, known) if k})
    is_known = set(known_keys)
    asked = [k for k in order if k not in is_known]
    exact_known = [k for k in order if k in is_known]
    everything = known_keys + asked
    sets = _TermSets(everything)
    leader, work = _leaders(sets, len(everything), threshold, tick)
    first = len(known_keys)
    frequency = dict(zip(order, counts))
    folded: dict[int, list[int]] = {}
    dropped = list(exact_known)
    for i in range(first, len(everything)):
        lead = int(leader[i])
        if lead < first:
            dropped.append(everything[i])
        else:
            folded.setdefault(lead, []).append(i)
    leads = sorted(folded, key=lambda j: (-sum(frequency[everything[m]] for m in folded[j]), everything[j]))
    weights = np.array([sum(frequency[everything[m]] for m in folded[j]) for j in leads], dtype=np.float64)
    assign, labels = _topics([everything[j] for j in leads], weights, topics, seed) if leads else ([], [])
    groups = tuple(
        Group(spelled[everything[j]], int(weights[n]), tuple(everything[m] for m in folded[j]),
              int(assign[n]), band_of(int(weights[n])))
        for n, j in enumerate(leads))
    return Mined(len(texts), len(order), tuple(dropped), groups, tuple(_sample(groups, count, seed)),
                 tuple(labels), *work)
