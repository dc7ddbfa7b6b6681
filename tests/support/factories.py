"""Run artefacts (docs/artefact.md format) built from per-question specs for tests.

Metrics are derived from each question's ranking and gold, never typed in: hit@k, recall@k,
precision@k, ndcg@k (raw-grade gain, log2 discount), mrr and map, with trec_eval's
conventions. Stale ids are dropped from the gold before measuring, as the evaluator does.
"""

from __future__ import annotations

import math

from ci_eval.core.artefact.artefact import Artefact, read_artefact

DEFAULT_CONFIG = {"retriever": {"type": "python", "target": "app.search:search",
                                "params": {"k1": 1.2, "b": 0.75}}}


def default_metrics(k: int) -> list[str]:
    k3 = 3 * k
    return [f"hit@{k}", f"recall@{k}", f"precision@{k}", f"ndcg@{k}", "mrr",
            f"hit@{k3}", f"recall@{k3}", f"precision@{k3}", f"ndcg@{k3}", "map"]


def spec(qid: str, gold=None, ranking=(), **kw) -> dict:
    """A question spec: ``gold`` is a list of ids (grade 1) or ``{id: grade}``; ``ranking``
    the returned ids best first. Optional: tags, unanswerable, stale (gold ids missing from
    the index), error (message: the retriever failed), answer_correct, scores, top,
    latency_ms, text, warnings."""
    return {"id": qid, "gold": gold or {}, "ranking": list(ranking), **kw}


def _metric(name: str, ranked: list[str], judged: dict[str, float]) -> float:
    relevant = {i for i, g in judged.items() if g >= 1}
    if name in ("mrr", "map"):
        depth = len(ranked)
    else:
        depth = int(name.split("@")[1])
    top = ranked[:depth]
    hits = [i for i in top if i in relevant]
    if name.startswith("hit@"):
        return 1.0 if hits else 0.0
    if name.startswith("recall@"):
        return len(hits) / len(relevant) if relevant else 0.0
    if name.startswith("precision@"):
        return len(hits) / depth
    if name == "mrr":
        for rank, i in enumerate(ranked, 1):
            if i in relevant:
                return 1.0 / rank
        return 0.0
    if name == "map":
        found, total = 0, 0.0
        for rank, i in enumerate(ranked, 1):
            if i in relevant:
                found += 1
                total += found / rank
        return total / len(relevant) if relevant else 0.0
    if name.startswith("ndcg@"):
        dcg = sum(judged.get(i, 0.0) / math.log2(r + 1) for r, i in enumerate(top, 1)
                  if judged.get(i, 0.0) > 0)
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:depth]
        idcg = sum(g / math.log2(r + 1) for r, g in enumerate(ideal, 1))
        return dcg / idcg if idcg else 0.0
    raise ValueError(name)


def question(s: dict, k: int, metrics: list[str]) -> dict:
    gold = s["gold"]
    gold = {g: 1 for g in gold} if isinstance(gold, (list, tuple)) else dict(gold)
    stale = sorted(s.get("stale", ()))
    judged = {i: float(g) for i, g in gold.items() if i not in stale}
    ranked = list(s["ranking"])
    if "scores" in s:
        scores = list(s["scores"])
    else:
        top = s.get("top", 10.0)
        scores = [round(top - 0.25 * i, 4) for i in range(len(ranked))]
    unanswerable = bool(s.get("unanswerable", False))
    if s.get("error"):
        status, ranked, scores = "error", [], []
    elif unanswerable:
        status = "unanswerable"
    elif gold and not judged:
        status = "stale"
    else:
        status = "ok"
    relevant = {i for i, g in judged.items() if g >= 1}
    first = next((r for r, i in enumerate(ranked, 1) if i in relevant), None)
    values = ({m: _metric(m, ranked, judged) for m in metrics}
              if status in ("ok", "error") else {})
    return {
        "id": s["id"],
        "question": s.get("text", f"What about {s['id']}?"),
        "tags": list(s.get("tags", [])),
        "unanswerable": unanswerable,
        "gold": gold,
        "stale": stale,
        "status": status,
        "error": s.get("error"),
        "ranking": [{"id": i, "score": sc} for i, sc in zip(ranked, scores)],
        "first_gold_rank": first if status in ("ok", "error") else None,
        "top_score": scores[0] if scores else None,
        "metrics": values,
        "latency_ms": s.get("latency_ms", 2.0),
        "answer_correct": s.get("answer_correct"),
        "warnings": list(s.get("warnings", [])),
    }


