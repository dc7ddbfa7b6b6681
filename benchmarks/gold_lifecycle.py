"""How well `ci-eval gold remap` keeps a gold set through a re-ingestion, on real collections.

For Cranfield and Vaswani (from ../shared/collections beside the checkout):

1. import the judgements with `ci-eval gold import` (TREC qrels and topics);
2. chunk every document one way (fixed 40-word windows, ids ``doc#n``) and label, for each
   relevant document, the chunk a labeller would pick (the one BM25 ranks first for the
   question among that document's chunks); anchor the gold set on that index;
3. re-ingest: delete a few documents, edit a few (a sentence inserted, a phrase reworded),
   re-chunk everything another way (sentences packed up to 55 words, ids ``d<doc>-p<k>``);
4. remap from the anchors and the new manifest alone, and compare with the truth, which is
   known because every word keeps its identity through the edits: an old chunk's true new
   chunks are those sharing at least half of its words or made at least half of its words;
5. score a BM25 retriever over the new chunks against (a) the stale gold, (b) the remapped
   gold (automatic only, and with proposals accepted), (c) the gold relabelled from the truth.

Run: ``python benchmarks/gold_lifecycle.py`` (prints the markdown tables of
docs/gold-lifecycle.md); ``--docs N --queries M`` for a slice.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "collections"
OLD_WINDOW, NEW_LIMIT, K = 40, 55, 5
SHARE_DELETED, SHARE_INSERTED, SHARE_REWORDED = 0.03, 0.05, 0.05


@dataclass
class Doc:
    id: str
    words: list[str]
    wids: list[int | None]  # each word's identity: its position in the original, None if new


@dataclass(frozen=True)
class Piece:
    id: str
    doc: str
    start: int
    end: int
    text: str
    wids: frozenset


def load_cranfield(root: Path):
    docs = {}
    for line in (root / "derived" / "docs.tsv").read_text(encoding="utf-8").splitlines():
        did, _title, text = line.split("\t")
        docs[did] = text.split()
    topics = root / "derived" / "queries.tsv"
    rows = [line.split("\t") for line in topics.read_text(encoding="utf-8").splitlines() if line.strip()]
    return docs, root / "derived" / "cranqrel.gain.trec", "".join(f"{r[0]}\t{r[2]}\n" for r in rows)


def load_vaswani(root: Path):
    text = (root / "doc-text.trec").read_text(encoding="utf-8")
    docs = {m.group(1).strip(): m.group(2).split()
            for m in re.finditer(r"<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", text, re.S)}
    return docs, root / "qrels", (root / "query-text.trec").read_text(encoding="utf-8")


def chunk_windows(doc: Doc) -> list[Piece]:
    return _pieces(doc, [(i, min(i + OLD_WINDOW, len(doc.words))) for i in range(0, len(doc.words), OLD_WINDOW)],
                   lambda n: f"{doc.id}#{n}")


def chunk_sentences(doc: Doc) -> list[Piece]:
    """Sentences (ending at a word ending in '.') packed greedily up to NEW_LIMIT words; a
    longer sentence is cut every NEW_LIMIT words."""
    sentences, start = [], 0
    for i, w in enumerate(doc.words):
        if w.endswith(".") or i == len(doc.words) - 1:
            sentences.append((start, i + 1))
            start = i + 1
    bounds: list[tuple[int, int]] = []
    for s, e in sentences:
        if bounds and e - bounds[-1][0] <= NEW_LIMIT and bounds[-1][1] == s:
            bounds[-1] = (bounds[-1][0], e)
            continue
        while e - s > NEW_LIMIT:
            bounds.append((s, s + NEW_LIMIT))
            s += NEW_LIMIT
        bounds.append((s, e))
    return _pieces(doc, bounds, lambda n: f"d{doc.id}-p{n}")


def _pieces(doc: Doc, bounds, name) -> list[Piece]:
    offsets, at = [], 0
    for w in doc.words:
        offsets.append(at)
        at += len(w) + 1
    out = []
    for n, (s, e) in enumerate(bounds):
        start, end = offsets[s], offsets[e - 1] + len(doc.words[e - 1])
        out.append(Piece(name(n), doc.id, start, end, " ".join(doc.words[s:e]),
                         frozenset(w for w in doc.wids[s:e] if w is not None)))
    return out


def reingest(docs: dict[str, Doc], rng: random.Random) -> dict[str, Doc]:
    """Delete, insert a sentence into, or reword a phrase of, a few documents."""
    ids = sorted(docs)
    picked = rng.sample(ids, int(len(ids) * (SHARE_DELETED + SHARE_INSERTED + SHARE_REWORDED)))
    n_del, n_ins = int(len(ids) * SHARE_DELETED), int(len(ids) * SHARE_INSERTED)
    deleted, inserted, reworded = set(picked[:n_del]), set(picked[n_del:n_del + n_ins]), set(picked[n_del + n_ins:])
    out = {}
    for did in ids:
        d = docs[did]
        words, wids = list(d.words), list(d.wids)
        if did in deleted:
            continue
        if did in inserted:
            at = rng.randrange(len(words) + 1)
            new = "this sentence was added when the document was revised .".split()
            words[at:at] = new
            wids[at:at] = [None] * len(new)
        elif did in reworded and len(words) > 8:
            at = rng.randrange(len(words) - 5)
            words[at:at + 5] = ["reworded", "phrase", "in", "revision", "two"]
            wids[at:at + 5] = [None] * 5
        out[did] = Doc(did, words, wids)
    return out


def truth_of(old: Piece, new_by_doc: dict[str, list[Piece]]) -> tuple[str, ...]:
    found = []
    for p in new_by_doc.get(old.doc, ()):
        shared = len(old.wids & p.wids)
        own = sum(1 for _ in p.wids) or 1
        if shared and (2 * shared >= len(old.wids) or 2 * shared >= own):
            found.append(p.id)
    return tuple(found)


def write_manifest(path: Path, version: str, pieces: list[Piece], spans: bool = True) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"version": version}) + "\n")
        for p in pieces:
            entry = {"id": p.id, "doc": p.doc, "start": p.start, "end": p.end, "text": p.text}
            if not spans:  # a chunker that keeps no offsets (and names no document)
                entry = {"id": p.id, "text": p.text}
            fh.write(json.dumps(entry) + "\n")


def bm25(pieces: list[Piece]):
    sys.path.insert(0, str(REPO))
    from ci_eval.demo.bm25 import BM25Params, build

    return build(((p.id, "", p.text) for p in pieces), BM25Params(stopwords=True, stem=True, title_boost=0.0))


def scores(index, questions: dict[str, str], gold: dict[str, set[str]], depth: int = 100) -> tuple[float, float]:
    """(MRR, hit@K) over every question; a question with no live gold id scores 0."""
    rr = hit = 0.0
    for qid, text in questions.items():
        ranked = [cid for cid, _ in index.search(text, depth)]
        first = next((r for r, cid in enumerate(ranked, 1) if cid in gold.get(qid, ())), None)
        rr += 1 / first if first else 0.0
        hit += 1.0 if first and first <= K else 0.0
    n = len(questions) or 1
    return rr / n, hit / n


def label_chunks(gold_doc: dict, pieces: list[Piece]) -> dict:
    """Document-level judgements -> the chunk of each relevant document BM25 ranks first
    for the question (the passage a labeller would mark), keeping the grade."""
    by_doc: dict[str, list[Piece]] = {}
    for p in pieces:
        by_doc.setdefault(p.doc, []).append(p)
    index = bm25(pieces)
    for q in gold_doc["questions"]:
        ranked = {cid: r for r, (cid, _) in enumerate(index.search(q["question"], len(pieces)))}
        grades = q["gold"] if isinstance(q["gold"], dict) else {d: 1 for d in q["gold"]}
        labelled = {}
        for did, grade in grades.items():
            if grade >= 1 and did in by_doc:
                best = min(by_doc[did], key=lambda p: ranked.get(p.id, len(pieces)))
                labelled[best.id] = max(grade, labelled.get(best.id, grade))
        q["gold"] = labelled
    gold_doc["questions"] = [q for q in gold_doc["questions"] if q["gold"]]
    return gold_doc


def _anchored_gold(work: Path, docs: dict[str, Doc], qrels: Path, topics_text: str,
                   max_queries: int | None) -> tuple[Path, dict, list[Piece]]:
    """Steps 1 and 2: import the judgements, label chunks, anchor on the old index."""
    from ci_eval.gold.importing import import_gold
    from ci_eval.gold.lifecycle import Targets, anchor
    from ci_eval.inputs.manifest import read_manifest

    (work / "topics.txt").write_text(topics_text, encoding="utf-8")
    kept = [line for line in qrels.read_text(encoding="utf-8").splitlines() if line.split() and line.split()[2] in docs]
    qids = list(dict.fromkeys(line.split()[0] for line in kept))[:max_queries]
    (work / "qrels.txt").write_text("".join(f"{line}\n" for line in kept if line.split()[0] in qids))
    gold_path = work / "gold.json"
    import_gold("trec", [str(work / "qrels.txt"), str(work / "topics.txt")], str(gold_path), merge=False,
                record={"by": "benchmark", "at": "2026-01-01T00:00:00Z"}, index_version="v1")
    old_pieces = [p for d in docs.values() for p in chunk_windows(d)]
    gold_doc = label_chunks(json.loads(gold_path.read_text()), old_pieces)
    gold_path.write_text(json.dumps(gold_doc))
    write_manifest(work / "old.jsonl", "v1", old_pieces)
    anchor(Targets(str(gold_path), read_manifest(str(work / "old.jsonl"))))
    return gold_path, gold_doc, old_pieces


def _accuracy(plan, truth: dict) -> dict:
    """Step 4's comparison of the plan with the truth."""
    from ci_eval.core.remap import AUTOMATIC, PROPOSED, UNRESOLVED

    auto = [m for m in plan.mappings if m.kind == AUTOMATIC]
    proposed = [m for m in plan.mappings if m.kind == PROPOSED]
    return {
        "gold_ids": len(plan.mappings), "automatic": len(auto), "proposed": len(proposed),
        "unresolved": plan.count(UNRESOLVED),
        "unresolved_truly_gone": sum(not truth[m.old] for m in plan.mappings if m.kind == UNRESOLVED),
        "automatic_exact": sum(set(m.new) == set(truth[m.old]) for m in auto),
        "automatic_pairs": sum(len(m.new) for m in auto),
        "automatic_pairs_right": sum(len(set(m.new) & set(truth[m.old])) for m in auto),
        "proposed_right": sum(bool(m.new) and set(m.new) <= set(truth[m.old]) for m in proposed),
    }


