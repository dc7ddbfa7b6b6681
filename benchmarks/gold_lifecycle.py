"""How well `ci-eval gold remap` keeps a gold set through a re-ingestion, on real collections.

For Cranfield and Vaswani (from ../shared/collections beside the checkout):

1. import the judgements with `ci-eval gold import` (TREC qrels and topics);
2. chunk every document one way (fixed 40-word windows, ids ``doc#n``) and label, for each
   relevant document, the chunk a labeller would pick (the one BM25 ranks first for the
   question among that document's chunks); anchor the gold set on that index;
3. re-ingest: each document gets one edit (or none), drawn with a fixed seed: deleted,
   a sentence inserted, two paragraphs swapped, the first paragraph dropped, a phrase
   reworded, a few words cleaned (typos mended in place); then everything is re-chunked one
   of several ways (sentences packed up to 55 words; windows of half and of twice the old
   size; 40-word windows overlapping by half), under ids that carry no information;
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
PARAGRAPH = 20  # words: sentences are grouped into paragraphs of at least this many
# Each document's edit, with its share of the documents; the rest are left as they were.
EDITS = (("deleted", 0.03), ("sentence inserted", 0.05), ("paragraphs reordered", 0.05),
         ("first paragraph dropped", 0.05), ("phrase reworded", 0.05), ("words cleaned", 0.05))
UNCHANGED = "unchanged"


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


def chunk_windows(doc: Doc, size: int = OLD_WINDOW, stride: int | None = None, name=None) -> list[Piece]:
    """Windows of ``size`` words every ``stride`` words (overlapping when stride < size)."""
    stride, bounds = stride or size, []
    for i in range(0, len(doc.words), stride):
        if bounds and bounds[-1][1] == len(doc.words):
            break  # the last window already reaches the end
        bounds.append((i, min(i + size, len(doc.words))))
    return _pieces(doc, bounds, name or (lambda n: f"{doc.id}#{n}"))


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


def _paragraphs(words: list[str]) -> list[tuple[int, int]]:
    """Sentences (a word ending in '.') grouped into paragraphs of at least PARAGRAPH words;
    text without sentence ends is cut every PARAGRAPH words."""
    out, start = [], 0
    for i, w in enumerate(words):
        if (w.endswith(".") and i + 1 - start >= PARAGRAPH) or i + 1 - start >= 3 * PARAGRAPH:
            out.append((start, i + 1))
            start = i + 1
    if start < len(words):
        out.append((start, len(words)))
    return out


def edits_of(ids: list[str], rng: random.Random, edits=EDITS, rest: str = UNCHANGED) -> dict[str, str]:
    """Each document's edit (``rest`` for most), in fixed shares."""
    shuffled = rng.sample(ids, len(ids))
    out, at = dict.fromkeys(ids, rest), 0
    for name, share in edits:
        n = int(len(ids) * share)
        out.update(dict.fromkeys(shuffled[at:at + n], name))
        at += n
    return out


def _edit(name: str, words: list, wids: list, rng: random.Random) -> None:
    """One edit in place; every word keeps its identity (None for a new word)."""
    paras = _paragraphs(words)
    if name == "sentence inserted":
        at = rng.randrange(len(words) + 1)
        new = "this sentence was added when the document was revised .".split()
        words[at:at] = new
        wids[at:at] = [None] * len(new)
    elif name == "paragraphs reordered" and len(paras) >= 2:
        i = rng.randrange(len(paras) - 1)
        (a, b), (c, d) = paras[i], paras[i + 1]
        words[a:d] = words[c:d] + words[a:b]
        wids[a:d] = wids[c:d] + wids[a:b]
    elif name == "first paragraph dropped" and len(paras) >= 2:
        del words[:paras[0][1]], wids[:paras[0][1]]
    elif name == "phrase reworded" and len(words) > 8:
        at = rng.randrange(len(words) - 5)
        words[at:at + 5] = ["reworded", "phrase", "in", "revision", "two"]
        wids[at:at + 5] = [None] * 5
    elif name == "words cleaned":
        for at in rng.sample(range(len(words)), min(3, len(words))):
            words[at] = words[at] + "e"  # a typo mended: the same word, other characters


