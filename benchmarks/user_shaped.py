"""A project shaped like a user's, for the benchmarks that time whole commands.

The figures of earlier rounds came from data the code had been tuned on (one gold chunk a
question, scores like 1/(r+1), ids of a few characters) and did not reproduce on data shaped
otherwise. Here, with a fixed seed: one to four gold chunks a question with grades 3, 2, 1, 1;
one question in twenty unanswerable; full-precision scores; chunk ids of 26 characters ("kb/ch012/s01269.md#c050779", three times the
length the earlier benchmarks used) and k = 3 (longer ids, or k = 5, put 100,000 questions
over the artefact's 128 MiB cap);
tags. The retriever is an instant Python function (its answers are drawn from the question's
number and the side, base or head), so what is timed is ci-eval's own work.

    write_project(folder, questions)        # gold.json, ci-eval.toml, user_retriever.py
    run_artefact(folder, side, out, argv0)  # `ci-eval run` for side "base" or "head"
    write_trec(folder, queries, depth)      # qrels and a run file for `ci-eval evaluate`
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import textwrap
from pathlib import Path

SEED = 28
CHUNKS = 400_000

RETRIEVER = textwrap.dedent(
    f"""
    import os, random

    SIDE = 1 if os.environ.get("USER_SHAPED_SIDE") == "head" else 0
    CHUNKS = {CHUNKS}


    def chunk(j):
        return f"kb/ch{{j // 4000:03d}}/s{{j // 40:05d}}.md#c{{j:06d}}"


    def gold_of(i):
        return [(i * 7919 + t * 104729) % CHUNKS for t in range(1 + i % 4)]


    def retrieve(question, depth, **params):
        i = int(question.rsplit("#", 1)[1])
        rng = random.Random({SEED} * 1_000_003 + i * 2 + SIDE)
        ids = [rng.randrange(CHUNKS) for _ in range(depth)]
        if i % 20:  # answerable: each gold chunk comes back most of the time, anywhere
            for g in gold_of(i):
                if rng.random() < 0.75:
                    ids[rng.randrange(depth)] = g
        seen, ranking = set(), []
        for j in ids:
            if j not in seen:
                seen.add(j)
                ranking.append(chunk(j))
        scores = sorted((rng.random() for _ in ranking), reverse=True)
        return list(zip(ranking, scores))
    """
)

CONFIG = """gold_set = "gold.json"
k = 3
abstain_below = 0.35

[retriever]
type = "python"
target = "user_retriever:retrieve"

[gate]
max_drop = { "hit@3" = 0.02, "mrr" = 0.02 }
"""

_TOPICS = ("billing", "sso", "api-keys", "exports", "webhooks", "audit-log", "regions")


def _namespace() -> dict:
    space: dict = {}
    exec(RETRIEVER, space)  # the same chunk ids and gold the retriever answers with
    return space


def write_project(folder: Path, questions: int) -> None:
    space = _namespace()
    chunk, gold_of = space["chunk"], space["gold_of"]
    rows = []
    for i in range(questions):
        topic = _TOPICS[i % len(_TOPICS)]
        row = {"id": f"{topic}/question-{i:07d}", "question": f"How does {topic} behave in case {i}? #{i}",
               "tags": [topic, "long" if i % 3 == 0 else "short"]}
        if i % 20:
            row["gold"] = {chunk(g): grade for g, grade in zip(gold_of(i), (3, 2, 1, 1))}
        else:
            row["gold"], row["unanswerable"] = [], True
        rows.append(row)
    gold = {"schema_version": 1, "index_version": "handbook-2026-12", "questions": rows}
    (folder / "gold.json").write_text(json.dumps(gold, indent=1))
    (folder / "ci-eval.toml").write_text(CONFIG)
    (folder / "user_retriever.py").write_text(RETRIEVER)


def environment(folder: Path, tree: Path, side: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_EVAL_", "INPUT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(tree)])
    env["USER_SHAPED_SIDE"] = side
    return env


def run_artefact(folder: Path, side: str, out: Path, tree: Path, python: str) -> None:
    """``ci-eval run`` of ``tree`` writing ``side``'s artefact to ``out``."""
    subprocess.run([python, "-m", "ci_eval", "run", "--out", str(out), "--quiet"], cwd=folder,
                   env=environment(folder, tree, side), check=True, capture_output=True)


def write_trec(folder: Path, queries: int, depth: int) -> tuple[Path, Path]:
    """Graded qrels (two to six judged chunks a query) and a run of ``depth`` results a query
    with full-precision scores and long ids."""
    rng = random.Random(SEED)
    chunk = _namespace()["chunk"]
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    with open(qrels, "w") as q, open(run, "w") as r:
        for n in range(queries):
            qid = f"{_TOPICS[n % len(_TOPICS)]}/question-{n:07d}"
            ranked = rng.sample(range(CHUNKS), depth)
            scores = sorted((rng.random() for _ in ranked), reverse=True)
            r.write("".join(f"{qid} Q0 {chunk(d)} {i + 1} {s!r} user\n"
                            for i, (d, s) in enumerate(zip(ranked, scores))))
            judged = rng.sample(ranked[:50], 2) + rng.sample(range(CHUNKS), rng.randrange(5))
            q.write("".join(f"{qid} 0 {chunk(d)} {rng.randrange(4)}\n" for d in dict.fromkeys(judged)))
    return qrels, run