def measure(name: str, *loaded, **options) -> dict:
    """Steps 1 to 5 for one collection, in a temporary folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="gold-lifecycle-") as tmp:
        return _measure(Path(tmp), name, *loaded, **options)


def _measure(work: Path, name: str, docs_words: dict[str, list[str]], qrels: Path, topics_text: str, *,
             max_docs: int | None, max_queries: int | None, spans: bool = True, seed: int = 12) -> dict:
    from ci_eval.gold.lifecycle import Targets, remap
    from ci_eval.inputs.manifest import read_manifest

    ids = sorted(docs_words, key=lambda d: (len(d), d))[:max_docs] if max_docs else sorted(docs_words)
    docs = {d: Doc(d, docs_words[d], list(range(len(docs_words[d])))) for d in ids}
    gold_path, gold_doc, old_pieces = _anchored_gold(work, docs, qrels, topics_text, max_queries)

    new_docs = reingest(docs, random.Random(seed))
    new_pieces = [p for d in new_docs.values() for p in chunk_sentences(d)]
    write_manifest(work / "new.jsonl", "v2", new_pieces, spans)
    new_index = read_manifest(str(work / "new.jsonl"))
    plan = remap(Targets(str(gold_path), new_index), write=False, accept_proposals=False,
                 record={"by": "benchmark", "at": "2026-01-01T00:00:00Z"})

    old_by_id = {p.id: p for p in old_pieces}
    new_by_doc: dict[str, list[Piece]] = {}
    for p in new_pieces:
        new_by_doc.setdefault(p.doc, []).append(p)
    truth = {m.old: truth_of(old_by_id[m.old], new_by_doc) for m in plan.mappings}

    questions = {q["id"]: q["question"] for q in gold_doc["questions"]}
    stale_gold = {q["id"]: set(q["gold"]) for q in gold_doc["questions"]}
    live = new_index.ids

    def relabel(mapping):
        return {qid: {n for g in gold for n in mapping.get(g, (g,))} & live for qid, gold in stale_gold.items()}

    index = bm25(new_pieces)
    return {
        "collection": name if spans else f"{name}, new manifest without doc and spans",
        "docs": len(docs), "docs_after": len(new_docs), "chunks_before": len(old_pieces),
        "chunks_after": len(new_pieces), "questions": len(questions), **_accuracy(plan, truth),
        "stale": scores(index, questions, {q: g & live for q, g in stale_gold.items()}),
        "remapped": scores(index, questions, relabel(plan.applied(False))),
        "remapped_with_proposals": scores(index, questions, relabel(plan.applied(True))),
        "truth": scores(index, questions, relabel(truth)),
    }


def _pct(n: int, d: int) -> str:
    return f"{n / d:.1%}" if d else "-"


def markdown(results: list[dict]) -> str:
    out = ["| collection | docs (after) | chunks before -> after | questions | stale gold ids | automatic | proposed | unresolved |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        n = r["gold_ids"]
        out.append(f"| {r['collection']} | {r['docs']:,} ({r['docs_after']:,}) | {r['chunks_before']:,} -> "
                   f"{r['chunks_after']:,} | {r['questions']} | {n} | {r['automatic']} ({_pct(r['automatic'], n)}) | "
                   f"{r['proposed']} ({_pct(r['proposed'], n)}) | {r['unresolved']} ({_pct(r['unresolved'], n)}; "
                   f"{r['unresolved_truly_gone']} truly gone) |")
    out += ["", "| collection | automatic remaps exactly right | new ids right (pairs) | proposals right |",
            "| --- | ---: | ---: | ---: |"]
    for r in results:
        out.append(f"| {r['collection']} | {r['automatic_exact']} of {r['automatic']} "
                   f"({_pct(r['automatic_exact'], r['automatic'])}) | {r['automatic_pairs_right']} of "
                   f"{r['automatic_pairs']} ({_pct(r['automatic_pairs_right'], r['automatic_pairs'])}) | "
                   f"{r['proposed_right']} of {r['proposed']} |")
    out += ["", f"| collection | gold | MRR | hit@{K} |", "| --- | --- | ---: | ---: |"]
    for r in results:
        for key, label in (("stale", "(a) stale ids"), ("remapped", "(b) after remap (automatic)"),
                           ("remapped_with_proposals", "(b') after remap, proposals accepted"),
                           ("truth", "(c) relabelled from the true mapping")):
            mrr, hit = r[key]
            out.append(f"| {r['collection']} | {label} | {mrr:.3f} | {hit:.3f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, help="only the first N documents of each collection")
    ap.add_argument("--queries", type=int, help="only the first M judged queries")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if not SHARED.is_dir():
        print(f"the collections are not at {SHARED}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO))
    collections = (("Cranfield", load_cranfield(SHARED / "cranfield")), ("Vaswani", load_vaswani(SHARED / "vaswani_npl")))
    results = [measure(name, *loaded, max_docs=args.docs, max_queries=args.queries, spans=spans)
               for spans in (True, False) for name, loaded in collections]
    print(json.dumps(results, indent=1) if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
