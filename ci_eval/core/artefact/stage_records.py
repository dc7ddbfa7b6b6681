"""A run's stage and call records, as the artefact's ``stages`` and ``calls`` keys hold them.

Compact by design: per question only the relevant gold's ranks in each stage (and in each
call), never the stages' rankings, so a pool of 50 costs a few numbers a question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ci_eval.core.artefact.results import Retrieved
from ci_eval.core.measure.stages import (
    StageRecord,
    StageSpec,
    call_ranks,
    found_at,
    stage_lists,
    stage_record,
)


def recorded_stage(record: StageRecord) -> dict:
    """A question's stage record as the artefact holds it ("added" only when any)."""
    out: dict = {"gold": record.relevant, "ranks": [None if r is None else list(r) for r in record.ranks]}
    if any(record.added):
        out["added"] = list(record.added)
    return out


def read_stage(raw: Mapping, stages: int) -> StageRecord:
    ranks = tuple(None if r is None else tuple(r) for r in raw["ranks"])
    return StageRecord(int(raw["gold"]), ranks, tuple(raw.get("added") or (0,) * stages))


@dataclass(frozen=True)
class CallRecord:
    """One question answered by several calls: each call's size and gold ranks, the call
    that found the evidence (stages.found_at) and whether the final list at k held it."""

    sizes: tuple[int, ...]
    ranks: tuple[tuple[int, ...], ...]
    found_at: int | None
    final_hit: bool

    def as_recorded(self) -> dict:
        return {"sizes": list(self.sizes), "ranks": [list(r) for r in self.ranks], "found_at": self.found_at,
                "final_hit": self.final_hit}

    @classmethod
    def from_recorded(cls, raw: Mapping) -> CallRecord:
        return cls(tuple(raw["sizes"]), tuple(tuple(r) for r in raw["ranks"]), raw.get("found_at"),
                   bool(raw.get("final_hit")))


@dataclass(frozen=True)
class RunStages:
    """What an artefact records of stages and calls (empty when the run had neither)."""

    chain: tuple[StageSpec, ...] = ()
    stages: tuple[tuple[str, StageRecord], ...] = ()  # (question id, record), in run order
    budget: int | None = None
    calls: tuple[tuple[str, CallRecord], ...] = ()

    def recorded(self) -> dict:
        """The artefact's ``stages`` and ``calls`` keys, only those that have something."""
        out: dict = {}
        if self.chain:
            out["stages"] = {"chain": [s.as_recorded() for s in self.chain],
                             "questions": {qid: recorded_stage(r) for qid, r in self.stages}}
        if self.calls:
            out["calls"] = {"budget": self.budget, "questions": {qid: r.as_recorded() for qid, r in self.calls}}
        return out


def read_run_stages(stages: Mapping | None, calls: Mapping | None) -> RunStages:
    """The artefact's keys (already held to its schema) back as a RunStages."""
    chain, records, budget, call_records = (), (), None, ()
    if isinstance(stages, Mapping):
        chain = tuple(StageSpec(s["name"], s.get("depth"), s.get("chars")) for s in stages["chain"])
        records = tuple((qid, read_stage(r, len(chain))) for qid, r in stages["questions"].items())
    if isinstance(calls, Mapping):
        budget = calls.get("budget")
        call_records = tuple((qid, CallRecord.from_recorded(r)) for qid, r in calls["questions"].items())
    return RunStages(chain, records, budget, call_records)


class StageCollector:
    """Records each answered question's stages and calls as the results pass by.

    ``relevant`` gives each question's relevant gold ids, ``{id: [chunk ids]}``; it is asked
    once, at the first answer with stages or calls. A run whose config names no stages and
    whose retriever never answers with calls does not build it: at 1,000,000 questions it
    held 106 MB (peak of `run` 948 MB with it, 842 MB without)."""

    def __init__(self, chain: Sequence[StageSpec], k: int, budget: int | None,
                 relevant: Callable[[], Mapping[str, Sequence[str]]], chars: Mapping[str, int] | None):
        self.chain, self.k, self.budget = tuple(chain), k, budget
        self._relevant, self.chars = relevant, chars
        self.relevant: Mapping[str, Sequence[str]] | None = None
        self.stages: list = []
        self.calls: list = []

    def passing(self, stream: Iterable[tuple[str, Retrieved]]):
        for qid, result in stream:
            self.add(qid, result)
            yield qid, result

    def add(self, qid: str, r: Retrieved) -> None:
        if r.failed or not (self.chain or r.calls):
            return
        if self.relevant is None:
            self.relevant = self._relevant()
        relevant = self.relevant.get(qid)
        if not relevant:
            return  # an error or a question without relevant gold has nothing to lose
        if self.chain:
            lists = stage_lists(self.chain, dict(r.stages), r.ids, self.chars)
            self.stages.append((qid, stage_record(lists, relevant)))
        if r.calls:
            ranks = call_ranks(r.calls, relevant)
            hit = not set(relevant).isdisjoint(r.ids[:self.k])
            self.calls.append((qid, CallRecord(tuple(map(len, r.calls)), ranks,
                                               found_at(list(map(len, r.calls)), ranks, self.budget), hit)))

    def result(self) -> RunStages:
        return RunStages(self.chain, tuple(self.stages), self.budget, tuple(self.calls))