def artefact(specs: list[dict], *, k: int = 5, metrics: list[str] | None = None,
             sha: str = "a" * 40, index_version: str = "docs-1", gold_index_version=None,
             config: dict | None = None, abstain_below: float | None = 5.0,
             history: list | None = None, gold_sha: str = "0" * 64,
             created_at: str = "2026-11-30T02:00:00Z") -> dict:
    metrics = list(metrics or default_metrics(k))
    qs = [question(s, k, metrics) for s in specs]
    measured = [q for q in qs if q["status"] in ("ok", "error")]

    def means(group):
        return {m: (sum(q["metrics"][m] for q in group) / len(group)) for m in metrics} \
            if group else {}

    tags = sorted({t for q in measured for t in q["tags"]})
    unans = [q for q in qs if q["status"] == "unanswerable"]
    lat = sorted(q["latency_ms"] for q in qs)
    return {
        "schema_version": 1,
        "tool": {"name": "ci-eval", "version": "0.1.0"},
        "created_at": created_at,
        "git": {"sha": sha, "ref": "refs/heads/main", "dirty": False},
        "config": dict(config if config is not None else DEFAULT_CONFIG, k=k),
        "gold_set": {"path": "eval/gold.json", "sha256": gold_sha,
                     "index_version": gold_index_version or index_version,
                     "questions": len(qs)},
        "index": {"version": index_version, "ids": 1000, "checked": True},
        "k": k,
        "metrics": metrics,
        "abstain_below": abstain_below,
        "questions": qs,
        "summary": {
            "overall": {"count": len(measured), "means": means(measured)},
            "by_tag": {t: {"count": len(g), "means": means(g)} for t in tags
                       for g in [[q for q in measured if t in q["tags"]]]},
            "stale": {"questions": sum(1 for q in qs if q["stale"]),
                      "ids": sum(len(q["stale"]) for q in qs)},
            "unanswerable": {
                "count": len(unans),
                "abstained": sum(1 for q in unans if abstain_below is not None and (
                    q["top_score"] is None or q["top_score"] < abstain_below)),
                "cutoff": abstain_below},
            "errors": sum(1 for q in qs if q["status"] == "error"),
            "latency_ms": {"mean": sum(lat) / len(lat) if lat else 0.0,
                           "p50": lat[len(lat) // 2] if lat else 0.0,
                           "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else 0.0},
        },
        "history": list(history or []),
    }


def ranked_with_gold_at(rank: int | None, gold: str = "g", depth: int = 15,
                        prefix: str = "x") -> list[str]:
    """A ranking ``depth`` long with ``gold`` at 1-based ``rank`` (absent when None)."""
    ids = [f"{prefix}{i}" for i in range(depth)]
    if rank is not None:
        ids[rank - 1] = gold
    return ids


def run(specs: list[dict], **kw) -> Artefact:
    """The typed ``Artefact`` of ``artefact(specs, **kw)``, read by the one reader."""
    return read_artefact(artefact(specs, **kw))


def as_v2(data: dict) -> dict:
    """The version 2 artefact holding the same facts as the version 1 ``data``: each
    question a row (core/artefact/question_row.py), the field order named."""
    from ci_eval.core.artefact.question_row import QUESTION_FIELDS, to_row

    metrics = data["metrics"]
    return {**data, "schema_version": 2, "question_fields": list(QUESTION_FIELDS),
            "questions": [to_row(q, metrics) for q in data["questions"]]}
