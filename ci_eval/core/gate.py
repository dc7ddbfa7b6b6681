"""The gate: a policy from the config's ``[gate]`` table, applied to a ``Diff``.

Rules (each optional; retriever errors always apply):

- ``min = {metric = floor}``: head's mean over its measured questions must reach the floor.
  Floors apply with or without a baseline; a floor on a metric the run did not measure fails.
- ``max_drop = {metric = allowed}``: the mean over the compared questions may fall by at most
  ``allowed`` (absolute). With ``regressions = "significant"`` (the default) a larger drop
  fails only when the paired test calls it significant; with ``"always"`` it fails anyway.
- ``protected = [ids]``: these questions must stay hits at k.
- ``max_new_misses = n``: at most ``n`` compared questions may lose their hit at k.
- ``tag_min = {tag = {metric = floor}}``: per-tag floors on head's measured questions.
- ``max_stale = n``: at most ``n`` questions may have gold ids missing from the index.

Relative rules need a baseline and the metric on both sides; without them they yield a
"no comparison" note, never a silent pass. Questions whose gold went stale are kept out of
the comparison, so they never fail a relative rule; only ``max_stale`` counts them. A
question on which the retriever failed fails the gate (fail closed). Every failure names the
questions that tripped it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ci_eval.core.diff import Diff
from ci_eval.core.metrics import resolve_metric
from ci_eval.errors import InputError, InputErrors

REGRESSION_POLICIES = ("significant", "always")


def _count(n: int, one: str = "has", many: str = "have") -> str:
    """ "1 question has", "3 questions have": the gate's sentences read as sentences."""
    return f"{n} question {one}" if n == 1 else f"{n} questions {many}"
_EPS = 1e-9  # means are float sums; 4/5 must reach a floor of 0.8


@dataclass(frozen=True)
class GatePolicy:
    min: tuple[tuple[str, float], ...] = ()
    max_drop: tuple[tuple[str, float], ...] = ()
    regressions: str = "significant"
    protected: tuple[str, ...] = ()
    max_new_misses: int | None = None
    tag_min: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    max_stale: int | None = None

    @classmethod
    def from_mapping(cls, d: Mapping | None, source: str = "gate") -> GatePolicy:
        """Build from the ``[gate]`` table, reporting every problem at once."""
        d = dict(d or {})
        problems: list[InputError] = []

        def err(place: str, message: str) -> None:
            problems.append(InputError(message, source, place))

        known = {"min", "max_drop", "regressions", "protected", "max_new_misses",
                 "tag_min", "max_stale"}
        for key in sorted(set(d) - known, key=str):
            err(str(key), f"unknown gate rule (expected one of {', '.join(sorted(known))})")
        mins = _metric_table(d.get("min"), "min", err)
        drops = _metric_table(d.get("max_drop"), "max_drop", err, nonnegative=True)
        regressions = d.get("regressions", "significant")
        if regressions not in REGRESSION_POLICIES:
            err("regressions", f'expected "significant" or "always", got {regressions!r}')
            regressions = "significant"
        protected = d.get("protected", ())
        if not isinstance(protected, (list, tuple)) or not all(
                isinstance(p, str) for p in protected):
            err("protected", "expected a list of question ids")
            protected = ()
        counts = {}
        for key in ("max_new_misses", "max_stale"):
            value = d.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                err(key, f"expected a non-negative integer, got {value!r}")
                value = None
            counts[key] = value
        tag_min = []
        raw_tags = d.get("tag_min") or {}
        if not isinstance(raw_tags, Mapping):
            err("tag_min", "expected a table of tag = { metric = floor }")
            raw_tags = {}
        for tag in sorted(raw_tags, key=str):
            table = _metric_table(raw_tags[tag], f"tag_min.{tag}", err)
            if table:
                tag_min.append((str(tag), table))
        if problems:
            raise InputErrors(problems)
        return cls(mins, drops, regressions, tuple(dict.fromkeys(protected)),
                   counts["max_new_misses"], tuple(tag_min), counts["max_stale"])

    @property
    def empty(self) -> bool:
        return not (self.min or self.max_drop or self.protected or self.tag_min
                    or self.max_new_misses is not None or self.max_stale is not None)

    def with_overrides(self, min: Mapping[str, float] | None = None,
                       max_drop: Mapping[str, float] | None = None) -> GatePolicy:
        """CLI flags win over the config, metric by metric."""
        mins = dict(self.min)
        mins.update(min or {})
        drops = dict(self.max_drop)
        drops.update(max_drop or {})
        return GatePolicy(tuple(sorted(mins.items())), tuple(sorted(drops.items())),
                          self.regressions, self.protected, self.max_new_misses,
                          self.tag_min, self.max_stale)

    def as_dict(self) -> dict:
        return {
            "min": dict(self.min),
            "max_drop": dict(self.max_drop),
            "regressions": self.regressions,
            "protected": list(self.protected),
            "max_new_misses": self.max_new_misses,
            "tag_min": {t: dict(m) for t, m in self.tag_min},
            "max_stale": self.max_stale,
        }


