"""What this gold set's gate can see: the base run compared with itself (no change) and
with heads that push 1, 2, 3 or 5 questions' gold chunks past k, each comparison made by
the real ``diff`` and decided by the real gate (``evaluate_gate``), so every rule the config
has is measured the same way: floors, ``max_drop``, ``max_new_misses``, ``protected``,
``tag_min`` and any rule added later.

The base artefact holds each question's ranking, gold and metric values. A simulated run
starts from it: with ``jitter`` > 0 each adjacent pair of a ranking swaps with that
probability (the run-to-run noise of a retriever that is not deterministic; 0, the default,
is a deterministic one, and then "no change" is the artefact against itself). A pushed
question has its gold chunks moved from the top k to just past it (rank k + 1 on), the
rest of its ranking moving up; only questions with gold in the head's top k can be pushed.
A changed ranking gets its metric values, first gold rank and judged@k computed again.

Metrics measured on document characters (evidence_recall@d, evidence_precision@d) need the
index's chunk spans, which the artefact does not hold: a pushed question's values at a depth
``d <= k`` become 0 (its gold chunks, the ones its evidence resolved to, left the top k) and
the rest keep the base's; jitter leaves them as they are. The result names these metrics.

Pure: an artefact dict in, rates out; a seeded generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ci_eval.core.artefact.question_row import FIELD, from_row
from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.gate import evaluate_gate
from ci_eval.core.compare.stats import ALPHA, SEED, Z_POWER, z_two_sided
from ci_eval.core.measure.metrics import compute
from ci_eval.core.measure.names import resolve_metric

PUSHED = (0, 1, 2, 3, 5)  # questions pushed past k in each column; 0 is "no change"


def column_name(pushed: int) -> str:
    return "no change" if pushed == 0 else f"{pushed} pushed past k"


@dataclass(frozen=True)
class RuleRates:
    """How often one configured rule (``rule`` on ``subject``) failed in each column."""

    rule: str
    subject: str
    rates: tuple[float, ...]  # one per ``PUSHED`` column

    @property
    def label(self) -> str:
        return f"{self.rule} {self.subject}".strip()

    def as_dict(self) -> dict:
        return {"rule": self.rule, "subject": self.subject,
                "fails": {column_name(p): r for p, r in zip(PUSHED, self.rates)}}


@dataclass(frozen=True)
class SelftestResult:
    questions: int  # answerable measured questions of the base run
    pushable: int  # of those, with gold in the top k
    pairs: int
    jitter: float
    k: int
    rules: tuple[RuleRates, ...]
    gate: tuple[float, ...]  # any rule failed, per column
    approximated: tuple[str, ...]  # evidence metrics (see the module's docstring)
    needed: tuple[tuple[str, float, int | None], ...]  # (metric, drop d, questions to detect it)

    def as_dict(self) -> dict:
        return {"questions": self.questions, "pushable": self.pushable, "pairs": self.pairs,
                "jitter": self.jitter, "k": self.k,
                "columns": [column_name(p) for p in PUSHED],
                "rules": [r.as_dict() for r in self.rules],
                "gate": {column_name(p): r for p, r in zip(PUSHED, self.gate)},
                "approximated": list(self.approximated),
                "questions_to_detect": [{"metric": m, "drop": d, "questions": n}
                                        for m, d, n in self.needed]}


def questions_of(data: dict) -> list[dict]:
    """An artefact dict's questions as version 1 objects (a version 2 row read by its
    ``question_fields``), copies the simulation may change."""
    metrics = data["metrics"]
    if data.get("schema_version") == 2:
        fields = data.get("question_fields") or list(FIELD)
        out = []
        for row in data["questions"]:
            named = dict(zip(fields, row))
            out.append(from_row([named.get(f) for f in FIELD], metrics))
        return out
    return [dict(q) for q in data["questions"]]


def _simulable(q: dict) -> bool:
    return (q.get("status") == "ok" and not q.get("unanswerable") and not q.get("stale")
            and any(g > 0 for g in q["gold"].values()))


@dataclass(frozen=True)
class _Setting:
    metrics: tuple[str, ...]
    computed: tuple[str, ...]  # measured on chunk judgements: computed again
    evidence: tuple[tuple[str, int | None], ...]  # (name, depth)
    k: int
    level: float


def _jittered(ranking: list, jitter: float, rng: np.random.Generator) -> list:
    out = list(ranking)
    if jitter > 0:
        for i in np.flatnonzero(rng.random(max(len(out) - 1, 0)) < jitter).tolist():
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def pushed_past(ids: list, gold: dict, k: int, level: float) -> list:
    """``ids`` with every gold chunk moved to just past the top k, in its order (the rest
    moving up); when fewer than k other results were returned, the gold drops out."""
    relevant = [i for i in ids if gold.get(i, 0) >= level]
    rest = [i for i in ids if gold.get(i, 0) < level]
    return rest[:k] + relevant + rest[k:] if len(rest) >= k else rest


def _remeasured(changes: list, s: _Setting) -> list:
    """``changes``: (question, new ranking, pushed) -> the questions as a run with those
    rankings would have measured them (scores kept by position, so a ranking stays in
    order), every metric computed in one call."""
    if not changes:
        return []
    values = (compute(s.computed, [ids for _, ids, _ in changes], [q["gold"] for q, _, _ in changes], s.level)
              if s.computed else {})
    out = []
    for n, (q, ids, pushed) in enumerate(changes):
        metrics = dict(q["metrics"])
        metrics.update({m: float(v[n]) for m, v in values.items()})
        if pushed:
            metrics.update({m: 0.0 for m, depth in s.evidence if depth is not None and depth <= s.k})
        ranks = [r for r, i in enumerate(ids, 1) if q["gold"].get(i, 0) >= s.level]
        top = ids[:s.k]
        out.append({**q, "ranking": [{"id": i, "score": e["score"]} for i, e in zip(ids, q["ranking"])],
                    "metrics": metrics, "first_gold_rank": ranks[0] if ranks else None,
                    "judged_at_k": sum(1 for i in top if i in q["gold"]) / len(top) if top else None})
    return out


def _run(header: dict, questions: list) -> dict:
    return {**header, "schema_version": 1, "questions": questions}


def _ids(q: dict) -> list:
    return [e["id"] for e in q["ranking"]]


def _in_top(q: dict, s: _Setting) -> bool:
    return any(q["gold"].get(e["id"], 0) >= s.level for e in q["ranking"][:s.k])


def _one_run(questions: list, order: list, s: _Setting, jitter: float, rng) -> list:
    """A simulated run: every simulable question's ranking redrawn with ``jitter``."""
    out = list(questions)
    if jitter > 0:
        redrawn = [(questions[i], _jittered(_ids(questions[i]), jitter, rng), False) for i in order]
        for i, q in zip(order, _remeasured(redrawn, s)):
            out[i] = q
    return out


