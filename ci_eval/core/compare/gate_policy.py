"""The gate's policy: the config's ``[gate]`` table (and the CLI's overrides) parsed into
``GatePolicy``, every problem reported at once. The rules themselves are in ``gate.py``.

A config without a ``[gate]`` table gets ``DEFAULT_GATE``: the per-question rule, every
question that loses its gold chunk from the top k fails unless it flaps on the base or a
person accepted that loss. A ``[gate]`` table keeps exactly the rules it names (a table
written before the per-question rule existed means what it meant), so ``lost_gold = true``
is how such a table asks for it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ci_eval.core.measure.names import resolve_metric
from ci_eval.errors import InputError, InputErrors, UsageError

REGRESSION_POLICIES = ("significant", "always")
# What a config without a [gate] table gets (docs/cli.md, "The gate").
DEFAULT_GATE = {"lost_gold": True}


@dataclass(frozen=True)
class GatePolicy:
    min: tuple[tuple[str, float], ...] = ()
    max_drop: tuple[tuple[str, float], ...] = ()
    regressions: str = "significant"
    protected: tuple[str, ...] = ()
    max_new_misses: int | None = None
    tag_min: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    max_stale: int | None = None
    abstention: bool = False  # McNemar on false answers and false "not found" (abstention.py)
    stage_min: tuple[tuple[str, float], ...] = ()  # recall floors by stage name (core/measure/stages.py)
    # The per-question rules (acceptance.py): a question losing its gold chunk at k fails;
    # a first gold rank falling by more than max_rank_drop places fails (None: off)
    lost_gold: bool = False
    max_rank_drop: int | None = None
    accepted: str | None = None  # the acceptance file [gate] names (None: the default place)
    max_missed_wrong: int | None = None  # cap on the failure matrix's "missed, wrong" cell (head)

    @classmethod
    def from_mapping(cls, d: Mapping | None, source: str = "gate") -> GatePolicy:
        """Build from the ``[gate]`` table, reporting every problem at once; ``None`` (no
        table at all) is ``DEFAULT_GATE``."""
        d = dict(DEFAULT_GATE if d is None else d)
        problems: list[InputError] = []

        def err(place: str, message: str) -> None:
            problems.append(InputError(message, source, place))

        known = {"min", "max_drop", "regressions", "protected", "max_new_misses",
                 "tag_min", "max_stale", "abstention", "stage_min", "lost_gold", "max_rank_drop",
                 "accepted", "max_missed_wrong"}
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
        for key in ("max_new_misses", "max_stale", "max_rank_drop", "max_missed_wrong"):
            value = d.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                err(key, f"expected a non-negative integer, got {value!r}")
                value = None
            counts[key] = value
        lost_gold = d.get("lost_gold", False)
        if not isinstance(lost_gold, bool):
            err("lost_gold", f"expected true or false, got {lost_gold!r}")
        accepted = d.get("accepted")
        if accepted is not None and (not isinstance(accepted, str) or not accepted.strip()):
            err("accepted", f"expected the acceptance file's path, got {accepted!r}")
        tag_min = []
        raw_tags = d.get("tag_min") or {}
        if not isinstance(raw_tags, Mapping):
            err("tag_min", "expected a table of tag = { metric = floor }")
            raw_tags = {}
        for tag in sorted(raw_tags, key=str):
            table = _metric_table(raw_tags[tag], f"tag_min.{tag}", err)
            if table:
                tag_min.append((str(tag), table))
        abstention = d.get("abstention", False)
        if not isinstance(abstention, bool):
            err("abstention", f"expected true or false, got {abstention!r}")
        stage_min = _stage_floors(d.get("stage_min"), err)
        if problems:
            raise InputErrors(problems)
        return cls(mins, drops, regressions, tuple(dict.fromkeys(protected)),
                   counts["max_new_misses"], tuple(tag_min), counts["max_stale"], abstention, stage_min,
                   lost_gold, counts["max_rank_drop"], accepted, counts["max_missed_wrong"])

    @property
    def empty(self) -> bool:
        return not (self.min or self.max_drop or self.protected or self.tag_min or self.abstention or self.stage_min
                    or self.max_new_misses is not None or self.max_stale is not None
                    or self.max_missed_wrong is not None or self.per_question)

    @property
    def per_question(self) -> bool:
        """Whether a per-question rule is on (and so acceptances can matter)."""
        return self.lost_gold or self.max_rank_drop is not None

    def with_overrides(self, min: Mapping[str, float] | None = None,
                       max_drop: Mapping[str, float] | None = None) -> GatePolicy:
        """CLI flags win over the config, metric by metric."""
        mins = dict(self.min)
        mins.update(min or {})
        drops = dict(self.max_drop)
        drops.update(max_drop or {})
        return replace(self, min=tuple(sorted(mins.items())), max_drop=tuple(sorted(drops.items())))

    def as_dict(self) -> dict:
        return {
            "min": dict(self.min),
            "max_drop": dict(self.max_drop),
            "regressions": self.regressions,
            "protected": list(self.protected),
            "max_new_misses": self.max_new_misses,
            "tag_min": {t: dict(m) for t, m in self.tag_min},
            "max_stale": self.max_stale,
            "abstention": self.abstention,
            **({"stage_min": dict(self.stage_min)} if self.stage_min else {}),
            "lost_gold": self.lost_gold,
            "max_rank_drop": self.max_rank_drop,
            **({"max_missed_wrong": self.max_missed_wrong} if self.max_missed_wrong is not None else {}),
        }


def _stage_floors(raw, err) -> tuple[tuple[str, float], ...]:
    """``stage_min``: stage name = recall floor (a share), sorted by name."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        err("stage_min", "expected a table of stage = recall floor")
        return ()
    out = []
    for name in sorted(raw, key=str):
        value = raw[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            err(f"stage_min.{name}", f"expected a recall floor between 0 and 1, got {value!r}")
            continue
        out.append((str(name), float(value)))
    return tuple(out)


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
            raise UsageError(f"--max-drop {name}={value}: a drop must be >= 0")
    return policy.with_overrides(min=m, max_drop=d)
