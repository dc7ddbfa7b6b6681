"""How users and trec_eval name a metric: the families, their aliases and cutoffs.

``resolve_metric("P_5")`` is ``Metric("precision@5", "P_5", 5, "precision")``. The numbers
themselves come from core/measure/metrics.py, which holds a kernel per family. This half
needs no numpy, so that checking a config (``ci-eval check``), which only resolves names,
starts without importing it: 80 ms of a check's 140.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ci_eval.errors import InputError


@dataclass(frozen=True)
class Family:
    key: str  # canonical spelling without cutoff: "hit", "mrr"
    title: str
    trec: str | None  # trec_eval measure name ("success"); None when trec_eval has none
    cutoff: str  # "required", "optional" or "none"
    aliases: tuple[str, ...]  # lower-cased prefixes that mean this family


FAMILIES: tuple[Family, ...] = (
    Family("hit", "Hit@k", "success", "required", ("hit", "success")),
    Family("recall", "Recall@k", "recall", "required", ("recall",)),
    Family("precision", "Precision@k", "P", "required", ("precision", "p")),
    Family("ndcg", "nDCG@k", "ndcg_cut", "required", ("ndcg", "ndcg_cut")),
    Family("mrr", "MRR (reciprocal rank)", "recip_rank", "optional", ("mrr", "recip_rank")),
    Family("map", "MAP (average precision)", "map", "none", ("map",)),
    Family("evidence_recall", "Evidence recall@k", None, "required", ("evidence_recall",)),
    Family("evidence_precision", "Evidence precision@k", None, "required", ("evidence_precision",)),
)
# The families measured on document characters: they need span gold and chunk spans.
EVIDENCE_FAMILIES = frozenset({"evidence_recall", "evidence_precision"})
_BY_ALIAS = {alias: f for f in FAMILIES for alias in f.aliases}


@dataclass(frozen=True)
class Metric:
    """One metric at one cutoff, as users name it.

    ``name`` is the canonical spelling (``hit@5``), ``trec_name`` trec_eval's output name
    (``success_5``; None for ``mrr@k``, which trec_eval lacks) and ``k`` the cutoff.
    """

    name: str
    trec_name: str | None
    k: int | None
    family: str

    @property
    def on_evidence(self) -> bool:
        """Measured on document characters (span gold), not on chunk judgements."""
        return self.family in EVIDENCE_FAMILIES


def accepted_names() -> list[str]:
    return ["hit@K", "recall@K", "precision@K", "ndcg@K", "mrr", "mrr@K", "map",
            "success_K", "success.K", "P_K", "P.K", "recall_K", "recall.K",
            "ndcg_cut_K", "ndcg_cut.K", "recip_rank", "evidence_recall@K", "evidence_precision@K"]


def _unknown(name: str, why: str) -> InputError:
    examples = ["hit@5", "recall@5", "precision@5", "ndcg@5", "mrr", "mrr@10", "map",
                "success_5", "success.5", "P_5", "P.5", "recall_5", "ndcg_cut_10",
                "recip_rank", "evidence_recall@5", "evidence_precision@5"]
    close = difflib.get_close_matches(name, examples, n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return InputError(
        f"unknown metric {name!r}: {why}.{hint} Accepted: {', '.join(accepted_names())}"
        " (K a positive whole number)",
        source="metric",
    )


def resolve_metric(name: str) -> Metric:
    """Parse a metric name users or trec_eval would write into a ``Metric``.

    Case does not matter (``P_5`` and ``p@5`` are the same); the cutoff may follow
    ``@``, ``_`` or ``.``.
    """
    if isinstance(name, Metric):
        return name
    text = str(name).strip()
    lowered = text.lower()
    # Whole-name aliases first: "ndcg_cut_5" must not split as "ndcg" + "cut_5".
    match = None
    for alias in sorted(_BY_ALIAS, key=len, reverse=True):
        if lowered == alias:
            match = (alias, None)
            break
        if lowered.startswith(alias) and lowered[len(alias):len(alias) + 1] in ("@", "_", "."):
            match = (alias, lowered[len(alias) + 1:])
            break
    if match is None:
        raise _unknown(text, "not a metric ci-eval computes")
    alias, cut = match
    family = _BY_ALIAS[alias]
    if cut is None:
        if family.cutoff == "required":
            raise _unknown(text, f"{family.title} needs a cutoff, as in {family.key}@5")
        k = None
    else:
        if family.cutoff == "none":
            raise _unknown(text, f"{family.key} takes no cutoff")
        if not (cut.isascii() and cut.isdigit()) or int(cut) <= 0:  # "²" is a digit to isdigit
            raise _unknown(text, f"the cutoff {cut!r} is not a positive whole number")
        k = int(cut)
    canonical = family.key if k is None else f"{family.key}@{k}"
    if family.trec is None or (family.key == "mrr" and k is not None):
        trec_name = None
    elif k is None:
        trec_name = family.trec
    else:
        trec_name = f"{family.trec}_{k}"
    return Metric(canonical, trec_name, k, family.key)


def default_metrics(k: int) -> list[str]:
    """The metrics a run reports by default: the cutoff the app uses, three times it, MAP."""
    if k <= 0:
        raise InputError(f"k must be a positive whole number, got {k}", source="k")
    at = [f"hit@{k}", f"recall@{k}", f"precision@{k}", f"ndcg@{k}", "mrr"]
    wide = [f"hit@{3 * k}", f"recall@{3 * k}", f"precision@{3 * k}", f"ndcg@{3 * k}"]
    return at + wide + ["map"]
