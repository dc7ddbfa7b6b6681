"""What labelling a gold set costs a person with suggested grades: a simulated judge replays
a shared collection's qrels through the real labelling page in headless Chromium.

The set: the first QUESTIONS judged topics of Vaswani (../shared/collections beside the
checkout), each pooled to depth 10 by BM25 over the documents (each document one chunk).
The page is a real `ci-eval label` process with a `--suggest-command` judge that suggests
the qrels' grade for 80 % of the chunks and the other grade for the rest (a fixed hash of
question and chunk decides which). The simulated person knows the qrels: on each focused
chunk they press Enter when the suggestion is right and the right digit when it is not.

Reported: keys per question, the share taken with Enter, the page's own time per question
(from a key to the page idle again, the driver's round trips included), the kappa the page
shows, and the person's time for 50 questions estimated with the reading times of Smucker
and Clarke's time-biased gain ("Time-based calibration of effectiveness measures", SIGIR
2012): 4.4 s to judge from a summary, 0.018 s a word + 7.8 s to read a document.

    python benchmarks/bench_label_budget.py                 # 50 questions
    python benchmarks/bench_label_budget.py --questions 10
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "collections" / "vaswani_npl"
CHROMIUM = "/usr/bin/chromium"
DEPTH = 10
AGREE = 0.8
SUMMARY_S, WORD_S, DOCUMENT_S = 4.4, 0.018, 7.8  # Smucker and Clarke (2012)
GOAL_S = 3600.0  # 50 questions in under an hour

JUDGE = '''import hashlib, json, sys
truth = json.load(open(sys.argv[1]))
for line in sys.stdin:
    item = json.loads(line)
    grade = truth.get(item["question_id"], {{}}).get(item["chunk"], 0)
    flip = int(hashlib.sha256((item["question_id"] + " " + item["chunk"]).encode()).hexdigest()[:8], 16) % 100
    if flip >= {agree}:
        grade = 0 if grade else 1
    print(json.dumps({{"chunk": item["chunk"], "grade": grade}}))
'''


def load(questions: int):
    """(topics, qrels, documents' words) for the first ``questions`` judged topics."""
    text = (SHARED / "doc-text.trec").read_text(encoding="utf-8")
    docs = {m.group(1).strip(): m.group(2).split()
            for m in re.finditer(r"<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", text, re.S)}
    topics = {m.group(1).strip(): " ".join(m.group(2).split())
              for m in re.finditer(r"<num>(.*?)</num><title>(.*?)</title>", (SHARED / "query-text.trec").read_text(), re.S)}
    qrels: dict[str, dict[str, int]] = {}
    for line in (SHARED / "qrels").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) > 0:
            qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    chosen = [q for q in topics if q in qrels][:questions]
    return {q: topics[q] for q in chosen}, {q: qrels[q] for q in chosen}, docs


def write_project(folder: Path, topics: dict, qrels: dict, docs: dict) -> dict[str, list[str]]:
    """gold.json (the questions, nothing judged), run.trec (BM25's top DEPTH), chunks.jsonl,
    the judge and its truth; returns each question's pool."""
    sys.path.insert(0, str(REPO))
    from ci_eval.demo.bm25 import BM25Index, BM25Params

    index = BM25Index([(d, "", " ".join(words)) for d, words in docs.items()], BM25Params())
    pools = {q: [cid for cid, _ in index.search(text, DEPTH)] for q, text in topics.items()}
    # Nothing judged yet: the questions wait in provenance.pending until a grade of 1 or more.
    gold = {"schema_version": 1, "questions": [], "provenance": {
        "built_by": "Bench", "built_at": "2026-01-01", "method": "bench_label_budget.py",
        "pending": [{"id": f"q{q}", "question": text, "gold": {}} for q, text in topics.items()]}}
    (folder / "gold.json").write_text(json.dumps(gold))
    with (folder / "run.trec").open("w") as run:
        for q, pool in pools.items():
            for rank, cid in enumerate(pool, 1):
                run.write(f"q{q} Q0 {cid} {rank} {DEPTH + 1 - rank} bm25\n")
    pooled = {cid for pool in pools.values() for cid in pool}
    with (folder / "chunks.jsonl").open("w") as out:
        for cid in sorted(pooled):
            out.write(json.dumps({"id": cid, "text": " ".join(docs[cid])}) + "\n")
    (folder / "truth.json").write_text(json.dumps({f"q{q}": qrels[q] for q in topics}))
    (folder / "judge.py").write_text(JUDGE.format(agree=round(AGREE * 100)))
    return {f"q{q}": pool for q, pool in pools.items()}


