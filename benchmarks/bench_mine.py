"""`ci-eval gold mine` on a log of 100,000 questions, 30 % of them planted near-duplicates:
how well the near-duplicates are folded (pairwise precision and recall against the planted
truth), wall time and peak memory of the whole command in its own process.

The log is built from a shared collection's documents (Cranfield's abstracts, then
Vaswani's), so its words are real technical prose: 60,000 distinct base questions, each a
question opening and a run of 6 to 10 words that no other base question uses; 10,000 further
askings of base questions (Zipf-distributed, so some are asked often); and 30,000
near-duplicates, each one base question with one edit a person makes: a transposed typo, a
dropped word, an inserted filler word, two neighbouring words swapped, or another opening,
some also recased or repunctuated. The truth is which base each line came from.

Pairs are counted over distinct normalised texts: precision is the share of pairs folded into
one group that come from one base, recall the share of same-base pairs folded together.
Base questions that happen to be near each other in the prose count against precision.

Runnable alone: ``python benchmarks/bench_mine.py [--lines N] [--threshold S] [--shared DIR]``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
OPENINGS = ("what is known about", "how does one study", "why do we see", "where can i find",
            "what are the results on", "is there work on", "how is", "what explains")
FILLERS = ("exactly", "please", "actually", "really", "currently", "in general")
_MEASURE = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); print(rc, u.ru_utime + u.ru_stime, u.ru_maxrss)")


def prose_words(shared: Path) -> list[str]:
    cran = (shared / "collections" / "cranfield" / "cran.all.1400").read_text(errors="replace")
    texts = re.findall(r"^\.W\n(.*?)(?=^\.I |\Z)", cran, flags=re.S | re.M)
    vaswani = (shared / "collections" / "vaswani_npl" / "doc-text.trec").read_text(errors="replace")
    texts += re.findall(r"</DOCNO>(.*?)</DOC>", vaswani, flags=re.S)
    return [w for t in texts for w in re.findall(r"[a-z]{2,}", t.lower())]


def base_questions(words: list[str], count: int, rng: random.Random) -> list[str]:
    out, at, seen = [], 0, set()
    while len(out) < count and at < len(words):
        width = rng.randint(6, 10)
        run = words[at:at + width]
        at += width
        key = " ".join(run)
        if len(run) == width and key not in seen:
            seen.add(key)
            out.append(f"{rng.choice(OPENINGS)} {key}")
    if len(out) < count:
        raise SystemExit(f"the collections give only {len(out)} base questions")
    return out


def near_duplicate(question: str, rng: random.Random) -> str:
    words = question.split()
    edit = rng.choice(("typo", "drop", "filler", "swap", "opening"))
    if edit == "typo":
        long = [i for i, w in enumerate(words) if len(w) >= 4] or [len(words) - 1]
        i = rng.choice(long)
        w = words[i]
        j = rng.randrange(len(w) - 1)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    elif edit == "drop":
        del words[rng.randrange(2, len(words))]
    elif edit == "filler":
        words.insert(rng.randrange(1, len(words)), rng.choice(FILLERS))
    elif edit == "swap":
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    else:
        opening = next(o for o in OPENINGS if question.startswith(o + " "))
        words = rng.choice([o for o in OPENINGS if o != opening]).split() + words[len(opening.split()):]
    text = " ".join(words)
    if rng.random() < 0.3:
        text = text.capitalize() + "?"
    return text


def write_log(path: Path, lines: int, shared: Path = SHARED, seed: int = 7) -> list[int]:
    """The log, one JSON object a line; returns each line's base question index (the truth)."""
    rng = random.Random(seed)
    bases = base_questions(prose_words(shared), int(lines * 0.6), rng)
    weights = [1 / (r + 1) for r in range(len(bases))]
    truth = list(range(len(bases)))
    truth += rng.choices(range(len(bases)), weights=weights, k=int(lines * 0.1))
    dup_of = rng.choices(range(len(bases)), weights=weights, k=lines - len(truth))
    rows = [(bases[b], b) for b in truth] + [(near_duplicate(bases[b], rng), b) for b in dup_of]
    rng.shuffle(rows)
    with path.open("w") as f:
        for text, _ in rows:
            f.write(json.dumps({"ts": 0, "query": text}) + "\n")
    return [b for _, b in rows]


def pairs(sizes) -> int:
    return sum(n * (n - 1) // 2 for n in sizes)


def score(log: Path, truth: list[int], groups_file: Path) -> dict:
    from ci_eval.core.gold.candidates import normalise

    base_of: dict[str, int] = {}
    for line, b in zip(log.read_text().splitlines(), truth):
        base_of.setdefault(normalise(json.loads(line)["query"]), b)
    group_of, leader_of = {}, {}
    for g, line in enumerate(groups_file.read_text().splitlines()):
        members = json.loads(line)["members"]
        for member in members:
            group_of[member], leader_of[member] = g, members[0]
    # Removed: folded into another text's group. Redundant: every distinct text but one a base.
    removed = [t for t in base_of if leader_of[t] != t]
    rightly = sum(base_of[t] == base_of[leader_of[t]] for t in removed)
    redundant = len(base_of) - len(set(base_of.values()))
    cells = Counter((group_of[t], b) for t, b in base_of.items())
    together = pairs(Counter(group_of[t] for t in base_of).values())
    same = pairs(Counter(base_of.values()).values())
    both = pairs(cells.values())
    return {"distinct": len(base_of), "precision": both / together if together else 1.0,
            "recall": both / same if same else 1.0, "planted_pairs": same, "folded_pairs": together,
            "removed": len(removed), "removed_precision": rightly / len(removed) if removed else 1.0,
            "removed_recall": rightly / redundant if redundant else 1.0, "redundant": redundant}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--shared", type=Path, default=SHARED, help="the public reference data (default: beside the checkout)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        log = folder / "log.jsonl"
        truth = write_log(log, args.lines, args.shared)
        cmd = [sys.executable, "-m", "ci_eval", "gold", "mine", str(log), "--field", "query", "--count", "50",
               "--out", str(folder / "mined.jsonl"), "--groups-out", str(folder / "groups.jsonl"), "--no-gold"]
        if args.threshold is not None:
            cmd += ["--similarity", str(args.threshold)]
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
        rc, cpu, rss = out.stdout.split()[-3:]
        if rc != "0":
            raise SystemExit(out.stderr)
        result = score(log, truth, folder / "groups.jsonl")
    print(f"lines {args.lines:,}; distinct after normalising {result['distinct']:,}; "
          f"planted same-question pairs {result['planted_pairs']:,}; folded pairs {result['folded_pairs']:,}")
    print(f"distinct texts removed {result['removed']:,} of {result['redundant']:,} redundant: "
          f"precision {result['removed_precision']:.4f}, recall {result['removed_recall']:.4f}")
    print(f"pairwise dedup precision {result['precision']:.4f}, recall {result['recall']:.4f}; "
          f"wall {seconds:.1f} s, CPU {float(cpu):.1f} s, peak RSS {int(rss) / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