def canonical_metric(name: str) -> str:
    """The registry's canonical name: ``success_5`` -> ``hit@5``; InputError if unknown."""
    return resolve_metric(name).name


def _metric_table(raw, place: str, err, nonnegative: bool = False):
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        err(place, "expected a table of metric = number")
        return ()
    out = {}
    for name in sorted(raw, key=str):
        value = raw[name]
        where = f"{place}.{name}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            err(where, f"expected a number, got {value!r}")
            continue
        if nonnegative and value < 0:
            err(where, f"expected a number >= 0, got {value!r}")
            continue
        try:
            canonical = canonical_metric(str(name))
        except InputError as exc:  # the registry's own message names the problem
            err(where, exc.message)
            continue
        out[canonical] = float(value)
    return tuple(sorted(out.items()))


def parse_override(text: str, flag: str) -> tuple[str, float]:
    """``"hit@5=0.8"`` -> ``("hit@5", 0.8)``; a usage error names the flag otherwise."""
    from ci_eval.errors import UsageError

    name, sep, value = str(text).partition("=")
    name = name.strip()
    try:
        number = float(value)
    except ValueError:
        number = None
    if not sep or not name or number is None or math.isnan(number):
        raise UsageError(f"{flag} expects METRIC=VALUE (e.g. {flag} hit@5=0.8), got {text!r}")
    try:
        return canonical_metric(name), number
    except InputError as exc:
        raise UsageError(f"{flag} {text}: {exc.message}") from exc


def merge_overrides(policy: GatePolicy, mins: list[str] | None = (),
                    max_drops: list[str] | None = ()) -> GatePolicy:
    """Apply ``--min METRIC=VALUE`` and ``--max-drop METRIC=VALUE`` flags to a policy."""
    m = dict(parse_override(t, "--min") for t in mins or ())
    d = dict(parse_override(t, "--max-drop") for t in max_drops or ())
    for name, value in d.items():
        if value < 0:
            from ci_eval.errors import UsageError

            raise UsageError(f"--max-drop {name}={value}: a drop must be >= 0")
    return policy.with_overrides(min=m, max_drop=d)


@dataclass(frozen=True)
class RuleFailure:
    rule: str  # errors | min | max_drop | protected | max_new_misses | tag_min | max_stale
    message: str
    question_ids: tuple[str, ...]
    subject: str = ""  # the metric (or tag/metric) the rule is about
    value: float | None = None  # what was measured, when the rule compares a number
    threshold: float | None = None  # the floor, allowed drop or cap

    def as_dict(self) -> dict:
        return {"rule": self.rule, "subject": self.subject, "message": self.message,
                "questions": list(self.question_ids), "value": self.value,
                "threshold": self.threshold}


@dataclass(frozen=True)
class GateResult:
    passed: bool
    failures: tuple[RuleFailure, ...]
    notes: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"passed": self.passed, "failures": [f.as_dict() for f in self.failures],
                "notes": list(self.notes)}


def _f(x: float) -> str:
    return f"{x:.3f}"


def _p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def _below(questions, metric: str, floor: float) -> tuple[str, ...]:
    rows = sorted((q.value(metric), q.id) for q in questions if q.value(metric) < floor - _EPS)
    return tuple(qid for _, qid in rows)


