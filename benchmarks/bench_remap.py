"""`ci-eval gold anchor` and `ci-eval gold remap` on a 1,000,000-chunk index, as whole
processes: wall time and peak memory (each command in its own process).

The synthetic index: 100,000 documents of 10 chunks, each entry with ``doc``, ``start``,
``end`` and ``hash`` (no text: what a large index's manifest would carry), streamed as
JSON lines. The re-ingestion renames every chunk; in each document, 6 chunks keep their
text (found by hash), 2 are split in two and 2 merged into one (found by span, and only
proposed: a manifest of hashes without text cannot show the offsets still hold the old
text). The gold set:
2,000 questions naming 2 chunks each, anchored on the old index.

Runnable alone: ``python benchmarks/bench_remap.py`` (``--chunks N`` for another size).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PER_DOC, WIDTH = 10, 500
_MEASURE = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(rc, u.ru_utime + u.ru_stime, u.ru_maxrss)")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_indexes(folder: Path, docs: int) -> tuple[Path, Path]:
    old, new = folder / "old.jsonl", folder / "new.jsonl"
    with old.open("w") as fo, new.open("w") as fn:
        fo.write('{"version": "v1"}\n')
        fn.write('{"version": "v2"}\n')
        for d in range(docs):
            doc = f"docs/{d:06d}.md"
            for c in range(PER_DOC):
                fo.write(json.dumps({"id": f"{doc}#{c}", "doc": doc, "start": c * WIDTH, "end": (c + 1) * WIDTH,
                                     "hash": _hash(f"{doc} {c}")}) + "\n")
            for c in range(6):  # same text, new id
                fn.write(json.dumps({"id": f"n{d}-{c}", "doc": doc, "start": c * WIDTH, "end": (c + 1) * WIDTH,
                                     "hash": _hash(f"{doc} {c}")}) + "\n")
            for c in (6, 7):  # split in two halves
                for h in (0, 1):
                    s = c * WIDTH + h * WIDTH // 2
                    fn.write(json.dumps({"id": f"n{d}-{c}{'ab'[h]}", "doc": doc, "start": s, "end": s + WIDTH // 2,
                                         "hash": _hash(f"{doc} {c} half {h}")}) + "\n")
            fn.write(json.dumps({"id": f"n{d}-89", "doc": doc, "start": 8 * WIDTH, "end": 10 * WIDTH,
                                 "hash": _hash(f"{doc} 8+9")}) + "\n")  # two merged into one
    return old, new


def write_gold(path: Path, docs: int, questions: int = 2000) -> None:
    rng = random.Random(7)
    items = []
    for i in range(questions):
        d = rng.randrange(docs)
        items.append({"id": f"q{i}", "question": f"question {i}?",
                      "gold": sorted({f"docs/{d:06d}.md#{rng.randrange(PER_DOC)}" for _ in range(2)})})
    path.write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": items}))


def timed(args: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak MB, exit code) of ``ci-eval ARGS`` in a fresh process."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "ci_eval", *args],
                         cwd=cwd, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t
    rc, cpu, kb = out.stdout.split()[-3:]
    return seconds, float(cpu), int(kb) / 1024, int(rc)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=1_000_000, help="chunks in the old index (default: %(default)s)")
    args = ap.parse_args(argv)
    docs = args.chunks // PER_DOC
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old, new = write_indexes(folder, docs)
        write_gold(folder / "gold.json", docs)
        size = old.stat().st_size / 1e6
        anchor = timed(["gold", "anchor", "--gold", "gold.json", "--manifest", old.name], folder)
        remap = timed(["gold", "remap", "--gold", "gold.json", "--manifest", new.name], folder)
        written = timed(["gold", "remap", "--gold", "gold.json", "--manifest", new.name, "--write"], folder)
        after = json.loads((folder / "gold.json").read_text())
    remaps = after["provenance"]["remaps"][0]
    print(f"index: {docs * PER_DOC:,} chunks ({size:.0f} MB of JSON lines); re-ingested: "
          f"{docs * 11:,} chunks; gold: 2,000 questions")
    for label, (s, cpu, mb, rc) in (("gold anchor", anchor), ("gold remap (dry run)", remap),
                                    ("gold remap --write", written)):
        print(f"{label:<22} {s:6.2f} s wall  {cpu:6.2f} s CPU  peak {mb:6.0f} MB  exit {rc}")
    print(f"remapped: {remaps['automatic']} automatic, {remaps['proposals_left']} proposed, "
          f"{remaps['unresolved']} unresolved")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