def _push(questions: list, order: list, count: int, s: _Setting, rng) -> list:
    """``count`` questions with gold in the top k, drawn at random, pushed past it."""
    out = list(questions)
    chosen = rng.permutation([i for i in order if _in_top(questions[i], s)])[:count].tolist()
    pushed = [(questions[i], pushed_past(_ids(questions[i]), questions[i]["gold"], s.k, s.level), True)
              for i in chosen]
    for i, q in zip(chosen, _remeasured(pushed, s)):
        out[i] = q
    return out


def questions_to_detect(deltas: np.ndarray, drop: float, binary: bool, family: int = 1,
                        alpha: float = ALPHA, power_z: float = Z_POWER) -> int | None:
    """Questions needed for the gate's one-sided test at ``alpha`` (Holm over ``family``
    max_drop rules) to detect a fall of ``drop`` with 80 % power, from the per-question noise
    of ``deltas`` (no change): the MDC's equation (core/compare/stats.mdc) solved for ``n``,
    for a fall made of whole questions (``u`` = 1 for binary metrics, else the moved
    questions' mean size)."""
    if drop <= 0:
        return None
    moved = deltas[deltas != 0]
    v = float(np.mean(deltas ** 2)) if deltas.size else 0.0
    u = 1.0 if binary or moved.size == 0 else float(np.mean(np.abs(moved)))
    za = z_two_sided(2 * alpha / max(family, 1))  # one-sided at alpha / family
    spread = v + drop * u
    root = za * math.sqrt(spread) + power_z * math.sqrt(max(spread - drop * drop, 0.0))
    return max(math.ceil((root / drop) ** 2), 1)


