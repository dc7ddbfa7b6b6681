"""`ci-eval gold remap` after a re-ingestion that re-chunks to half and to double size, on
real collections, with the truth taken from character positions.

For Cranfield and Vaswani (from ../shared/collections beside the checkout):

1. the old ingestion keeps each document's text as it came: paragraphs apart by a blank
   line, lines wrapped at 70 characters, CRLF line ends. Every document is cut into 40-word
   windows (ids ``doc#n``); the judgements are imported with `ci-eval gold import` and each
   relevant document's gold chunk is the one BM25 ranks first for the question among that
   document's chunks (what a labeller would pick), grade kept; then `gold anchor`;
2. the new ingestion normalises the text (lines unwrapped, single spaces, paragraphs apart
   by one blank line) and, with a fixed seed, edits the documents: deleted, duplicated
   under a new document id, a sentence inserted, two neighbouring paragraphs swapped, three
   typos fixed (a word mended in place), each in a share of the documents; the rest only
   normalised. Then every document is cut into windows of half the old size (20 words,
   overlapping by 4) or of double it (80 words, overlapping by 10), each chunk's text a
   header line (``Document 12, part 3``) and then its words, under random 128-bit hex ids.
   The manifest gives ``doc``, ``start``/``end`` (the words' offsets in the new document)
   and ``text`` (header included);
3. `gold remap` from the anchors and the new manifest alone (a dry run: what `--write`
   writes without `--accept-proposals` is the automatic part);
4. the truth: every character of a new document knows the character of the old document
   it came from (none for an inserted one); a new word is an old chunk's when its first
   character came from inside the old chunk's span. An old chunk's true new chunks are the
   chunks of the same document holding at least half of its surviving words or made at
   least half of its words (the rule the remap's span states). A gold id is *movable* when
   that set is not empty;
5. BM25 over the new chunks, scored (MRR, recall@5) against the gold after the automatic
   remap and against the gold relabelled from the truth; a question with no gold id the
   index holds scores 0, in both.

Run: ``python benchmarks/bench_rechunk.py`` (the markdown tables of docs/gold-lifecycle.md;
about a minute of CPU); ``--docs N --queries M`` for a slice, ``--json`` for the figures.
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gold_lifecycle import (  # noqa: E402
    REPO,
    SHARED,
    Piece,
    _anchored_gold,
    _edit,
    _opaque,
    _paragraphs,
    _sample,
    bm25,
    edits_of,
    load_cranfield,
    load_vaswani,
    write_manifest,
)

OLD_WINDOW, LINE, K = 40, 70, 5
# Each document's edit, with its share of the documents; the rest are only normalised.
EDITS = (("deleted", 0.03), ("duplicated", 0.03), ("sentence inserted", 0.04),
         ("paragraphs reordered", 0.04), ("typos fixed", 0.04))
NORMALISED = "only normalised"
# (name, window in words, stride in words)
CUTS = (("half size (20-word windows, 4 overlapping)", 20, 16),
        ("double size (80-word windows, 10 overlapping)", 80, 70))


@dataclass
class Text:
    """A document's text, with each of its words' offsets and identities (the word's
    place in the original document, None for a new word)."""
    id: str
    text: str
    offsets: list[int]
    wids: list[int | None]
    words: list[str]


def raw_text(did: str, words: list[str]) -> Text:
    """The old ingestion: paragraphs apart by a blank line, lines wrapped at LINE
    characters, CRLF line ends."""
    out, offsets, at = [], [], 0
    for p, (a, b) in enumerate(_paragraphs(words)):
        if p:
            out.append("\r\n\r\n")
            at += 4
        line = 0
        for i in range(a, b):
            if i > a:
                sep = "\r\n" if line + 1 + len(words[i]) > LINE else " "
                line = 0 if sep != " " else line + 1
                out.append(sep)
                at += len(sep)
            offsets.append(at)
            out.append(words[i])
            at += len(words[i])
            line += len(words[i])
    return Text(did, "".join(out), offsets, list(range(len(words))), list(words))


def normalised_text(did: str, words: list[str], wids: list) -> Text:
    """The new ingestion: words apart by one space, paragraphs by one blank line."""
    out, offsets, at = [], [], 0
    for p, (a, b) in enumerate(_paragraphs(words)):
        if p:
            out.append("\n\n")
            at += 2
        for i in range(a, b):
            if i > a:
                out.append(" ")
                at += 1
            offsets.append(at)
            out.append(words[i])
            at += len(words[i])
    return Text(did, "".join(out), offsets, list(wids), list(words))


def edited(words: list[str], edit: str, rng: random.Random) -> tuple[list[str], list]:
    """The document's words after its edit, with their identities (gold_lifecycle's edits:
    a typo fixed is a word mended in place, its first character kept)."""
    words, wids = list(words), list(range(len(words)))
    _edit({"typos fixed": "words cleaned"}.get(edit, edit), words, wids, rng)
    return words, wids


def windows(t: Text, size: int, stride: int, name, header: bool) -> list[Piece]:
    bounds, n = [], len(t.words)
    for i in range(0, n, stride):
        if bounds and bounds[-1][1] == n:
            break
        bounds.append((i, min(i + size, n)))
    out = []
    for k, (a, b) in enumerate(bounds):
        start, end = t.offsets[a], t.offsets[b - 1] + len(t.words[b - 1])
        body = t.text[start:end]
        text = f"Document {t.id}, part {k + 1}\n{body}" if header else body
        out.append(Piece(name(k), t.id, start, end, text, frozenset(range(a, b))))
    return out


def truth(old: Piece, old_text: Text, new: list[Piece], new_text: Text | None) -> tuple[str, ...]:
    """Step 4: from character positions only."""
    if new_text is None:
        return ()
    old_starts = old_text.offsets
    # each new word: the old character its first character came from
    origin = [old_starts[w] if w is not None else None for w in new_text.wids]
    inside = [o is not None and old.start <= o < old.end for o in origin]
    surviving = sum(inside)
    if not surviving:
        return ()
    starts = new_text.offsets
    found = []
    for p in new:
        a, b = bisect.bisect_left(starts, p.start), bisect.bisect_left(starts, p.end)
        shared, own = sum(inside[a:b]), b - a
        if shared and (2 * shared >= surviving or 2 * shared >= own):
            found.append(p.id)
    return tuple(found)


def scores(index, questions: dict[str, str], gold: dict[str, set[str]], depth: int = 100) -> tuple[float, float]:
    """(MRR, recall@K) over every question; a question with no live gold id scores 0."""
    rr = rec = 0.0
    for qid, text in questions.items():
        relevant = gold.get(qid, set())
        if not relevant:
            continue
        ranked = [cid for cid, _ in index.search(text, depth)]
        first = next((r for r, cid in enumerate(ranked, 1) if cid in relevant), None)
        rr += 1 / first if first else 0.0
        rec += len(relevant & set(ranked[:K])) / len(relevant)
    n = len(questions) or 1
    return rr / n, rec / n


def measure(work: Path, name: str, docs_words: dict, qrels: Path, topics_text: str, *, max_docs, max_queries,
            seed: int = 48) -> dict:
    from ci_eval.core.gold.remap import AUTOMATIC, UNRESOLVED, edit_counts
    from ci_eval.gold.lifecycle import Targets, remap
    from ci_eval.inputs.manifest import read_manifest

    ids = _sample(docs_words, qrels, max_docs)
    old_texts = {d: raw_text(d, docs_words[d]) for d in ids}
    old_pieces = [p for t in old_texts.values()
                  for p in windows(t, OLD_WINDOW, OLD_WINDOW, lambda k, d=t.id: f"{d}#{k}", False)]
    gold_path, gold_doc, _ = _anchored_gold(work, old_texts, qrels, topics_text, max_queries, old_pieces)
    old_by_id = {p.id: p for p in old_pieces}

    edits = edits_of(ids, random.Random(seed), EDITS, NORMALISED)
    rng = random.Random(seed + 1)
    new_texts: dict[str, Text] = {}
    for d in ids:
        if edits[d] == "deleted":
            continue
        words, wids = edited(docs_words[d], edits[d], rng)
        new_texts[d] = normalised_text(d, words, wids)
        if edits[d] == "duplicated":  # the same document again under another id
            new_texts[f"{d}-copy"] = normalised_text(f"{d}-copy", words, wids)

    questions = {q["id"]: q["question"] for q in gold_doc["questions"]}
    out = {"collection": name, "docs": len(ids), "docs_after": len(new_texts), "chunks_before": len(old_pieces),
           "questions": len(questions), "cuts": []}
    for label, size, stride in CUTS:
        names = _opaque(random.Random(seed + 2))
        new_pieces = [p for t in new_texts.values() for p in windows(t, size, stride, names, True)]
        write_manifest(work / "new.jsonl", "v2", new_pieces)
        index = read_manifest(str(work / "new.jsonl"))
        began = time.process_time()
        plan = remap(Targets(str(gold_path), index), write=False, accept_proposals=False,
                     record={"by": "benchmark", "at": "2026-01-01T00:00:00Z"})
        cpu = time.process_time() - began
        by_doc: dict[str, list[Piece]] = {}
        for p in new_pieces:
            by_doc.setdefault(p.doc, []).append(p)
        true = {m.old: truth(old_by_id[m.old], old_texts[old_by_id[m.old].doc], by_doc.get(old_by_id[m.old].doc, []),
                             new_texts.get(old_by_id[m.old].doc)) for m in plan.mappings}
        per_edit: dict[str, dict] = {}
        for m in plan.mappings:
            row = per_edit.setdefault(edits[old_by_id[m.old].doc], {"moved": 0, "automatic": 0, "wrong": 0,
                                                                    "proposed": 0, "unresolved": 0})
            row["moved"] += bool(true[m.old])
            row["automatic"] += m.kind == AUTOMATIC and bool(true[m.old])
            row["wrong"] += m.kind == AUTOMATIC and set(m.new) != set(true[m.old])
            row["proposed"] += m.kind not in (AUTOMATIC, UNRESOLVED)
            row["unresolved"] += m.kind == UNRESOLVED
        total = {k: sum(r[k] for r in per_edit.values()) for k in ("moved", "automatic", "wrong", "proposed", "unresolved")}
        live = index.ids
        stale = {q["id"]: set(q["gold"]) for q in gold_doc["questions"]}

        def relabel(mapping, live=live, stale=stale):
            return {qid: {n for g in gold for n in mapping.get(g, (g,))} & live for qid, gold in stale.items()}

        bm = bm25(new_pieces)
        out["cuts"].append({"cut": label, "chunks_after": len(new_pieces), "gold_ids": len(plan.mappings),
                            "per_edit": dict(sorted(per_edit.items())), "all": total, "cpu": cpu,
                            "by_kind": {k: list(v) for k, v in edit_counts(plan).items()},
                            "remapped": scores(bm, questions, relabel(plan.applied(False))),
                            "truth": scores(bm, questions, relabel(true))})
    return out


def _pct(n: int, d: int) -> str:
    return f"{n / d:.1%}" if d else "-"


def markdown(results: list[dict]) -> str:
    out = ["| collection | cut | chunks before -> after | gold ids | movable | automatic (of movable) | "
           "wrong written | proposed | unresolved | remap CPU |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        for c in r["cuts"]:
            a = c["all"]
            out.append(f"| {r['collection']} | {c['cut']} | {r['chunks_before']:,} -> {c['chunks_after']:,} | "
                       f"{c['gold_ids']} | {a['moved']} | {a['automatic']} ({_pct(a['automatic'], a['moved'])}) | "
                       f"{a['wrong']} | {a['proposed']} | {a['unresolved']} | {c['cpu']:.1f} s |")
    out += ["", "| collection | cut | document's edit | movable | automatic | wrong written |",
            "| --- | --- | --- | ---: | ---: | ---: |"]
    for r in results:
        for c in r["cuts"]:
            for edit, a in c["per_edit"].items():
                out.append(f"| {r['collection']} | {c['cut']} | {edit} | {a['moved']} | "
                           f"{a['automatic']} ({_pct(a['automatic'], a['moved'])}) | {a['wrong']} |")
    out += ["", "| collection | cut | `gold remap`'s automatic by edit (of mapped) |", "| --- | --- | --- |"]
    for r in results:
        for c in r["cuts"]:
            kinds = ", ".join(f"{k} {a} of {n}" for k, (a, n) in c["by_kind"].items())
            out.append(f"| {r['collection']} | {c['cut']} | {kinds} |")
    out += ["", f"| collection | cut | MRR: remap / truth | recall@{K}: remap / truth |", "| --- | --- | ---: | ---: |"]
    for r in results:
        for c in r["cuts"]:
            (m1, r1), (m2, r2) = c["remapped"], c["truth"]
            out.append(f"| {r['collection']} | {c['cut']} | {m1:.4f} / {m2:.4f} ({m1 - m2:+.4f}) | "
                       f"{r1:.4f} / {r2:.4f} ({r1 - r2:+.4f}) |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, help="only N documents of each collection (the judged ones first)")
    ap.add_argument("--queries", type=int, help="only the first M judged queries")
    ap.add_argument("--only", choices=("Cranfield", "Vaswani"), help="one collection")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        print(f"the collections are not at {SHARED}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO))
    collections = [(n, f) for n, f in (("Cranfield", lambda: load_cranfield(SHARED / "cranfield")),
                                       ("Vaswani", lambda: load_vaswani(SHARED / "vaswani_npl")))
                   if args.only in (None, n)]
    results = []
    for name, load in collections:
        with tempfile.TemporaryDirectory(prefix="bench-rechunk-") as tmp:
            results.append(measure(Path(tmp), name, *load(), max_docs=args.docs, max_queries=args.queries))
    print(json.dumps(results, indent=1) if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
