"""`ci-eval label` at size: what one key costs, from the key to the gold set on disk and from
the key to the page showing its effect, with a real `ci-eval label` process and, for the page,
headless Chromium (Debian's /usr/bin/chromium through Playwright).

The synthetic set: QUESTIONS questions, each with one chunk already judged and CHUNKS more
pooled from a TREC run file, every chunk text about 3,400 characters (the median of the
demo's chunks). Key-to-disk: a grade posted over HTTP, timed until the answer, which comes
only after the gold set is replaced on disk; the answer's size is reported too. Key-to-page:
a key pressed in the page, timed until the page is idle again with the grade shown.

Runnable alone: ``python benchmarks/bench_label.py`` (``--questions``, ``--chunks``, ``--keys``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TEXT_CHARS = 3400


def write_project(folder: Path, questions: int, chunks: int) -> None:
    rng = random.Random(27)
    words = [f"w{n}" for n in range(2000)]
    gold = {"schema_version": 1, "questions": [
        {"id": f"q{i:05d}", "question": f"what does topic {i} say?", "gold": [f"d{i}-0"]} for i in range(questions)]}
    (folder / "gold.json").write_text(json.dumps(gold))
    with (folder / "run.trec").open("w") as run, (folder / "chunks.jsonl").open("w") as texts:
        for i in range(questions):
            for c in range(chunks + 1):
                run.write(f"q{i:05d} Q0 d{i}-{c} {c + 1} {chunks + 1 - c} bench\n")
                text = ""
                while len(text) < TEXT_CHARS:
                    text += rng.choice(words) + " "
                texts.write(json.dumps({"id": f"d{i}-{c}", "text": text}) + "\n")


def start(folder: Path, chunks: int) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ci_eval", "label", "--no-browser", "--judge", "Bench", "--gold", "gold.json",
         "--no-retriever", "--pool", "run.trec", "--chunks", "chunks.jsonl", "--depth", str(chunks + 1)],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found = re.search(r"(http://127\.0\.0\.1:(\d+))/\?t=(\S+)", proc.stdout.readline())
    if not found:
        proc.kill()
        raise SystemExit("ci-eval label did not start")
    return proc, found.group(1), found.group(3)


def key_to_disk(origin: str, token: str, questions: int, keys: int) -> tuple[list[float], list[int]]:
    """Grades from the last questions backwards (the page, opened afterwards, skips them)."""
    port = int(origin.rsplit(":", 1)[1])
    times, sizes = [], []
    for n in range(keys):
        q, c = questions - 1 - n % questions, 1 + n // questions
        body = json.dumps({"question": f"q{q:05d}", "chunk": f"d{q}-{c}", "grade": 0, "seen": None}).encode()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        began = time.perf_counter()
        conn.request("POST", "/api/grade", body=body,
                     headers={"X-CI-Eval-Token": token, "Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        times.append(time.perf_counter() - began)
        conn.close()
        if response.status != 200:
            raise SystemExit(f"grade refused: {response.status} {data[:200]!r}")
        sizes.append(len(data))
    return times, sizes


def key_to_page(url: str, keys: int) -> tuple[list[float], list[float]]:
    """Each key timed twice: from Playwright's press to the page idle again (the driver's
    round trips included), and inside the page, from the keydown event to the page drawn
    and laid out (``data-key-ms``)."""
    from playwright.sync_api import sync_playwright

    times, inside = [], []
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                        args=CHROMIUM_ARGS)
        page = context.new_page()
        page.goto(url)
        idle = page.locator("body[data-busy='0']")
        idle.wait_for(state="attached", timeout=300_000)
        for _ in range(keys):
            began = time.perf_counter()
            page.keyboard.press("0")
            idle.wait_for(state="attached", timeout=300_000)
            times.append(time.perf_counter() - began)
            inside.append(float(page.locator("body").get_attribute("data-key-ms") or "nan") / 1000)
        context.close()
    return times, inside


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--chunks", type=int, default=10, help="pooled chunks per question")
    ap.add_argument("--keys", type=int, default=30)
    ap.add_argument("--no-page", action="store_true", help="key-to-disk only (no Chromium)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder, args.questions, args.chunks)
        gold_bytes = (folder / "gold.json").stat().st_size
        began = time.perf_counter()
        proc, origin, token = start(folder, args.chunks)
        print(f"{args.questions} questions x {args.chunks} chunks; started in {time.perf_counter() - began:.1f} s; "
              f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
        try:
            disk, sizes = key_to_disk(origin, token, args.questions, args.keys)
            print(f"key-to-disk ({args.keys} keys over HTTP): {_ms(disk)}; answer {statistics.median(sizes):,.0f} "
                  f"bytes a key; gold set {gold_bytes:,} bytes before")
            if not args.no_page and os.path.exists(CHROMIUM):
                page, inside = key_to_page(f"{origin}/?t={token}", args.keys)
                print(f"key-to-page ({args.keys} keys in Chromium): {_ms(page)} through the driver; "
                      f"keydown to page laid out: {_ms(inside)}")
        finally:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