def reingest(docs: dict[str, Doc], edits: dict[str, str], rng: random.Random) -> dict[str, Doc]:
    """The documents after their edits (deleted ones gone)."""
    out = {}
    for did in sorted(docs):
        if edits[did] == "deleted":
            continue
        words, wids = list(docs[did].words), list(docs[did].wids)
        _edit(edits[did], words, wids, rng)
        out[did] = Doc(did, words, wids)
    return out


def _opaque(rng: random.Random):
    """Chunk ids that carry no information (uuid4-like, from the seeded generator)."""
    return lambda n: f"{rng.getrandbits(128):032x}"


# How the new index is cut: (name, chunker of a document given an id maker).
RECHUNKS = (
    ("sentences up to 55 words", lambda d, ids: _renamed(chunk_sentences(d), ids)),
    ("windows of half size (20 words)", lambda d, ids: chunk_windows(d, OLD_WINDOW // 2, name=ids)),
    ("windows of double size (80 words)", lambda d, ids: chunk_windows(d, 2 * OLD_WINDOW, name=ids)),
    ("40-word windows overlapping by half", lambda d, ids: chunk_windows(d, OLD_WINDOW, OLD_WINDOW // 2, name=ids)),
)


def _renamed(pieces: list[Piece], ids) -> list[Piece]:
    return [Piece(ids(n), p.doc, p.start, p.end, p.text, p.wids) for n, p in enumerate(pieces)]


def truth_of(old: Piece, new_by_doc: dict[str, list[Piece]]) -> tuple[str, ...]:
    """A new chunk of exactly the old words is the chunk (overlapping windows hold it
    besides); otherwise the new chunks holding half of its words or made half of them."""
    found = []
    same = [p.id for p in new_by_doc.get(old.doc, ()) if p.wids == old.wids and len(p.text) == len(old.text)]
    if len(same) == 1:
        return tuple(same)
    for p in new_by_doc.get(old.doc, ()):
        shared = len(old.wids & p.wids)
        own = len(p.text.split()) or 1  # its words, new ones included
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
                   max_queries: int | None, pieces: list[Piece] | None = None) -> tuple[Path, dict, list[Piece]]:
    """Steps 1 and 2: import the judgements, label chunks, anchor on the old index (the
    documents' 40-word windows, or ``pieces``)."""
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
    old_pieces = pieces if pieces is not None else [p for d in docs.values() for p in chunk_windows(d)]
    gold_doc = label_chunks(json.loads(gold_path.read_text()), old_pieces)
    gold_path.write_text(json.dumps(gold_doc))
    write_manifest(work / "old.jsonl", "v1", old_pieces)
    anchor(Targets(str(gold_path), read_manifest(str(work / "old.jsonl"))))
    return gold_path, gold_doc, old_pieces


def _accuracy(mappings, truth: dict) -> dict:
    """Step 4's comparison of some of the plan's mappings with the truth. An automatic
    remap is right when it names exactly the true new ids; a moved id is one the truth
    maps somewhere (its document was not deleted)."""
    from ci_eval.core.gold.remap import AUTOMATIC, PROPOSED, UNRESOLVED

    auto = [m for m in mappings if m.kind == AUTOMATIC]
    proposed = [m for m in mappings if m.kind == PROPOSED]
    return {
        "gold_ids": len(mappings), "moved": sum(bool(truth[m.old]) for m in mappings),
        "automatic": len(auto), "proposed": len(proposed),
        "unresolved": sum(m.kind == UNRESOLVED for m in mappings),
        "unresolved_truly_gone": sum(not truth[m.old] for m in mappings if m.kind == UNRESOLVED),
        "automatic_exact": sum(set(m.new) == set(truth[m.old]) for m in auto),
        "automatic_of_moved": sum(bool(truth[m.old]) for m in auto),
        "automatic_pairs": sum(len(m.new) for m in auto),
        "automatic_pairs_right": sum(len(set(m.new) & set(truth[m.old])) for m in auto),
        "proposed_right": sum(bool(m.new) and set(m.new) == set(truth[m.old]) for m in proposed),
    }


def measure(name: str, *loaded, **options) -> dict:
    """Steps 1 to 5 for one collection, in a temporary folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="gold-lifecycle-") as tmp:
        return _measure(Path(tmp), name, *loaded, **options)


def _sample(docs_words: dict, qrels: Path, max_docs: int | None) -> list[str]:
    """The documents measured: all, or the judged ones first (so a slice still has gold
    ids) and then the shortest others, up to ``max_docs``."""
    if not max_docs:
        return sorted(docs_words)
    judged = {line.split()[2] for line in qrels.read_text(encoding="utf-8").splitlines() if line.split()}
    order = sorted(docs_words, key=lambda d: (d not in judged, len(docs_words[d]), d))
    return sorted(order[:max_docs])


def _measure(work: Path, name: str, docs_words: dict[str, list[str]], qrels: Path, topics_text: str, *,
             max_docs: int | None, max_queries: int | None, seed: int = 12, rechunks=RECHUNKS,
             scored: bool = True) -> dict:
    ids = _sample(docs_words, qrels, max_docs)
    docs = {d: Doc(d, docs_words[d], list(range(len(docs_words[d])))) for d in ids}
    gold_path, gold_doc, old_pieces = _anchored_gold(work, docs, qrels, topics_text, max_queries)
    edits = edits_of(ids, random.Random(seed))
    new_docs = reingest(docs, edits, random.Random(seed + 1))
    out = {"collection": name, "docs": len(docs), "docs_after": len(new_docs), "chunks_before": len(old_pieces),
           "questions": len(gold_doc["questions"]), "scenarios": []}
    variants = [(r, True) for r in rechunks] + ([(rechunks[0], False)] if scored else [])
    for n, (rechunk, spans) in enumerate(variants):
        out["scenarios"].append(_scenario(work, gold_path, gold_doc, old_pieces, new_docs, edits, rechunk, spans,
                                          seed, scored and n in (0, len(variants) - 1)))
    return out


def _scenario(work, gold_path, gold_doc, old_pieces, new_docs, edits, rechunk, spans, seed, scored) -> dict:
    """Steps 3 (the cut) to 5 for one way of re-chunking."""
    from ci_eval.gold.lifecycle import Targets, remap
    from ci_eval.inputs.manifest import read_manifest

    label, chunker = rechunk
    ids = _opaque(random.Random(seed + 2))
    new_pieces = [p for d in new_docs.values() for p in chunker(d, ids)]
    write_manifest(work / "new.jsonl", "v2", new_pieces, spans)
    new_index = read_manifest(str(work / "new.jsonl"))
    plan = remap(Targets(str(gold_path), new_index), write=False, accept_proposals=False,
                 record={"by": "benchmark", "at": "2026-01-01T00:00:00Z"})
    old_by_id = {p.id: p for p in old_pieces}
    new_by_doc: dict[str, list[Piece]] = {}
    for p in new_pieces:
        new_by_doc.setdefault(p.doc, []).append(p)
    truth = {m.old: truth_of(old_by_id[m.old], new_by_doc) for m in plan.mappings}
    by_edit: dict[str, list] = {}
    for m in plan.mappings:
        by_edit.setdefault(edits[old_by_id[m.old].doc], []).append(m)
    result = {"rechunk": label if spans else f"{label}, new manifest without doc and spans",
              "chunks_after": len(new_pieces), **_accuracy(plan.mappings, truth),
              "by_edit": {e: _accuracy(ms, truth) for e, ms in sorted(by_edit.items())}}
    if scored:
        result.update(_scores(gold_doc, new_pieces, new_index.ids, plan, truth))
    return result


def _scores(gold_doc, new_pieces, live, plan, truth) -> dict:
    questions = {q["id"]: q["question"] for q in gold_doc["questions"]}
    stale_gold = {q["id"]: set(q["gold"]) for q in gold_doc["questions"]}

    def relabel(mapping):
        return {qid: {n for g in gold for n in mapping.get(g, (g,))} & live for qid, gold in stale_gold.items()}

    index = bm25(new_pieces)
    return {"stale": scores(index, questions, {q: g & live for q, g in stale_gold.items()}),
            "remapped": scores(index, questions, relabel(plan.applied(False))),
            "remapped_with_proposals": scores(index, questions, relabel(plan.applied(True))),
            "truth": scores(index, questions, relabel(truth))}


def _pct(n: int, d: int) -> str:
    return f"{n / d:.1%}" if d else "-"


def _rows(results: list[dict]):
    for r in results:
        for sc in r["scenarios"]:
            yield r, sc


def markdown(results: list[dict]) -> str:
    out = ["| collection | re-chunked | docs (after) | chunks before -> after | questions | stale gold ids | "
           "automatic | proposed | unresolved |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r, sc in _rows(results):
        n = sc["gold_ids"]
        out.append(f"| {r['collection']} | {sc['rechunk']} | {r['docs']:,} ({r['docs_after']:,}) | "
                   f"{r['chunks_before']:,} -> {sc['chunks_after']:,} | {r['questions']} | {n} | "
                   f"{sc['automatic']} ({_pct(sc['automatic'], n)}) | {sc['proposed']} ({_pct(sc['proposed'], n)}) | "
                   f"{sc['unresolved']} ({_pct(sc['unresolved'], n)}; {sc['unresolved_truly_gone']} truly gone) |")
    out += ["", "| collection | re-chunked | document's edit | moved ids | automatic (of moved) | automatic right | "
            "wrong remaps written | proposals right |", "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r, sc in _rows(results):
        for edit, a in [*sc["by_edit"].items(), ("all", sc)]:
            out.append(f"| {r['collection']} | {sc['rechunk']} | {edit} | {a['moved']} | "
                       f"{a['automatic_of_moved']} ({_pct(a['automatic_of_moved'], a['moved'])}) | "
                       f"{a['automatic_exact']} of {a['automatic']} ({_pct(a['automatic_exact'], a['automatic'])}) | "
                       f"{a['automatic'] - a['automatic_exact']} | {a['proposed_right']} of {a['proposed']} |")
    out += ["", f"| collection | re-chunked | gold | MRR | hit@{K} |", "| --- | --- | --- | ---: | ---: |"]
    for r, sc in _rows(results):
        for key, label in (("stale", "(a) stale ids"), ("remapped", "(b) after remap (automatic)"),
                           ("remapped_with_proposals", "(b') after remap, proposals accepted"),
                           ("truth", "(c) relabelled from the true mapping")):
            if key in sc:
                mrr, hit = sc[key]
                out.append(f"| {r['collection']} | {sc['rechunk']} | {label} | {mrr:.3f} | {hit:.3f} |")
    return "\n".join(out)


def totals(results: list[dict]) -> dict:
    """The goals' three figures over every collection and cut with doc and spans."""
    keep = [sc for _, sc in _rows(results) if "without doc" not in sc["rechunk"]]
    auto, exact = sum(s["automatic"] for s in keep), sum(s["automatic_exact"] for s in keep)
    moved, of_moved = sum(s["moved"] for s in keep), sum(s["automatic_of_moved"] for s in keep)
    return {"automatic_right": exact / auto if auto else 1.0, "moved_automatic": of_moved / moved if moved else 1.0,
            "wrong_written": auto - exact}


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
    results = [measure(name, *loaded, max_docs=args.docs, max_queries=args.queries) for name, loaded in collections]
    goals = totals(results)
    print(json.dumps(results, indent=1) if args.json else markdown(results))
    print(f"\nwith doc and spans, every cut: {goals['automatic_right']:.2%} of automatic remaps right, "
          f"{goals['moved_automatic']:.2%} of moved ids automatic, {goals['wrong_written']} wrong remaps written",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
