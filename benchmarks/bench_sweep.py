"""`ci-eval sweep` on the two shared collections: three chunkings, BM25 and BM25 fused by
reciprocal rank with a second tokenisation, one table per collection; then two re-chunk
pull requests through `ci-eval compare`.

For Cranfield and Vaswani (from ../shared/collections beside the checkout):

1. every document is cut into windows of 250, 500 and 1,000 characters overlapping by a
   fifth, each cut moved back to a space; chunk ids are random hex that carry no information
   (a fresh draw per chunking), and the manifest gives each chunk's document and offsets;
2. the document-level qrels are resolved per chunking: every chunk of a relevant document is
   relevant at the document's grade (one gold set per chunking, the same questions); each
   question also carries its relevant documents as span evidence (the whole document at
   its grade), so the rows measure evidence_recall@5 and evidence_precision@5, which do not
   depend on the chunk size;
3. six configurations (3 chunkings x {bm25, bm25 + rrf}), one sweep: `ci-eval sweep c*.toml`
   prints the table, the first row (250 characters, BM25) the reference;
4. a rename-only re-chunk PR: the 500-character index under new ids, the gold set carried
   by `ci-eval gold remap --write`; `ci-eval compare` says "No change";
5. the same PR with a planted loss of evidence on 10 % of the questions (those chunks never
   found for those questions): the comparison's regressions are exactly those questions.

Run: ``python benchmarks/bench_sweep.py`` (prints the tables of docs/sweep.md);
``--collections cranfield`` for one, ``--keep DIR`` to keep the work folder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "collections"
SIZES = (250, 500, 1000)
FUSIONS = ("none", "rrf")
K = 5
LOST_SHARE = 0.10
PR_SIZE = 500
# The table's columns: the seeds' two, then the evidence the top 5 chunks hold.
HEADLINE = ("recall@5", "mrr", "evidence_recall@5", "evidence_precision@5")


@dataclass(frozen=True)
class Collection:
    name: str
    docs: dict  # doc id -> text
    queries: dict  # query id -> text
    qrels: dict  # query id -> {doc id: grade}, grade >= 1 only


def _qrels(path: Path) -> dict:
    out: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) >= 1:
            out.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return out


def load(name: str, root: Path = SHARED) -> Collection:
    if name == "cranfield":
        base = root / "cranfield" / "derived"
        docs = {}
        for line in (base / "docs.tsv").read_text(encoding="utf-8").splitlines():
            did, _title, text = line.split("\t")
            docs[did] = text
        queries = {}
        for line in (base / "queries.tsv").read_text(encoding="utf-8").splitlines():
            if line.strip():
                qid, _original, text = line.split("\t")
                queries[qid] = text
        return Collection(name, docs, queries, _qrels(base / "cranqrel.gain.trec"))
    base = root / "vaswani_npl"
    text = (base / "doc-text.trec").read_text(encoding="utf-8")
    docs = {m.group(1).strip(): " ".join(m.group(2).split())
            for m in re.finditer(r"<DOCNO>(.*?)</DOCNO>(.*?)</DOC>", text, re.S)}
    topics = (base / "query-text.trec").read_text(encoding="utf-8")
    queries = {m.group(1).strip(): " ".join(m.group(2).split()).lower()
               for m in re.finditer(r"<num>(.*?)</num><title>(.*?)</title>", topics, re.S)}
    return Collection(name, docs, queries, _qrels(base / "qrels"))


def windows(text: str, size: int) -> list[tuple[int, int]]:
    """Spans of about ``size`` characters overlapping by a fifth, each end moved back to a
    space (unless that would halve the window), each start forward to a word's start."""
    spans, start, overlap = [], 0, size // 5
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > start else end
        spans.append((start, end))
        if end >= len(text):
            break
        nxt = max(end - overlap, start + 1)
        while nxt < end and text[nxt - 1] != " ":
            nxt += 1
        start = nxt
    return spans


