"""Reading judgements in other tools' formats into core.interchange.Imported questions.

- TREC: qrels (read by ci_eval.trec.parse) and topics, either TREC's SGML
  (``<top><num>..</num><title>..</title>...</top>``) or ``id<TAB>text`` lines;
- BEIR: a folder with ``queries.jsonl``, ``qrels/<split>.tsv`` and ``corpus.jsonl``;
- rows: CSV with a header (``question``, ``gold``, optional ``id`` and ``tags``) or JSON
  lines (``{"id"?, "question", "gold": [...] or {...}, "tags"?}``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

from ci_eval.core.gold.interchange import Imported
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.files import decode, read_bytes, read_json_lines, reject_lone_surrogates

# Tags alone, found by one left-to-right scan: a pattern spanning a whole <top> block
# (<top>(.*?)</top>) rescans the rest of the file from every unclosed <top>.
_TOP_TAG = re.compile(r"<(/?)top>", re.I)
_FIELD = re.compile(r"<(num|title|desc|narr)>(.*?)(?=<(?:/?(?:num|title|desc|narr))>|$)", re.S | re.I)


def _text(path: str, what: str) -> str:
    return decode(read_bytes(path, what), path)


def _line_at(text: str, at: int) -> str:
    return f"line {text.count(chr(10), 0, at) + 1}"


def _top_blocks(text: str, path: str) -> Iterator[str]:
    """The text inside each ``<top>...</top>``, in order; a tag out of turn (an unclosed
    <top>, a </top> without its <top>) is an error at its line."""
    opened = None
    for tag in _TOP_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if closing == (opened is None):
            what = "</top> without its <top>" if closing else "<top> before the previous topic's </top>"
            raise InputError(what, path, _line_at(text, tag.start()))
        if closing:
            yield text[opened:tag.start()]
            opened = None
        else:
            opened = tag.end()
    if opened is not None:
        raise InputError("<top> without its </top>", path, _line_at(text, opened))


def _sgml_topics(text: str, path: str, field: str) -> dict[str, tuple[str, str]]:
    topics: dict[str, tuple[str, str]] = {}
    for n, block in enumerate(_top_blocks(text, path), 1):
        fields = {k.lower(): " ".join(v.split()) for k, v in _FIELD.findall(block)}
        num = re.sub(r"^number:\s*", "", fields.get("num", ""), flags=re.I)
        body = re.sub(r"^(topic|description):\s*", "", fields.get(field, ""), flags=re.I)
        place = f"topic {n}"
        if not num:
            raise InputError("a topic without <num>", path, place)
        if not body:
            raise InputError(f"topic {num!r} has no <{field}> text", path, place)
        if num in topics:
            raise InputError(f"topic {num!r} appears twice (first at {topics[num][1]})", path, place)
        topics[num] = (body, place)
    return topics


def _tsv_topics(text: str, path: str) -> dict[str, tuple[str, str]]:
    topics: dict[str, tuple[str, str]] = {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        qid, tab, body = line.partition("\t")
        place = f"line {n}"
        if not tab or not qid.strip() or not body.strip():
            raise InputError("expected a topic id, a tab, and the topic's text", path, place)
        if qid.strip() in topics:
            raise InputError(f"topic {qid.strip()!r} appears twice (first at {topics[qid.strip()][1]})",
                             path, place)
        topics[qid.strip()] = (" ".join(body.split()), place)
    return topics


def read_topics(path: str, field: str = "title") -> dict[str, tuple[str, str]]:
    """``{topic id: (text, place)}`` from SGML topics or ``id<TAB>text`` lines."""
    text = _text(path, "topics file")
    topics = _sgml_topics(text, path, field) if _TOP_TAG.search(text) else _tsv_topics(text, path)
    if not topics:
        raise InputError("no topics found", path)
    return topics


def read_trec(qrels_path: str, topics_path: str, field: str = "title") -> list[Imported]:
    """One question per topic, in topics-file order."""
    from ci_eval.trec.parse import read_text_qrels_dict

    qrels, repeats = read_text_qrels_dict(qrels_path)
    topics = read_topics(topics_path, field)
    missing = [qid for qid in qrels if qid not in topics]
    if missing:
        raise InputError(f"{len(missing)} judged topic(s) have no text in {topics_path} "
                         f"(first: {missing[0]!r})", qrels_path, f"topic {missing[0]}")
    # A topic without judgements comes too, with none: the import counts it as left out.
    return [Imported(qid, text, tuple(qrels.get(qid, {}).items()), topics_path, place,
                     repeated=repeats.get(qid, 0))
            for qid, (text, place) in topics.items()]


def _jsonl(path: str, what: str) -> Iterator[tuple[str, object]]:
    for n, value in read_json_lines(path, what):
        try:  # "\ud800" alone parses, but no gold set or manifest could be written with it
            reject_lone_surrogates(value, path)
        except InputError as exc:
            where = "" if exc.place == "(top level)" else f".{exc.place}"
            raise InputError(exc.message, path, f"line {n}{where}") from None
        yield f"line {n}", value


# Whole numbers of up to 9 digits: the gold set's range (-1000..1000) is checked later, at
# the same place; int() of a 4,300-digit string would raise.
_GRADE = re.compile(r"-?\d{1,9}")


class _Judgements:
    """One question's (chunk id, grade) pairs as read, each with its place: the same id
    twice with the same grade is kept once and counted; with two grades, an error."""

    def __init__(self):
        self.pairs: dict[str, tuple[int, str]] = {}
        self.repeated = 0

    def add(self, cid: str, grade: int, path: str, place: str) -> None:
        first = self.pairs.get(cid)
        if first is None:
            self.pairs[cid] = (grade, place)
        elif first[0] == grade:
            self.repeated += 1
        else:
            raise InputError(f"chunk {cid!r} is judged {first[0]} at {first[1]} and {grade} here: "
                             "one grade per chunk", path, place)

    def gold(self) -> tuple[tuple[str, int], ...]:
        return tuple((cid, grade) for cid, (grade, _) in self.pairs.items())


def _beir_qrels(path: str) -> dict[str, _Judgements]:
    out: dict[str, _Judgements] = {}
    for n, line in enumerate(_text(path, "BEIR qrels").split("\n"), 1):
        parts = line.split("\t")
        if n == 1 and parts[:1] == ["query-id"] or not line.strip():
            continue
        if len(parts) != 3 or not parts[0] or not parts[1] or not _GRADE.fullmatch(parts[2].strip()):
            raise InputError("expected query-id<TAB>corpus-id<TAB>integer score (up to 9 digits)",
                             path, f"line {n}")
        out.setdefault(parts[0], _Judgements()).add(parts[1], int(parts[2]), path, f"line {n}")
    return out


def read_beir(folder: str, split: str = "test") -> list[Imported]:
    """The queries of ``qrels/<split>.tsv``, in queries.jsonl order."""
    root = Path(folder)
    queries_path, qrels_path = str(root / "queries.jsonl"), str(root / "qrels" / f"{split}.tsv")
    qrels = _beir_qrels(qrels_path)
    out, seen = [], set()
    for place, row in _jsonl(queries_path, "BEIR queries"):
        if not isinstance(row, dict) or not isinstance(row.get("_id"), str) or not isinstance(row.get("text"), str):
            raise InputError('expected {"_id": "...", "text": "..."}', queries_path, place)
        seen.add(row["_id"])
        if row["_id"] in qrels:
            judged = qrels[row["_id"]]
            out.append(Imported(row["_id"], row["text"], judged.gold(), queries_path, place,
                                repeated=judged.repeated))
    missing = [q for q in qrels if q not in seen]
    if missing:
        raise InputError(f"{len(missing)} judged quer(ies) are not in queries.jsonl (first: {missing[0]!r})",
                         qrels_path, f"query {missing[0]}")
    return out


def beir_corpus_entries(folder: str) -> Iterator[dict]:
    """corpus.jsonl as manifest entries: one chunk per document, its title and text."""
    path = str(Path(folder) / "corpus.jsonl")
    seen: dict[str, str] = {}
    for place, row in _jsonl(path, "BEIR corpus"):
        if not isinstance(row, dict) or not isinstance(row.get("_id"), str) or not isinstance(row.get("text"), str):
            raise InputError('expected {"_id": "...", "text": "..."}', path, place)
        if row.get("title") is not None and not isinstance(row["title"], str):
            raise InputError('"title" must be text', path, f"{place}.title")
        if row["_id"] in seen:  # a manifest names each chunk once
            raise InputError(f"document {row['_id']!r} appears twice (first at {seen[row['_id']]})", path, place)
        seen[row["_id"]] = place
        text = "\n\n".join(t for t in (row.get("title") or "", row["text"]) if t)
        yield {"id": row["_id"], "doc": row["_id"], "text": text}


def _parse_gold_cell(cell: str, path: str, place: str) -> _Judgements:
    judged = _Judgements()
    for item in (p.strip() for p in cell.split(";")):
        if not item:
            continue
        cid, eq, grade = item.rpartition("=") if "=" in item else (item, "", "1")
        if not _GRADE.fullmatch(grade.strip()) or not cid.strip():
            raise InputError(f"gold entry {_clip(item)}: expected an id or id=grade (a whole number of "
                             "up to 9 digits)", path, f"{place}.gold")
        judged.add(cid.strip(), int(grade), path, f"{place}.gold")
    return judged


def _clip(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(f"{text[:40]}...{text[-10:]}")


def _gold_of(gold, path: str, place: str) -> _Judgements:
    if isinstance(gold, str):
        return _parse_gold_cell(gold, path, place)
    judged = _Judgements()
    if isinstance(gold, list) and all(isinstance(g, str) and g for g in gold):
        for g in gold:
            judged.add(g, 1, path, f"{place}.gold")
    elif isinstance(gold, dict) and all(type(v) is int for v in gold.values()):
        for g, v in gold.items():
            judged.add(g, v, path, f"{place}.gold")
    else:
        raise InputError('"gold" must be chunk ids (a list, an id-to-grade object, or "a;b=2")',
                         path, f"{place}.gold")
    return judged


def _tags_of(tags, path: str, place: str) -> tuple[str, ...]:
    if isinstance(tags, str):
        return tuple(t.strip() for t in tags.split(";") if t.strip())
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        return tuple(tags)
    raise InputError('"tags" must be a list of strings (or "a;b" in a CSV cell)', path, f"{place}.tags")


def _row(raw: dict, n: int, path: str, place: str) -> Imported:
    question, qid = raw.get("question"), raw.get("id") or f"q{n}"
    if not isinstance(question, str) or not question.strip():
        raise InputError('"question" must be non-empty text', path, f"{place}.question")
    if not isinstance(qid, str):
        raise InputError('"id" must be a string', path, f"{place}.id")
    judged = _gold_of(raw.get("gold"), path, place)
    tags = () if raw.get("tags") is None else _tags_of(raw["tags"], path, place)
    return Imported(qid, " ".join(question.split()), judged.gold(), path, place, tags, judged.repeated)


def _csv_items(path: str) -> list:
    reader = csv.DictReader(io.StringIO(_text(path, "rows file"), newline=""))
    try:
        if not reader.fieldnames or not {"question", "gold"} <= set(reader.fieldnames):
            raise InputError("the header must name the columns question and gold (id, tags optional)",
                             path, "line 1")
        return [(reader.line_num, f"line {reader.line_num}", dict(r)) for r in reader]
    except csv.Error as exc:  # a cell over the csv module's 128 KiB, a NUL byte
        # line_num counts the lines of the rows read whole; the bad one starts after them
        raise InputError(f"invalid CSV: {exc}", path, f"line {reader.line_num + 1}") from None


def read_rows(path: str) -> list[Imported]:
    """CSV (by the ``.csv`` suffix) or JSON-lines rows of question and gold ids."""
    if path.lower().endswith(".csv"):
        items = _csv_items(path)
    else:
        items = []
        for i, (place, row) in enumerate(_jsonl(path, "rows file"), 1):
            if not isinstance(row, dict):
                raise InputError("expected an object with question and gold", path, place)
            items.append((i, place, row))
    problems, out = [], []
    for n, place, raw in items:
        try:
            out.append(_row(raw, n, path, place))
        except InputError as exc:
            problems.append(exc)
    if problems:
        raise InputErrors(problems)
    return out