def _outcomes(base: dict, head: dict, policy) -> tuple:
    """The real comparison and the real gate on two artefact dicts, as ``compare`` makes
    them (without what only a reader needs)."""
    return evaluate_gate(policy, diff(base, head, describe=False)).outcomes


def selftest(data: dict, policy, *, pairs: int = 50, jitter: float = 0.0,
             seed: int = SEED) -> SelftestResult:
    """The rates for the artefact ``data`` (a checked artefact dict) under ``policy`` (a
    ``GatePolicy``): each rule's outcome, as the gate words it, counted per column."""
    header = {key: value for key, value in data.items() if key not in ("questions", "question_fields")}
    questions = questions_of(data)
    metrics = tuple(data["metrics"])
    resolved = {m: resolve_metric(m) for m in metrics}
    level = float((data.get("config") or {}).get("relevance_level", 1) or 1)
    k = int(data["k"])
    s = _Setting(metrics, tuple(m for m in metrics if not resolved[m].on_evidence),
                 tuple((m, resolved[m].k) for m in metrics if resolved[m].on_evidence), k, level)
    order = [i for i, q in enumerate(questions) if _simulable(q)]
    pushable = sum(1 for i in order if _in_top(questions[i], s))
    counts: dict[tuple[str, str], list[int]] = {}
    gate = []
    for column, pushed in enumerate(PUSHED):
        rng = np.random.default_rng([seed, column])
        # without noise every "no change" pair is the same comparison: one is enough
        runs = 1 if jitter == 0 and pushed == 0 else pairs
        failed_any = 0
        for _ in range(runs):
            base = _one_run(questions, order, s, jitter, rng)
            head = _push(_one_run(questions, order, s, jitter, rng), order, pushed, s, rng)
            outcomes = [o for o in _outcomes(_run(header, base), _run(header, head), policy)
                        if o.rule != "errors"]
            for o in outcomes:
                counts.setdefault((o.rule, o.subject), [0] * len(PUSHED))[column] += o.failed * (pairs // runs)
            failed_any += any(o.failed for o in outcomes) * (pairs // runs)
        gate.append(failed_any / pairs)
    rules = tuple(RuleRates(rule, subject, tuple(c / pairs for c in row))
                  for (rule, subject), row in counts.items())
    return SelftestResult(len(order), pushable, pairs, jitter, k, rules, tuple(gate),
                          tuple(m for m, _ in s.evidence),
                          _needed(questions, order, s, policy, jitter, seed))


def _needed(questions, order, s: _Setting, policy, jitter: float, seed: int) -> tuple:
    """For each ``max_drop`` rule on a metric computed again: the questions its one-sided
    test needs to detect the allowed drop, from the no-change noise of two draws of each
    question at ``jitter``, four times over (none without jitter)."""
    wanted = [(m, d) for m, d in policy.max_drop if m in s.computed and d > 0]
    if not wanted or not order:
        return ()
    rng = np.random.default_rng([seed, len(PUSHED)])
    ranked = [[e["id"] for e in questions[i]["ranking"]] for i in order for _ in range(4)]
    golds = [questions[i]["gold"] for i in order for _ in range(4)]
    b = compute([m for m, _ in wanted], [_jittered(r, jitter, rng) for r in ranked], golds, s.level)
    h = compute([m for m, _ in wanted], [_jittered(r, jitter, rng) for r in ranked], golds, s.level)
    return tuple((m, d, questions_to_detect(h[m] - b[m], d, m.startswith("hit@"), len(wanted)))
                 for m, d in wanted)


def recorded_gate(data: dict) -> dict | None:
    """The ``[gate]`` table the run of the checked artefact ``data`` recorded; None when it
    recorded none (the default gate)."""
    return (data.get("config") or {}).get("gate")