def write_chunking(c: Collection, size: int, folder: Path, salt: str = "", evidence: bool = False) -> dict:
    """The manifest and the resolved gold set of one chunking (``evidence``: each question's
    relevant documents as whole-document spans too); ``{doc: [chunk ids]}`` back."""
    pieces = [(doc, s, e) for doc, text in c.docs.items() for s, e in windows(text, size)]
    ids = _random_ids(f"{c.name}-{size}", len(pieces))
    if salt:
        # New ids in the old ids' order: BM25's ties are broken by id, so a rename that
        # reordered tied chunks would be a real change of the rankings, not a rename only.
        fresh = iter(sorted(_random_ids(f"{c.name}-{size}-{salt}", len(pieces))))
        renamed = {old: next(fresh) for old in sorted(ids)}
        ids = [renamed[old] for old in ids]
    by_doc: dict = {}
    version = f"{c.name}-c{size}{salt}"
    with open(folder / f"index-c{size}{salt}.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"version": version}) + "\n")
        for cid, (doc, s, e) in zip(ids, pieces):
            by_doc.setdefault(doc, []).append(cid)
            f.write(json.dumps({"id": cid, "doc": doc, "start": s, "end": e, "text": c.docs[doc][s:e]}) + "\n")
    questions = [{"id": f"q{qid}", "question": c.queries[qid],
                  "gold": {cid: grade for doc, grade in sorted(c.qrels[qid].items()) for cid in by_doc.get(doc, ())}}
                 for qid in c.queries if c.qrels.get(qid)]
    if evidence:
        for q in questions:
            q["evidence"] = [{"doc": doc, "start": 0, "end": len(c.docs[doc]), "grade": grade}
                             for doc, grade in sorted(c.qrels[q["id"][1:]].items()) if c.docs.get(doc)]
    gold = {"schema_version": 1, "index_version": version, "questions": questions}
    (folder / f"gold-c{size}{salt}.json").write_text(json.dumps(gold), encoding="utf-8")
    return by_doc


def _random_ids(seed: str, count: int) -> list[str]:
    return [f"k{n:07x}" for n in random.Random(seed).sample(range(16 ** 7), count)]


def write_config(folder: Path, name: str, size: int, fusion: str, salt: str = "", metrics=(), **extra) -> Path:
    params = {"manifest": str(folder / f"index-c{size}{salt}.jsonl"), "fusion": fusion, **extra}
    shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
    path = folder / f"{name}.toml"
    listed = f"metrics = {json.dumps(list(metrics))}\n" if metrics else ""
    path.write_text(f'gold_set = "gold-c{size}{salt}.json"\nk = {K}\n{listed}\n[retriever]\ntype = "python"\n'
                    f'target = "sweep_bm25:search"\nparams = {{ {shown} }}\n\n'
                    f'[index]\nmanifest = "index-c{size}{salt}.jsonl"\n', encoding="utf-8")
    return path


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "benchmarks"), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, env=env, check=False)


def _ok(done: subprocess.CompletedProcess, *codes: int) -> subprocess.CompletedProcess:
    if done.returncode not in (codes or (0,)):
        raise SystemExit(f"{' '.join(map(str, done.args[2:]))} exited {done.returncode}:\n{done.stderr}")
    return done


def configs(c: Collection, folder: Path) -> list[Path]:
    """The six configurations, in the table's order: chunk size, then fusion."""
    from ci_eval.core.measure.names import default_metrics

    for size in SIZES:
        write_chunking(c, size, folder, evidence=True)
    metrics = [*default_metrics(K), *HEADLINE[2:]]
    return [write_config(folder, f"c{size}-{'bm25' if f == 'none' else 'bm25+rrf'}", size, f, metrics=metrics)
            for size in SIZES for f in FUSIONS]


def sweep(folder: Path, paths: list[Path], fmt: str = "markdown") -> subprocess.CompletedProcess:
    return _ok(cli("sweep", *[p.name for p in paths], "--dir", "rows", "--format", fmt, "--quiet",
                   "--metrics", ",".join(HEADLINE), cwd=folder))


def _compare(folder: Path, base: str, head: str) -> dict:
    """`ci-eval compare`'s JSON report, and the PR comment it would post under "comment"."""
    report = folder / f"report-{Path(head).stem}.json"
    comment = _ok(cli("compare", base, head, "--no-config", "--max-drop", "mrr=0.05", "--json-out", report.name,
                      cwd=folder), 0, 1).stdout
    return {**json.loads(report.read_text(encoding="utf-8")), "comment": comment}