def evaluate_gate(policy: GatePolicy, diff: Diff) -> GateResult:
    failures: list[RuleFailure] = []
    notes: list[str] = []
    k = diff.k
    measured = [q for q in diff.head_questions if q.measured]
    head_metrics = set(diff.head_info.metrics)

    errors = diff.errors
    if errors:
        failures.append(RuleFailure(
            "errors", f"the retriever failed on {len(errors)} question"
            f"{'s' if len(errors) != 1 else ''} (fail closed)", tuple(q.id for q in errors)))

    for metric, floor in policy.min:
        mc = diff.metric(metric)
        if metric not in head_metrics or mc is None or mc.head_overall is None:
            failures.append(RuleFailure(
                "min", f"{metric} has a floor of {_f(floor)} but this run did not measure it",
                (), metric))
        elif mc.head_overall < floor - _EPS:
            failures.append(RuleFailure(
                "min", f"{metric} is {_f(mc.head_overall)}, below the floor {_f(floor)}",
                _below(measured, metric, floor), metric, mc.head_overall, floor))

    if policy.max_drop and not diff.has_base:
        notes.append("max_drop: no baseline, no comparison (floors still applied)")
    for metric, allowed in policy.max_drop if diff.has_base else ():
        mc = diff.metric(metric)
        if mc is None or mc.missing or not mc.compared:
            why = ("not measured on " + mc.missing if mc is not None and mc.missing
                   else "no compared questions" if mc is not None else "not measured")
            notes.append(f"max_drop {metric}: no comparison ({why})")
            continue
        drop = -(mc.delta or 0.0)
        if drop <= allowed + _EPS:
            continue
        t = mc.test
        lowered = tuple(q.id for q in diff.regressions if q.delta(metric) < 0)
        stat = _p(t.p_value) if t.p_value is not None else (
            f"95% CI [{t.ci_low:+.3f}, {t.ci_high:+.3f}]")
        if policy.regressions == "always" or t.significant:
            label = "significant" if t.significant else "counted although within noise"
            failures.append(RuleFailure(
                "max_drop", f"{metric} fell {_f(mc.base)} → {_f(mc.head)} "
                f"({-drop:+.3f}, more than the {_f(allowed)} allowed; {label}, {stat})",
                lowered, metric, drop, allowed))
        else:
            notes.append(f"max_drop {metric}: fell {drop:.3f} (more than {_f(allowed)}) but "
                         f"within noise ({stat}); not failing because regressions = "
                         '"significant"')

    unprotected, reasons = [], []
    for qid in policy.protected:
        q = diff.head_question(qid)
        if q is None:
            unprotected.append(qid)
            reasons.append(f"{qid} is not in this run")
        elif q.status == "stale":
            notes.append(f"protected {qid}: gold is stale, counted under max_stale")
        elif q.status == "unanswerable":
            notes.append(f"protected {qid}: unanswerable, judged by the cutoff only")
        elif not (q.status == "ok" and q.hit(k)):
            unprotected.append(qid)
            reasons.append(f"{qid} " + ("hit a retriever error" if q.status == "error" else
                                        f"has its first gold at rank {q.first_gold_rank}"
                                        if q.first_gold_rank else "has no gold retrieved"))
    if unprotected:
        shown = "; ".join(reasons[:3]) + (f"; +{len(reasons) - 3} more" if len(reasons) > 3
                                           else "")
        failures.append(RuleFailure(
            "protected", f"{len(unprotected)} protected question"
            f"{'s are' if len(unprotected) != 1 else ' is'} not a hit at k={k} ({shown})",
            tuple(unprotected), "", float(len(unprotected)), 0.0))

    if policy.max_new_misses is not None:
        if not diff.has_base:
            notes.append("max_new_misses: no baseline, no comparison")
        else:
            lost = tuple(q.id for q in diff.regressions if q.kind in ("lost", "error")
                         and q.base_rank is not None and q.base_rank <= k)
            if len(lost) > policy.max_new_misses:
                failures.append(RuleFailure(
                    "max_new_misses", f"{len(lost)} questions lost their gold chunk at k={k} "
                    f"(at most {policy.max_new_misses} allowed)", lost, "",
                    float(len(lost)), float(policy.max_new_misses)))

    for tag, table in policy.tag_min:
        group = [q for q in measured if tag in q.tags]
        for metric, floor in table:
            subject = f"{tag}/{metric}"
            if not group:
                failures.append(RuleFailure("tag_min", f"tag {tag} has a {metric} floor but "
                                            "no measured questions", (), subject))
            elif metric not in head_metrics:
                failures.append(RuleFailure("tag_min", f"tag {tag}: {metric} has a floor but "
                                            "this run did not measure it", (), subject))
            else:
                mean = sum(q.value(metric) for q in group) / len(group)
                if mean < floor - _EPS:
                    failures.append(RuleFailure(
                        "tag_min", f"tag {tag}: {metric} is {_f(mean)}, below the floor "
                        f"{_f(floor)}", _below(group, metric, floor), subject, mean, floor))

    stale = diff.stale.ids
    if policy.max_stale is not None and len(stale) > policy.max_stale:
        failures.append(RuleFailure(
            "max_stale", f"{_count(len(stale))} gold ids missing from index "
            f"{diff.head_info.index_version or '(unversioned)'} (at most {policy.max_stale} "
            "allowed)", stale, "", float(len(stale)), float(policy.max_stale)))
    if stale:
        n = len(stale)
        notes.append(f"{n} question{'' if n == 1 else 's'} with stale gold "
                     f"{'is' if n == 1 else 'are'} kept out of the comparison")

    if policy.empty:
        notes.append("no gate rules configured: only retriever errors can fail this check")
    return GateResult(not failures, tuple(failures), tuple(notes))
