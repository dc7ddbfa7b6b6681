"""A retrieval pipeline of the test's own, spoken over the command protocol: a BM25 pool
of 50 over ``corpus.json``, a deterministic reranker (term overlap, a cross-encoder's
stand-in), the final list its top results. ``CI_EVAL_PARAMS`` injects faults by question
id: ``pool_miss`` (the pool loses the gold chunk), ``demote`` (the reranker scores the gold
chunk 0), ``crowd`` (the reranker puts the two long chunks first, so a character budget
cuts the gold chunk from the packed context). ``calls``: answer in two calls, the first
all misses, the second with the gold chunk first (a scripted agent)."""

import json
import math
import os
import sys
from collections import Counter

POOL = 50

params = json.loads(os.environ.get("CI_EVAL_PARAMS") or "{}")
corpus = json.load(open("corpus.json"))  # {chunk id: text}
gold_of = json.load(open("gold_of.json"))  # {question id: gold chunk id}
terms = {cid: text.split() for cid, text in corpus.items()}
df = Counter(t for words in terms.values() for t in set(words))
mean_len = sum(map(len, terms.values())) / len(terms)


def bm25(query, cid, k1=1.2, b=0.75):
    words, tf = terms[cid], Counter(terms[cid])
    score = 0.0
    for t in set(query):
        if tf[t]:
            idf = math.log(1 + (len(terms) - df[t] + 0.5) / (df[t] + 0.5))
            score += idf * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * len(words) / mean_len))
    return score


def ordered(scored):
    return sorted(scored, key=lambda p: (-p[1], tuple(-ord(c) for c in p[0])))


def answer(qid, question, depth):
    query = question.split()
    gold = gold_of.get(qid)
    if qid in params.get("calls", ()):
        misses = [[f"d{i:03d}", 1.0 - i / 100] for i in range(10)]
        return {"calls": [misses, [[gold, 2.0], ["d050", 1.0]]]}
    pool = ordered([(cid, bm25(query, cid)) for cid in corpus])
    if qid in params.get("pool_miss", ()):
        pool = [p for p in pool if p[0] != gold]
    pool = pool[:POOL]
    overlap = {cid: len(set(query) & set(terms[cid])) / len(query) for cid, _ in pool}
    if qid in params.get("demote", ()):
        overlap[gold] = 0.0
    if qid in params.get("crowd", ()):
        overlap.update({cid: 2.0 for cid in ("long1", "long2") if cid in overlap})
    rerank = ordered(overlap.items())
    return {"stages": {"pool": [list(p) for p in pool], "rerank": [list(p) for p in rerank]},
            "results": [list(p) for p in rerank[:depth]]}


for line in sys.stdin:
    msg = json.loads(line)
    print(json.dumps({"id": msg["id"], **answer(msg["id"], msg["question"], msg["k"])}), flush=True)
