"""trec_eval's measure table: which measures ``evaluate`` computes, how ``-m`` specs
parse, and trec_eval's output formats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain, repeat

from ci_eval.errors import UsageError

# trec_eval's measure table order, which is also its output order.
_ORDER = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "recip_rank",
          "P", "recall", "ndcg_cut", "success")
_CUTOFFS = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}
_COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
# trec_eval's nicknames, restricted to what is computed here.
_NICKNAMES = {
    "official": ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P"),
    "all_trec": _ORDER,
}
_OURS = {"P": "precision", "recall": "recall", "ndcg_cut": "ndcg", "success": "hit",
         "recip_rank": "mrr", "map": "map"}
# Measures trec_eval knows that ci-eval does not compute: named so the error can say so.
_NOT_COMPUTED = frozenset({
    "runid", "gm_map", "Rprec", "bpref", "iprec_at_recall", "relstring", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "map_cut", "relative_P", "set_P", "set_relative_P", "set_recall", "set_map",
    "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj", "yaap",
})

@dataclass(frozen=True)
class Measures:
    """Which trec_eval measures to print, with their cutoffs (ascending, distinct)."""

    single: tuple[str, ...]  # in trec_eval's order
    cutoffs: dict

    def names(self) -> list[str]:
        out = []
        for m in _ORDER:
            if m in self.cutoffs:
                out += [f"{m}_{k}" for k in self.cutoffs[m]]
            elif m in self.single:
                out.append(m)
        return out


def parse_measures(specs: list[str] | None) -> Measures:
    """trec_eval ``-m`` arguments -> Measures. Repeated measures merge their cutoffs."""
    chosen: dict[str, set | None] = {}
    for spec in specs or ["official"]:
        name, dot, params = spec.partition(".")
        if name in _NICKNAMES:
            if dot:
                raise UsageError(f"-m {spec}: {name} takes no parameters")
            for m in _NICKNAMES[name]:
                chosen.setdefault(m, None)
            continue
        if name not in _ORDER:
            known = name in _NOT_COMPUTED
            why = "is a trec_eval measure ci-eval does not compute" if known else "is unknown"
            raise UsageError(
                f"-m {spec}: {name!r} {why}; supported: {', '.join(_ORDER)}, "
                "all_trec, official"
            )
        if not dot:
            chosen.setdefault(name, None)
            continue
        if name not in _CUTOFFS:
            raise UsageError(f"-m {spec}: {name} takes no parameters")
        cuts = set()
        for part in params.split(","):
            if not (part.strip().isascii() and part.strip().isdigit()) or int(part) <= 0:
                raise UsageError(f"-m {spec}: cutoff {part!r} is not a positive whole number")
            cuts.add(int(part))
        previous = chosen.get(name)
        chosen[name] = cuts | (previous or set())
    cutoffs = {
        m: tuple(sorted(c)) if c else _CUTOFFS[m] for m, c in chosen.items() if m in _CUTOFFS
    }
    single = tuple(m for m in _ORDER if m in chosen and m not in _CUTOFFS)
    return Measures(single, cutoffs)


def measure_values(measures: Measures, judged) -> dict:
    """Per-query arrays for every measure name (counts as integer arrays)."""
    import numpy as np

    from ci_eval.core.measure.metrics import compute_table
    from ci_eval.core.measure.names import resolve_metric

    table = judged.table
    out: dict = {}
    for name in measures.names():
        if name == "num_q":
            continue
        if name == "num_ret":
            out[name] = table.lengths.astype(np.int64)
        elif name == "num_rel":
            out[name] = np.asarray(table.num_rel, dtype=np.int64)
        elif name == "num_rel_ret":
            out[name] = np.asarray(table.num_rel_ret, dtype=np.int64)
        else:
            family, _, k = name.rpartition("_") if name[-1].isdigit() else (name, "", "")
            ours = _OURS[family] + (f"@{k}" if k else "")
            metric = resolve_metric(ours)
            out[name] = compute_table([metric], table)[metric.name]
    return out


def _mean(values) -> float:
    import numpy as np

    # Accumulated in order, in doubles, as trec_eval does, so 4-decimal rounding agrees.
    return float(np.cumsum(values)[-1]) / len(values) if len(values) else 0.0


def summary(measures: Measures, values: dict, n_queries: int) -> dict:
    out: dict = {}
    for name in measures.names():
        if name == "num_q":
            out[name] = n_queries
        elif name in _COUNTS:
            out[name] = int(values[name].sum())
        else:
            out[name] = _mean(values[name])
    return out


def _line(name: str, qid: str, value) -> str:
    shown = str(value) if isinstance(value, int) else f"{value:.4f}"
    return f"{name:<22}\t{qid}\t{shown}\n"


def _row_template(names, columns) -> str:
    """One query's lines as a single %-template: formatting a row in one call is about three
    times faster than a call per value, and ``%.4f`` rounds as ``format(v, ".4f")`` does."""
    return "".join(f"{name:<22}\t%s\t{'%d' if column.dtype.kind in 'iu' else '%.4f'}\n"
                   for name, column in zip(names, columns))


def format_trec(measures: Measures, qids, values: dict, overall: dict, per_query: bool) -> str:
    parts = []
    if per_query:
        names = [n for n in measures.names() if n != "num_q"]
        template = _row_template(names, [values[n] for n in names])
        rows = zip(*(values[n].tolist() for n in names))
        for qid, row in zip(qids, rows):
            parts.append(template % tuple(chain.from_iterable(zip(repeat(qid), row))))
    for name, value in overall.items():
        parts.append(_line(name, "all", value))
    return "".join(parts)


def format_json(measures: Measures, qids, values: dict, overall: dict) -> str:
    names = [n for n in measures.names() if n != "num_q"]
    columns = [(n, values[n].tolist()) for n in names]
    per_query = {qid: {n: col[row] for n, col in columns} for row, qid in enumerate(qids)}
    return json.dumps({"per_query": per_query, "all": overall}, indent=1) + "\n"
