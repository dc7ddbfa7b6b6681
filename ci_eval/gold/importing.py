"""``ci-eval gold import``: judgements from TREC, BEIR or rows into a new or existing gold set."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.core.gold.interchange import ImportResult, at_sources, build_gold_document
from ci_eval.errors import InputError, InputErrors, UsageError
from ci_eval.gold import formats
from ci_eval.gold.store import read_gold, write_gold
from ci_eval.inputs.files import atomic_write

# How many source paths each format takes, and what they are.
SOURCES = {"trec": ("QRELS", "TOPICS"), "beir": ("FOLDER",), "csv": ("FILE",), "jsonl": ("FILE",)}


def read_questions(fmt: str, sources: list[str], *, split: str, field: str):
    if len(sources) != len(SOURCES[fmt]):
        raise UsageError(f"--format {fmt} takes {' '.join(SOURCES[fmt])} ({len(SOURCES[fmt])} "
                         f"path{'s' if len(SOURCES[fmt]) > 1 else ''}), got {len(sources)}")
    if fmt == "trec":
        return formats.read_trec(sources[0], sources[1], field)
    if fmt == "beir":
        return formats.read_beir(sources[0], split)
    return formats.read_rows(sources[0])


def _corpus_manifest(folder: str, version: str | None) -> str:
    lines = [json.dumps({"version": version})] if version else []
    lines += [json.dumps(e, ensure_ascii=False) for e in formats.beir_corpus_entries(folder)]
    return "\n".join(lines) + "\n"


def import_gold(fmt: str, sources: list[str], out: str, *, merge: bool, record: dict,
                split: str = "test", field: str = "title", index_version: str | None = None,
                manifest_out: str | None = None) -> ImportResult:
    """Read, check everything, then write the gold set (and for BEIR, the corpus as a
    JSON-lines manifest); nothing is written when anything is wrong."""
    if manifest_out and fmt != "beir":
        raise UsageError("--manifest-out is for --format beir (its corpus.jsonl)")
    exists = Path(out).exists()
    if exists and not merge:
        raise InputError("already exists; pass --merge to add the imported questions to it", out)
    if manifest_out and Path(manifest_out).exists():
        raise InputError("already exists; the manifest is never overwritten", manifest_out)
    questions = read_questions(fmt, sources, split=split, field=field)
    existing = read_gold(out)[0] if exists else None
    provenance = dict(record, method=f"imported from {fmt}", format=fmt, sources=list(sources))
    result = build_gold_document(questions, existing=existing, existing_source=out,
                                 provenance=provenance, index_version=index_version)
    manifest_text = _corpus_manifest(sources[0], index_version) if manifest_out else None
    from ci_eval.core.gold.goldset import parse_gold_set

    try:  # the whole set is valid before any file is written
        parse_gold_set(result.document, out)
    except InputErrors as exc:
        raise InputErrors(at_sources(exc.problems, result, len((existing or {}).get("questions", ())))) from None
    if manifest_text is not None:
        atomic_write(manifest_out, manifest_text)
    write_gold(out, result.document)
    return result
