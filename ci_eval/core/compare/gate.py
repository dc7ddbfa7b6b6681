"""The gate: a ``GatePolicy`` (``gate_policy.py``) applied to a ``Diff``, one small function
per rule kind, each returning its outcomes (passed, failed, or not applicable and why) and
the questions that tripped it. Every configured rule gets an outcome, on a pass too.

Rules (each optional; retriever errors always apply):

- ``min = {metric = floor}``: head's mean over its measured questions must reach the floor.
  Floors apply with or without a baseline; a floor on a metric the run did not measure fails.
- ``max_drop = {metric = allowed}``: the mean over the compared questions may fall by at most
  ``allowed`` (absolute). With ``regressions = "significant"`` (the default) a larger drop
  fails only when the exact one-sided test for a drop rejects at alpha (``stats.drop_p``;
  Holm among the ``max_drop`` metrics when there are several, never over the table's other
  metrics); with ``"always"`` it fails anyway.
- ``protected = [ids]``: these questions must stay hits at k.
- ``lost_gold = true`` (the default without a ``[gate]`` table): a compared question that had
  a gold chunk in the top k on the base and has none on the head fails, unless the base shows
  it flapping or a person accepted that very loss (``acceptance.py``).
- ``max_rank_drop = n`` (off by default): the same for a first gold rank that falls by more
  than ``n`` places. Improvements never fail either rule.
- ``max_new_misses = n``: at most ``n`` compared questions may lose their hit at k.
- ``tag_min = {tag = {metric = floor}}``: per-tag floors on head's measured questions.
- ``max_stale = n``: at most ``n`` questions may have gold ids missing from the index.
- ``max_missed_wrong = n``: at most ``n`` of head's questions may sit in the failure matrix's
  "missed, wrong" cell (no gold chunk at k and a wrong answer: retrieval failures the
  end-to-end eval saw). Without answer verdicts it fails closed.
- ``abstention = true``: false answers (unanswerable questions answered) and false "not
  found" (answerable ones abstained from) may not rise significantly against the base
  (exact McNemar on each, Holm over the two; ``abstention.py``), so trading one error for
  the other fails.

The relative rules (``max_drop``, ``lost_gold``, ``max_rank_drop``, ``max_new_misses``,
``protected``, ``abstention``) are not applicable
without a baseline (a first run: floors and errors still apply). With a baseline but no
comparison possible (too few shared questions, ``Diff.no_comparison``) they fail closed:
a gate that cannot compare must not pass as if nothing changed; the per-question rules fail
closed only when not one question could be compared (they judge each question on its own,
so the paired tests' minimum does not bind them). Questions whose gold went
stale are kept out of the comparison; only ``max_stale`` counts them. A question on which
the retriever failed fails the gate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.artefact.run_failure import run_failure
from ci_eval.core.compare.abstention import abstention_changes
from ci_eval.core.compare.acceptance import (
    Acceptance,
    Accepted,
    Excused,
    Loss,
    fell_by_more,
    flapping_on_base,
    lost_at_k,
    unused,
)
from ci_eval.core.compare.diff import Diff
from ci_eval.core.compare.gate_policy import (
    REGRESSION_POLICIES,
    GatePolicy,
    canonical_metric,
    merge_overrides,
    parse_override,
)
from ci_eval.core.compare.stats import ALPHA, holm, mean
from ci_eval.core.textfmt import f3, p_text, plural

__all__ = ["REGRESSION_POLICIES", "GatePolicy", "GateResult", "RuleOutcome", "canonical_metric",
           "PerQuestion", "evaluate_gate", "merge_overrides", "parse_override"]

PASSED, FAILED, NOT_APPLICABLE = "passed", "failed", "not applicable"
_EPS = 1e-9  # means are float sums; 4/5 must reach a floor of 0.8


@dataclass(frozen=True)
class RuleOutcome:
    rule: str  # errors | min | max_drop | protected | max_new_misses | tag_min | max_stale | stage_min | max_missed_wrong
    status: str  # passed | failed | not applicable
    message: str
    question_ids: tuple[str, ...] = ()
    subject: str = ""  # the metric (or tag/metric) the rule is about
    value: float | None = None  # what was measured, when the rule compares a number
    threshold: float | None = None  # the floor, allowed drop or cap

    @property
    def failed(self) -> bool:
        return self.status == FAILED

    def as_dict(self) -> dict:
        return {"rule": self.rule, "status": self.status, "subject": self.subject,
                "message": self.message, "questions": list(self.question_ids),
                "value": self.value, "threshold": self.threshold}


@dataclass(frozen=True)
class PerQuestion:
    """What the per-question rules found: the losses that fail the gate, those excused
    (accepted, or flapping on the base), and the committed acceptances nothing used."""

    failing: tuple[Loss, ...] = ()
    excused: tuple[Excused, ...] = ()
    unused: tuple[Acceptance, ...] = ()
    source: str = ""  # the acceptance file, as the comment names it

    @property
    def accepted(self) -> tuple[Excused, ...]:
        return tuple(e for e in self.excused if e.accepted)

    @property
    def flapping(self) -> tuple[Excused, ...]:
        return tuple(e for e in self.excused if not e.accepted)

    def as_dict(self) -> dict:
        return {"failing": [x.as_dict() for x in self.failing],
                "accepted": [{**e.loss.as_dict(), "reason": e.why} for e in self.accepted],
                "flapping": [{**e.loss.as_dict(), "why": e.why} for e in self.flapping],
                "unused_acceptances": [a.as_dict() for a in self.unused]}


@dataclass(frozen=True)
class GateResult:
    outcomes: tuple[RuleOutcome, ...]
    notes: tuple[str, ...]
    per_question: PerQuestion | None = None  # None: no per-question rule was applied

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> tuple[RuleOutcome, ...]:
        return tuple(o for o in self.outcomes if o.failed)

    def as_dict(self) -> dict:
        out = {"passed": self.passed, "failures": [f.as_dict() for f in self.failures],
               "rules": [o.as_dict() for o in self.outcomes], "notes": list(self.notes)}
        if self.per_question is not None:
            out["per_question"] = self.per_question.as_dict()
        return out


def _below(questions, metric: str, floor: float) -> tuple[str, ...]:
    rows = sorted((q.value(metric), q.id) for q in questions if q.value(metric) < floor - _EPS)
    return tuple(qid for _, qid in rows)


def _measured(diff: Diff):
    return [q for q in diff.head_questions if q.measured]


def partly_stale_clause(diff: Diff, metric: str, floor: float) -> str:
    """What a floor's mean is over when measured questions under the floor lost part of
    their gold to the index (their other gold ids still live, so they stay measured): a
    re-ingestion, not a collapse, may be what pulls the mean down."""
    measured = _measured(diff)
    partly = sum(1 for q in measured if q.stale and q.value(metric) < floor - _EPS)
    if not partly:
        return ""
    return (f" (a mean over {plural(len(measured), 'measured question')}; {partly} of those under "
            "the floor have gold ids missing from the index: the chunks those ids named count as "
            "misses until the gold set is re-validated, e.g. with ci-eval gold remap)")


def _relative_blocked(rule: str, diff: Diff, subject: str = "") -> RuleOutcome | None:
    """The outcome of a relative rule that cannot compare, else None (go on and check)."""
    if not diff.has_base:
        return RuleOutcome(rule, NOT_APPLICABLE, "no baseline, nothing to compare against",
                           (), subject)
    if diff.no_comparison:
        return RuleOutcome(rule, FAILED, f"no comparison possible, so it cannot be checked "
                           f"(fail closed): {diff.no_comparison}", (), subject)
    return None


def rule_errors(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    """Fails on head's run failing by the one definition (core/artefact/run_failure.py):
    an error on any question of the recorded pass, or of any further pass of a repeated run."""
    errors = diff.errors
    failure = run_failure(len(errors), diff.head_info.repeat)
    if failure is None:
        return [RuleOutcome("errors", PASSED, "the retriever answered every question")]
    if errors:
        return [RuleOutcome("errors", FAILED, f"the retriever failed on "
                            f"{plural(len(errors), 'question')} (fail closed)",
                            tuple(q.id for q in errors))]
    # Every recorded answer is there: a further pass of a repeated run failed.
    return [RuleOutcome("errors", FAILED, f"{failure} (fail closed)", (diff.head_info.repeat.failed[1],))]


def rule_min(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    out = []
    for metric, floor in policy.min:
        mc = diff.metric(metric)
        if metric not in diff.head_info.metrics or mc is None or mc.head_overall is None:
            out.append(RuleOutcome("min", FAILED, f"{metric} has a floor of {f3(floor)} but "
                                   "this run did not measure it", (), metric))
        elif mc.head_overall < floor - _EPS:
            out.append(RuleOutcome("min", FAILED, f"{metric} is {f3(mc.head_overall)}, below "
                                   f"the floor {f3(floor)}{partly_stale_clause(diff, metric, floor)}",
                                   _below(_measured(diff), metric, floor), metric,
                                   mc.head_overall, floor))
        else:
            out.append(RuleOutcome("min", PASSED, f"{metric} is {f3(mc.head_overall)}, at or "
                                   f"above the floor {f3(floor)}", (), metric,
                                   mc.head_overall, floor))
    return out


def _drop_test(t, p: float, family: int) -> str:
    """The gate's own test, named: one-sided for a drop, exact, uncorrected by the table's
    other metrics (Holm only among the ``max_drop`` rules, when there are several)."""
    name = ("exact one-sided McNemar test" if t.method == "Tango score"
            else "one-sided sign-flip test")
    among = f", Holm over the {family} max_drop metrics" if family > 1 else ""
    tied = f", {t.ties} flapping across repeated passes counted as unchanged" if t.ties else ""
    return f"{name} for a drop: {p_text(p)}{among}{tied}"


def _one_drop(policy: GatePolicy, diff: Diff, metric: str, allowed: float,
              p: float | None, family: int) -> RuleOutcome:
    blocked = _relative_blocked("max_drop", diff, metric)
    if blocked:
        return blocked
    mc = diff.metric(metric)
    if mc is None or mc.missing or not mc.compared:
        why = f"not measured on {mc.missing}" if mc is not None and mc.missing else "not measured"
        return RuleOutcome("max_drop", NOT_APPLICABLE, f"{metric}: {why}", (), metric)
    drop = -(mc.delta or 0.0)
    moved = f"{metric} {f3(mc.base)} → {f3(mc.head)} ({-drop:+.3f}"
    if drop <= allowed + _EPS:
        return RuleOutcome("max_drop", PASSED, f"{moved}, within the {f3(allowed)} allowed)",
                           (), metric, drop, allowed)
    t = mc.test
    p = 1.0 if p is None else p
    significant = p < ALPHA
    lowered = tuple(diff.fell_on(metric).ids())
    if policy.regressions == "always" or significant:
        label = "a significant drop" if significant else "counted although not a significant drop"
        return RuleOutcome("max_drop", FAILED, f"{metric} fell {f3(mc.base)} → {f3(mc.head)} "
                           f"({-drop:+.3f}, more than the {f3(allowed)} allowed; {label}, "
                           f"{_drop_test(t, p, family)})", lowered, metric, drop, allowed)
    return RuleOutcome("max_drop", PASSED, f"{moved}, more than the {f3(allowed)} allowed but "
                       f"not a significant drop, {_drop_test(t, p, family)}; not failing because "
                       'regressions = "significant")', (), metric, drop, allowed)


def rule_max_drop(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    """Each ``max_drop`` metric's drop tested one-sided (``PairedTest.p_drop``), not
    corrected for the table's other metrics: the promised metric is the gate's question,
    the rest describe. Several ``max_drop`` rules are one family among themselves (Holm), so
    the gate's chance of a false failure stays under alpha however many there are."""
    tests = {metric: diff.metric(metric) for metric, _ in policy.max_drop}
    live = [m for m, mc in tests.items() if mc is not None and mc.compared and mc.test.p_drop is not None]
    adjusted = dict(zip(live, holm([tests[m].test.p_drop for m in live])))
    return [_one_drop(policy, diff, metric, allowed, adjusted.get(metric), len(live))
            for metric, allowed in policy.max_drop]


