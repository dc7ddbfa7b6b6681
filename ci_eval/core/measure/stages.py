"""Which stage of a retrieval pipeline held the gold chunk, and which one lost it.

A pipeline has stages: a candidate pool, a reranker that reorders it, the final list, a
packer that sends some of it to the model. Each stage is a ranked list of ids cut at its
depth. Conventions (stated once, here):

- A stage *holds* a question's gold when any relevant gold id (grade at or above the
  relevance level) is in its list. Its recall is trec_eval's ``recall_k`` at the stage's
  depth: the share of the relevant gold ids in the list.
- The first stage that does not hold the gold, after one that did (or the first stage,
  when it never held it), *lost* it. A stage the retriever did not report for a question is
  skipped: the next stage is compared with the last one reported.
- The pool's recall is the ceiling: a later stage reorders or cuts what came before, so an
  id it holds that the stage before did not is a broken invariant, counted per stage.
- The final list is the stage named ``results`` (depth k); a packing stage (``chars``)
  takes the final list's ids in order while their lengths fit the budget, stopping at the
  first that does not (the prefix a packer sends).

Multi-step retrieval (several calls for one question) has its own rule, ``found_at``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

FINAL = "results"


@dataclass(frozen=True)
class StageSpec:
    """One stage: read from the answer at ``depth``, or packed from the final list to
    ``chars`` characters. The final list's depth is None until the chain sets it to k."""

    name: str
    depth: int | None = None
    chars: int | None = None

    def as_recorded(self) -> dict:
        return {"name": self.name, **({"chars": self.chars} if self.chars is not None else {"depth": self.depth})}


def stage_chain(specs: Sequence[StageSpec], k: int) -> tuple[StageSpec, ...]:
    """The configured stages with the final list placed: where the config names it, else
    before the first packing stage, else last. Its depth is k unless the config says."""
    specs = list(specs)
    at = next((i for i, s in enumerate(specs) if s.name == FINAL), None)
    if at is None:
        at = next((i for i, s in enumerate(specs) if s.chars is not None), len(specs))
        specs.insert(at, StageSpec(FINAL, k))
    elif specs[at].depth is None:
        specs[at] = StageSpec(FINAL, k)
    return tuple(specs)


def packed(ids: Sequence[str], chars: Mapping[str, int], budget: int) -> tuple[str, ...]:
    """The prefix of ``ids`` whose lengths add up to at most ``budget`` characters; an id
    of unknown length stops the packing (nothing can be said about what fits after it)."""
    out, used = [], 0
    for cid in ids:
        size = chars.get(cid)
        if size is None or used + size > budget:
            break
        used += size
        out.append(cid)
    return tuple(out)


def stage_lists(chain: Sequence[StageSpec], answered: Mapping[str, Sequence[str]], final: Sequence[str],
                chars: Mapping[str, int] | None) -> tuple[tuple[str, ...] | None, ...]:
    """Each stage's ids for one question (None: not reported by the retriever, or a packing
    stage with no chunk lengths to pack by)."""
    final_cut = tuple(final[:next(s.depth for s in chain if s.name == FINAL)])
    out: list[tuple[str, ...] | None] = []
    for spec in chain:
        if spec.name == FINAL:
            out.append(final_cut)
        elif spec.chars is not None:
            out.append(None if chars is None else packed(final_cut, chars, spec.chars))
        else:
            got = answered.get(spec.name)
            out.append(None if got is None else tuple(got[:spec.depth]))
    return tuple(out)


@dataclass(frozen=True)
class StageRecord:
    """One question through the stages: how many relevant gold ids it has, the 1-based
    ranks of those in each stage's list (None: stage not reported), and per stage how many
    ids it holds that the reported stage before it did not."""

    relevant: int
    ranks: tuple[tuple[int, ...] | None, ...]
    added: tuple[int, ...]

    def holds(self, i: int) -> bool | None:
        ranks = self.ranks[i]
        return None if ranks is None else bool(ranks)

    def lost_at(self) -> int | None:
        """The index of the first stage that lost the gold (the conventions above), None
        when the last reported stage still holds it or there is no gold to lose."""
        if not self.relevant:
            return None
        held_before = True
        for i in range(len(self.ranks)):
            held = self.holds(i)
            if held is None:
                continue
            if held_before and not held:
                return i
            held_before = held
        return None



def stage_record(lists: Sequence[tuple[str, ...] | None], relevant: Sequence[str]) -> StageRecord:
    """One question's record from its stage lists and its relevant gold ids."""
    wanted = set(relevant)
    ranks, added, before = [], [], None
    for ids in lists:
        if ids is None:
            ranks.append(None)
            added.append(0)
            continue
        ranks.append(tuple(rank for rank, cid in enumerate(ids, 1) if cid in wanted))
        added.append(0 if before is None else len(set(ids) - before))
        before = set(ids)
    return StageRecord(len(wanted), tuple(ranks), tuple(added))


@dataclass(frozen=True)
class StageSummary:
    """One stage over a run: recall at its depth (mean over the questions that reported it
    and have gold), how many of those it holds, how many it lost (held by the stage before),
    and how many questions broke the invariant (ids the stage before did not have)."""

    spec: StageSpec
    reported: int
    recall: float | None
    held: int
    lost: int
    added: int

    @property
    def where(self) -> str:
        return f"{self.spec.chars:,} characters" if self.spec.chars is not None else f"top {self.spec.depth}"


def summarise(chain: Sequence[StageSpec], records: Sequence[StageRecord]) -> tuple[StageSummary, ...]:
    """Each stage's summary over ``records`` (the measured questions with gold)."""
    out = []
    lost_at = [r.lost_at() for r in records]
    for i, spec in enumerate(chain):
        reporting = [r for r in records if r.ranks[i] is not None and r.relevant]
        recall = (sum(len(r.ranks[i]) / r.relevant for r in reporting) / len(reporting)) if reporting else None
        out.append(StageSummary(spec, len(reporting), recall, sum(1 for r in reporting if r.ranks[i]),
                                sum(1 for at in lost_at if at == i), sum(1 for r in records if r.added[i])))
    return tuple(out)


def found_at(sizes: Sequence[int], ranks: Sequence[Sequence[int]], budget: int | None) -> int | None:
    """The call (1-based) that found the evidence, None when none did within ``budget``.

    The rule: the calls' results are sent to the model whole and in order; a question is a
    hit at call c when call c holds a relevant gold id at rank r and the chunks sent before
    it plus r is at most ``budget`` (None: no budget). The first such call found it, so a
    second call that finds the gold chunk is a hit at call 2, never a miss hidden by a cut
    of the concatenation at k."""
    sent = 0
    for call, (size, found) in enumerate(zip(sizes, ranks), 1):
        if found and (budget is None or sent + min(found) <= budget):
            return call
        sent += size
    return None


def call_ranks(calls: Sequence[Sequence[str]], relevant: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The 1-based ranks of the relevant gold ids in each call's list."""
    wanted = set(relevant)
    return tuple(tuple(rank for rank, cid in enumerate(ids, 1) if cid in wanted) for ids in calls)