def rechunk_prs(c: Collection, folder: Path) -> dict:
    """The two re-chunk pull requests of the 500-character BM25 configuration: renamed ids
    only, then the same with a planted loss of evidence. Their comparisons and what was
    planted back."""
    folder.mkdir(parents=True, exist_ok=True)
    write_chunking(c, PR_SIZE, folder)
    renamed = "-renamed"
    write_chunking(c, PR_SIZE, folder, salt=renamed)
    write_config(folder, "base", PR_SIZE, "none")
    _ok(cli("gold", "anchor", "--gold", f"gold-c{PR_SIZE}.json", "--manifest", f"index-c{PR_SIZE}.jsonl", cwd=folder))
    head_gold = folder / f"gold-c{PR_SIZE}{renamed}.json"
    shutil.copy(folder / f"gold-c{PR_SIZE}.json", head_gold)  # the branch carries the base's gold set
    _ok(cli("gold", "remap", "--gold", head_gold.name, "--manifest", f"index-c{PR_SIZE}{renamed}.jsonl",
            "--write", "--accept-proposals", "--by", "bench", cwd=folder))
    write_config(folder, "head", PR_SIZE, "none", salt=renamed)
    _ok(cli("run", "--config", "base.toml", "--out", "base.json", "--quiet", cwd=folder))
    _ok(cli("run", "--config", "head.toml", "--out", "head.json", "--quiet", cwd=folder))
    found = _found_at_k(folder / "base.json")
    rng = random.Random(f"{c.name}-lost")
    planted = sorted(rng.sample(found, round(LOST_SHARE * _questions(folder / "base.json"))))
    gold = {q["id"]: q for q in json.loads(head_gold.read_text(encoding="utf-8"))["questions"]}
    lose = {gold[qid]["question"]: sorted(gold[qid]["gold"]) for qid in planted}
    (folder / "lose.json").write_text(json.dumps(lose), encoding="utf-8")
    write_config(folder, "head-lost", PR_SIZE, "none", salt=renamed, lose=str(folder / "lose.json"))
    _ok(cli("run", "--config", "head-lost.toml", "--out", "head-lost.json", "--quiet", cwd=folder))
    return {"rename": _compare(folder, "base.json", "head.json"),
            "lost": _compare(folder, "base.json", "head-lost.json"), "planted": planted}


def _questions(path: Path) -> int:
    from ci_eval.inputs.artefact_file import read_run

    return int(read_run(path).measured_mask().sum())


def _found_at_k(path: Path) -> list[str]:
    """The questions whose base run has a relevant chunk in the top k: losing their evidence
    is a loss the comparison must see."""
    from ci_eval.inputs.artefact_file import read_run

    run = read_run(path)
    hit = run.column(f"hit@{K}")
    return [qid for qid, h, m in zip(run.columns.ids, hit.tolist(), run.measured_mask().tolist()) if m and h == 1.0]


def run_collection(name: str, work: Path, shared: Path = SHARED) -> dict:
    c = load(name, shared)
    folder = work / name
    folder.mkdir(parents=True)
    paths = configs(c, folder)
    start = time.perf_counter()
    table = sweep(folder, paths)
    swept = time.perf_counter() - start
    start = time.perf_counter()
    again = sweep(folder, paths)
    cached = time.perf_counter() - start
    assert again.stdout == table.stdout
    prs = rechunk_prs(c, work / f"{name}-pr")
    return {"collection": c, "table": table.stdout, "seconds": (swept, cached), "prs": prs,
            "command": f"ci-eval sweep {' '.join(p.name for p in paths)} --dir rows --metrics {','.join(HEADLINE)}"}


def _report(result: dict) -> str:
    c, prs = result["collection"], result["prs"]
    rename, lost = prs["rename"], prs["lost"]
    regressed = sorted(q["id"] for q in lost["regressions"])
    swept, cached = result["seconds"]
    return "\n".join([
        f"### {c.name} ({len(c.docs):,} documents, {sum(1 for q in c.queries if c.qrels.get(q))} judged queries)",
        "", f"`{result['command']}`:", "", result["table"].rstrip(), "",
        f"The sweep took {swept:.1f} s; run again, every row answered from the retrieval cache, {cached:.1f} s.",
        "", f"Rename-only re-chunk PR (c{PR_SIZE}, every id renamed, `gold remap --write`): "
            f"{rename['comment'].splitlines()[1]}",
        f"Planted loss on {len(prs['planted'])} questions (10 %): {len(regressed)} regressions, "
        f"{'exactly the planted questions' if regressed == prs['planted'] else 'NOT the planted set'}.", ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", nargs="+", default=["cranfield", "vaswani_npl"])
    parser.add_argument("--keep", metavar="DIR", help="work in DIR (kept) instead of a temporary folder")
    parser.add_argument("--shared", metavar="DIR", default=str(SHARED), help="the collections (default: %(default)s)")
    args = parser.parse_args(argv)
    if not Path(args.shared).is_dir():
        print(f"needs the shared collections at {args.shared}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        for name in args.collections:
            print(_report(run_collection(name, work, Path(args.shared))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
