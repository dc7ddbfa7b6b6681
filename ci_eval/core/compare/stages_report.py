"""Which stage lost the gold chunk, over a comparison: each stage's recall and losses on
both sides, the questions that lost their gold named with the first stage that lost it, the
misses broken down by stage, and the multi-step calls' hits (core/measure/stages.py).

A question *lost its gold* when the base held it at its last reported stage and the head
does not; without stages on the base, when it is one of the diff's questions that lost
their hit at k. Only questions on both sides count (``compared``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ci_eval.core.artefact.stage_records import RunStages
from ci_eval.core.measure.stages import StageRecord, StageSpec, StageSummary, summarise


@dataclass(frozen=True)
class LostQuestion:
    id: str
    stage: str  # the first stage that lost the gold
    ranks: tuple[int | None, ...]  # the first gold rank in each stage (None: absent or not reported)


@dataclass(frozen=True)
class CallsReport:
    questions: int
    budget: int | None
    found_at: tuple[tuple[int, int], ...]  # (call, questions found there), by call
    not_found: int
    hidden: int  # found by a call but missed by the final list cut at k


@dataclass(frozen=True)
class StagesReport:
    chain: tuple[StageSpec, ...]
    head: tuple[StageSummary, ...]
    base: tuple[StageSummary, ...] | None  # when the base recorded the same chain
    lost: tuple[LostQuestion, ...]
    misses: tuple[tuple[str, int], ...]  # head's questions without gold at the last stage, by the stage that lost it
    calls: CallsReport | None

    @property
    def empty(self) -> bool:
        return not self.chain and self.calls is None


def _last_holds(record: StageRecord) -> bool:
    return record.relevant > 0 and record.lost_at() is None


def _first_ranks(record: StageRecord) -> tuple[int | None, ...]:
    return tuple(r[0] if r else None for r in record.ranks)


def _calls(run: RunStages) -> CallsReport | None:
    if not run.calls:
        return None
    found = Counter(r.found_at for _, r in run.calls if r.found_at is not None)
    hidden = sum(1 for _, r in run.calls if r.found_at is not None and not r.final_hit)
    return CallsReport(len(run.calls), run.budget, tuple(sorted(found.items())),
                       sum(1 for _, r in run.calls if r.found_at is None), hidden)


def stages_report(head: RunStages, base: RunStages | None, compared: Iterable[str],
                  lost_at_k: Iterable[str]) -> StagesReport:
    """The report of ``head`` against ``base`` over the ``compared`` question ids;
    ``lost_at_k``: the ids of the diff's questions that lost their hit at k (used when the
    base recorded no stages)."""
    chain = head.chain
    records = dict(head.stages)
    summaries = summarise(chain, list(records.values())) if chain else ()
    same_chain = base is not None and tuple(s.name for s in base.chain) == tuple(s.name for s in chain)
    base_summaries = summarise(base.chain, [r for _, r in base.stages]) if same_chain and chain else None
    if base is not None and base.stages:
        base_records = dict(base.stages)
        wanted = set(compared)
        losing = [qid for qid in sorted(wanted) if qid in base_records and qid in records
                  and _last_holds(base_records[qid]) and not _last_holds(records[qid])]
    else:
        losing = sorted(qid for qid in lost_at_k if qid in records)
    lost = tuple(LostQuestion(qid, chain[at].name, _first_ranks(records[qid]))
                 for qid in losing if (at := records[qid].lost_at()) is not None)
    by_stage = Counter(at for r in records.values() if (at := r.lost_at()) is not None)
    misses = tuple((spec.name, by_stage[i]) for i, spec in enumerate(chain) if by_stage[i])
    return StagesReport(chain, summaries, base_summaries, lost, misses, _calls(head))