def start(folder: Path) -> tuple[subprocess.Popen, str]:
    judge = f"{sys.executable} judge.py truth.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ci_eval", "label", "--no-browser", "--judge", "Bench", "--gold", "gold.json",
         "--no-retriever", "--pool", "run.trec", "--chunks", "chunks.jsonl", "--depth", str(DEPTH),
         "--suggest-command", judge], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found = re.search(r"http://127\.0\.0\.1:\d+/\?t=\S+", proc.stdout.readline())
    if not found:
        proc.kill()
        raise SystemExit("ci-eval label did not start")
    return proc, found.group(0)


def replay(url: str, truth: dict, judged: int) -> dict:
    """Judge every pooled chunk through the page as the simulated person; per key, what it
    was and how long the page took."""
    from playwright.sync_api import sync_playwright

    keys, enter, per_question, kappa = 0, 0, {}, None
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                        args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = context.new_page()
        page.goto(url)
        page.locator("#suggest-status[data-state='done']").wait_for(state="attached", timeout=300_000)
        idle = page.locator("body[data-busy='0']")
        for _ in range(judged):
            idle.wait_for(state="attached", timeout=60_000)
            where = page.locator("#where").text_content() or ""
            qid = where.split(" · ")[1] if " · " in where else ""
            focused = page.locator("#chunks li.focused")
            cid = focused.get_attribute("data-id")
            hint = focused.locator(".suggested").get_attribute("data-grade")
            right = truth.get(qid, {}).get(cid, 0)
            began = time.perf_counter()
            if hint != "" and int(hint) == right:
                page.keyboard.press("Enter")
                enter += 1
            else:
                page.keyboard.press(str(right))
            idle.wait_for(state="attached", timeout=60_000)
            per_question[qid] = per_question.get(qid, 0.0) + time.perf_counter() - began
            keys += 1
        kappa = page.locator("#kappa").get_attribute("data-kappa")
        context.close()
    return {"keys": keys, "enter": enter, "page_s": per_question, "kappa": kappa}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=50)
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        print(f"the collection is not at {SHARED}", file=sys.stderr)
        return 2
    if not os.path.exists(CHROMIUM):
        print(f"no browser at {CHROMIUM}", file=sys.stderr)
        return 2
    topics, qrels, docs = load(args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pools = write_project(folder, topics, qrels, docs)
        judged = sum(map(len, pools.values()))
        proc, url = start(folder)
        try:
            truth = json.loads((folder / "truth.json").read_text())
            got = replay(url, truth, judged)
            written = json.loads((folder / "gold.json").read_text())
        finally:
            proc.kill()
            proc.wait()
    # What reached the gold set is exactly the qrels over the pools (the person's keys).
    wrong = sum(1 for q in written["questions"] + written["provenance"].get("pending", [])
                for cid, grade in (q.get("gold") or {}).items() if grade != truth.get(q["id"], {}).get(cid, 0))
    words = [len(docs[cid]) for pool in pools.values() for cid in pool]
    n = len(pools)
    reading = sum(WORD_S * w + DOCUMENT_S for w in words)
    # With a suggestion taken, a person who trusts it only checks the highlighted terms: the
    # time of judging from a summary. A suggestion overridden is read in full.
    share = got["enter"] / got["keys"]
    skim = share * len(words) * SUMMARY_S + (1 - share) * reading
    page_s = sum(got["page_s"].values())
    scale = 50 / n
    print(f"{n} questions x {DEPTH} pooled (Vaswani, BM25); judge agreeing {AGREE:.0%} with the qrels; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    print(f"keys: {got['keys']} ({got['keys'] / n:.1f} a question), {share:.0%} with Enter; "
          f"grades written that differ from the qrels: {wrong}; kappa shown: {got['kappa']}")
    print(f"page time: {page_s / n * 1000:.0f} ms a question (median key "
          f"{statistics.median(got['page_s'].values()) / DEPTH * 1000:.0f} ms)")
    print(f"documents pooled: {statistics.mean(words):.0f} words on average")
    print("person time for 50 questions (Smucker and Clarke 2012 reading times, plus the page's time):")
    print(f"  reading every chunk in full: {(reading + page_s) * scale / 60:.1f} min")
    print(f"  a taken suggestion checked like a summary, an overridden one read in full: "
          f"{(skim + page_s) * scale / 60:.1f} min (goal {GOAL_S / 60:.0f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