def _why_not_protected(q, qid: str) -> str:
    if q is None:
        return f"{qid} is not in this run"
    if q.status == "error":
        return f"{qid} hit a retriever error"
    if q.first_gold_rank:
        return f"{qid} has its first gold at rank {q.first_gold_rank}"
    return f"{qid} has no gold retrieved"


def rule_protected(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    if not policy.protected:
        return []
    if diff.has_base and diff.no_comparison:
        return [_relative_blocked("protected", diff)]
    unprotected, reasons, skipped = [], [], []
    for qid in policy.protected:
        q = diff.head_question(qid)
        if q is not None and q.status in ("stale", "unanswerable"):
            skipped.append(f"{qid} is {q.status}")
        elif not (q is not None and q.status == "ok" and q.hit(diff.k)):
            unprotected.append(qid)
            reasons.append(_why_not_protected(q, qid))
    kept = f"; not judged: {', '.join(skipped)}" if skipped else ""
    n = len(policy.protected)
    if not unprotected:
        return [RuleOutcome("protected", PASSED, f"{plural(n - len(skipped), 'protected question')}"
                            f" a hit at k={diff.k}{kept}", (), "", 0.0, 0.0)]
    shown = "; ".join(reasons[:3]) + (f"; +{len(reasons) - 3} more" if len(reasons) > 3 else "")
    verb = "are" if len(unprotected) != 1 else "is"
    return [RuleOutcome("protected", FAILED, f"{plural(len(unprotected), 'protected question')} "
                        f"{verb} not a hit at k={diff.k} ({shown}){kept}", tuple(unprotected),
                        "", float(len(unprotected)), 0.0)]


def rule_max_new_misses(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    cap = policy.max_new_misses
    if cap is None:
        return []
    blocked = _relative_blocked("max_new_misses", diff)
    if blocked:
        return [blocked]
    lost = tuple(q.id for q in diff.lost_changes if q.base_rank is not None and q.base_rank <= diff.k)
    status = FAILED if len(lost) > cap else PASSED
    return [RuleOutcome("max_new_misses", status, f"{plural(len(lost), 'question')} lost "
                        f"{'its' if len(lost) == 1 else 'their'} gold chunk at k={diff.k} "
                        f"(at most {cap} allowed)", lost if status == FAILED else (), "",
                        float(len(lost)), float(cap))]


def _sorted_out(losses, flaps: dict, accepted: Accepted) -> tuple[list[Loss], list[Excused]]:
    failing, excused = [], []
    for loss in losses:
        acceptance = accepted.find(loss)
        if acceptance is not None:
            excused.append(Excused(loss, acceptance.reason, True))
        elif loss.question in flaps:
            excused.append(Excused(loss, flaps[loss.question], False))
        else:
            failing.append(loss)
    return failing, excused


def _excused_clause(excused: list[Excused]) -> str:
    accepted = sum(e.accepted for e in excused)
    parts = ([f"{accepted} accepted"] if accepted else []) + (
        [f"{len(excused) - accepted} flapping on the base"] if len(excused) > accepted else [])
    return f" ({', '.join(parts)}, not counted)" if parts else ""


def _per_question_outcome(rule: str, what: str, failing: list[Loss], excused: list[Excused]) -> RuleOutcome:
    n = len(failing)
    if not failing:
        said = f"no question {what}" if not excused else f"{plural(len(excused), 'question')} {what}"
        return RuleOutcome(rule, PASSED, f"{said}{_excused_clause(excused)}", (), "", 0.0, 0.0)
    return RuleOutcome(rule, FAILED, f"{plural(n, 'question')} {what}, not flapping on the base and not "
                       f"accepted{_excused_clause(excused)}", tuple(x.question for x in failing), "",
                       float(n), 0.0)


def per_question_rules(policy: GatePolicy, diff: Diff, accepted: Accepted | None = None,
                       recent=None) -> tuple[list[RuleOutcome], PerQuestion | None]:
    """``lost_gold`` and ``max_rank_drop``: each loss fails unless accepted or flapping on
    the base (``acceptance.py``)."""
    if not policy.per_question:
        return [], None
    rules = [r for r, on in (("lost_gold", policy.lost_gold), ("max_rank_drop", policy.max_rank_drop is not None)) if on]
    # A loss is a fact about one question: the rules need no minimum number of compared
    # questions (MIN_SHARED is the paired tests'), only one question to compare.
    if not diff.has_base or not diff.compared:
        return [_relative_blocked(r, diff) for r in rules], None
    accepted = accepted or Accepted()
    flaps = flapping_on_base(diff, recent)
    out, failing, excused, seen = [], [], [], []
    if policy.lost_gold:
        losses = lost_at_k(diff)
        f, e = _sorted_out(losses, flaps, accepted)
        out.append(_per_question_outcome("lost_gold", f"lost its gold chunk at k={diff.k}"
                                         if len(losses) <= 1 else f"lost their gold chunk at k={diff.k}", f, e))
        failing += f
        excused += e
        seen += losses
    if policy.max_rank_drop is not None:
        places = policy.max_rank_drop
        losses = [x for x in fell_by_more(diff, places) if x.question not in {s.question for s in seen}]
        f, e = _sorted_out(losses, flaps, accepted)
        out.append(_per_question_outcome("max_rank_drop", f"fell more than {plural(places, 'place')} "
                                         "in first gold rank", f, e))
        failing += f
        excused += e
        seen += losses
    return out, PerQuestion(tuple(failing), tuple(excused), unused(accepted, seen), accepted.source)


def _one_tag_floor(diff: Diff, tag: str, metric: str, floor: float) -> RuleOutcome:
    subject = f"{tag}/{metric}"
    group = [q for q in _measured(diff) if tag in q.tags]
    if not group:
        return RuleOutcome("tag_min", FAILED, f"tag {tag} has a {metric} floor but no "
                           "measured questions", (), subject)
    if metric not in diff.head_info.metrics:
        return RuleOutcome("tag_min", FAILED, f"tag {tag}: {metric} has a floor but this run "
                           "did not measure it", (), subject)
    value = mean(q.value(metric) for q in group)
    if value < floor - _EPS:
        return RuleOutcome("tag_min", FAILED, f"tag {tag}: {metric} is {f3(value)}, below the "
                           f"floor {f3(floor)}", _below(group, metric, floor), subject,
                           value, floor)
    return RuleOutcome("tag_min", PASSED, f"tag {tag}: {metric} is {f3(value)}, at or above "
                       f"the floor {f3(floor)}", (), subject, value, floor)


def rule_tag_min(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    return [_one_tag_floor(diff, tag, metric, floor)
            for tag, table in policy.tag_min for metric, floor in table]


def rule_max_stale(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    cap = policy.max_stale
    if cap is None:
        return []
    stale = diff.stale.ids
    index = diff.head_info.index_version or "(unversioned)"
    status = FAILED if len(stale) > cap else PASSED
    verb = "has" if len(stale) == 1 else "have"
    return [RuleOutcome("max_stale", status, f"{plural(len(stale), 'question')} {verb} gold "
                        f"ids missing from index {index} (at most {cap} allowed)",
                        stale if status == FAILED else (), "", float(len(stale)), float(cap))]


def _abstention_outcome(c) -> RuleOutcome:
    moved = (f"{c.kind} {c.base_wrong} → {c.head_wrong} of the "
             f"{plural(c.questions, c.pool + ' question')} both runs scored ({len(c.worse)} "
             f"new, {c.fixed} fixed; McNemar, Holm over the two: {p_text(c.p_adjusted)})")
    if c.worsened:
        return RuleOutcome("abstention", FAILED, f"{moved}: significantly more", c.worse,
                           c.kind, float(c.head_wrong), float(c.base_wrong))
    return RuleOutcome("abstention", PASSED, f"{moved}: no significant rise", (), c.kind,
                       float(c.head_wrong), float(c.base_wrong))


def rule_abstention(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    if not policy.abstention:
        return []
    blocked = _relative_blocked("abstention", diff)
    if blocked:
        return [blocked]
    head, base = diff.cutoff.head, diff.cutoff.base
    if head.cutoff is None or base is None or base.cutoff is None:
        side = "this run" if head.cutoff is None else "the base"
        return [RuleOutcome("abstention", FAILED, f"{side} has no abstain_below, so false "
                            "answers and false \"not found\" cannot be counted (fail closed)")]
    return [_abstention_outcome(c) for c in abstention_changes(base, head)]


def rule_stage_min(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    """A floor on a stage's recall at its depth (core/measure/stages.py): the pool's
    recall, the ceiling every later stage works under, held apart from the final list's."""
    out = []
    summaries = {s.spec.name: s for s in diff.stages.head}
    for name, floor in policy.stage_min:
        subject = f"stage {name}"
        found = summaries.get(name)
        if found is None or found.recall is None:
            out.append(RuleOutcome("stage_min", FAILED, f"stage {name!r} has a recall floor of {f3(floor)} but "
                                   "this run recorded no such stage (fail closed)", (), subject, None, floor))
        elif found.recall < floor - _EPS:
            out.append(RuleOutcome("stage_min", FAILED, f"recall of stage {name!r} at its {found.where} is "
                                   f"{f3(found.recall)}, below the floor {f3(floor)}", (), subject,
                                   found.recall, floor))
        else:
            out.append(RuleOutcome("stage_min", PASSED, f"recall of stage {name!r} at its {found.where} is "
                                   f"{f3(found.recall)}, at or above the floor {f3(floor)}", (), subject,
                                   found.recall, floor))
    return out


def rule_max_missed_wrong(policy: GatePolicy, diff: Diff) -> list[RuleOutcome]:
    """A cap on the questions whose gold chunk was missed and whose answer was wrong."""
    cap = policy.max_missed_wrong
    if cap is None:
        return []
    mx = diff.matrix
    if not mx.available:
        return [RuleOutcome("max_missed_wrong", FAILED, "no answer verdicts on this run, so the failure matrix's "
                            "\"missed, wrong\" cell cannot be counted (fail closed; see [answers])", (),
                            "missed, wrong", None, float(cap))]
    ids = tuple(t for t, cell in mx.head_cells if cell == "missed_wrong")
    count = mx.head.count("missed_wrong")
    status = FAILED if count > cap else PASSED
    return [RuleOutcome("max_missed_wrong", status, f"{plural(count, 'question')} missed the gold chunk at k and "
                        f"got a wrong answer, of {mx.head.known} with a verdict (at most {cap} allowed)",
                        ids if status == FAILED else (), "missed, wrong", float(count), float(cap))]


# The rules in the order the comment lists them.
RULES = (rule_errors, rule_min, rule_max_drop, rule_protected, rule_max_new_misses,
         rule_tag_min, rule_max_stale, rule_abstention, rule_stage_min, rule_max_missed_wrong)


def _notes(policy: GatePolicy, diff: Diff) -> list[str]:
    notes = []
    stale = len(diff.stale.ids)
    if stale:
        notes.append(f"{plural(stale, 'question')} with stale gold "
                     f"{'is' if stale == 1 else 'are'} kept out of the comparison")
    if policy.empty:
        notes.append("no gate rules configured: only retriever errors can fail this check")
    return notes


def evaluate_gate(policy: GatePolicy, diff: Diff, accepted: Accepted | None = None,
                  recent=None) -> GateResult:
    """Every configured rule's outcome. ``accepted``: the committed acceptances and the PR's
    label; ``recent``: the base branch's recent runs (core/compare/recent_runs.py), which
    with the base's ``--repeat`` record say which questions flap."""
    outcomes = [o for rule in RULES for o in rule(policy, diff)]
    per_question, found = per_question_rules(policy, diff, accepted, recent)
    # listed after the means' rules, before protected and max_new_misses
    at = 1 + max(i for i, o in enumerate(outcomes) if o.rule in ("errors", "min", "max_drop"))
    outcomes[at:at] = per_question
    return GateResult(tuple(outcomes), tuple(_notes(policy, diff)), found)
