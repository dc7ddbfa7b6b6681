"""``ci-eval gold export``: a gold set written out as TREC or BEIR files."""

from __future__ import annotations

from pathlib import Path

from ci_eval.core.gold import interchange
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.files import atomic_write

TOPICS_FILES = {"tsv": "topics.tsv", "sgml": "topics.txt"}


def export_files(gold, fmt: str, split: str = "test", topics: str = "tsv") -> dict[str, str]:
    """Relative path -> text, for every file of the format."""
    if fmt == "trec":
        text = interchange.topics_sgml(gold) if topics == "sgml" else interchange.topics_text(gold)
        return {"qrels.txt": interchange.qrels_text(gold), TOPICS_FILES[topics]: text}
    return {"queries.jsonl": interchange.beir_queries(gold), f"qrels/{split}.tsv": interchange.beir_qrels(gold)}


def export(gold, fmt: str, out_dir: str, *, split: str = "test", topics: str = "tsv", force: bool = False,
           source: str = "gold set") -> list[str]:
    """Write the files into ``out_dir``; refuse before writing any if an id cannot be
    written in the format (every such id named at its place in ``source``), or if a file
    exists already and ``force`` is not given, so nothing is half-replaced."""
    problems = interchange.unwritable_ids(gold, fmt, source)
    if fmt == "trec" and topics == "sgml":
        problems += interchange.sgml_cannot_hold(gold, source)
    if problems:
        raise InputErrors(problems)
    files = {str(Path(out_dir) / rel): text for rel, text in export_files(gold, fmt, split, topics).items()}
    existing = [p for p in files if Path(p).exists()]
    if existing and not force:
        raise InputError("already exists; pass --force to replace it", existing[0])
    for path, text in files.items():
        atomic_write(path, text)
    return list(files)
