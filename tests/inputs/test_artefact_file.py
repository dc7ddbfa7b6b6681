"""Reading a run artefact file into the typed artefact: version 2 by its line layout, with a
full parse behind it that accepts any layout and words every refusal."""

from __future__ import annotations

import json

import pytest
from factories import artefact, as_v2, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.artefact.artefact import dumps, read_artefact
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs import artefact_file
from ci_eval.inputs.artefact_file import read_run, run_from_bytes
from ci_eval.inputs.files import decode, parse_json
from ci_eval.inputs.loaders import _checked_artefact

SPECS = [spec("q1", {"a": 2, "b": 1}, ["b", "x", "a"], tags=["faq"]), spec("q2", ["g"], at(3)),
         spec("q3", ["g"], error="timeout after 30 s"), spec("u1", unanswerable=True, ranking=["z"]),
         spec("s1", ["g", "h"], at(2, "h"), stale=["g"])]
LATER = ("cache", "summary")  # keys the writer knows only once the questions are done


def compact(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def writer_layout(data: dict) -> bytes:
    """docs/artefact.md's layout of a version 2 artefact: the keys known before retrieval, one a
    line and sorted, the rows one a line, then the keys known at the end."""
    before = [f" {compact(k)}: {compact(data[k])}," for k in sorted(data) if k not in LATER + ("questions",)]
    rows = [f"  {compact(row)}," for row in data["questions"]]
    if rows:
        rows[-1] = rows[-1][:-1]
    after = [f" {compact(k)}: {compact(data[k])}," for k in sorted(data) if k in LATER]
    after[-1] = after[-1][:-1]
    return "\n".join(["{", *before, ' "questions": [', *rows, " ],", *after, "}"]).encode() + b"\n"


def full_parse(raw: bytes, source: str = "a.json"):
    return read_artefact(_checked_artefact(parse_json(decode(raw, source), source), source))


def test_the_writers_layout_is_read_a_row_at_a_time(monkeypatch):
    data = as_v2(artefact(SPECS))
    raw = writer_layout(data)
    fast = artefact_file._by_lines(raw, "a.json", 0)
    assert fast is not None  # the line path took it
    assert fast == full_parse(raw) == read_artefact(artefact(SPECS))
    assert [q.top for q in fast.questions] == [q.top for q in read_artefact(artefact(SPECS)).questions]


@pytest.mark.parametrize("layout", ["sorted dumps", "questions last", "indented", "one line", "no questions",
                                    "a row over two lines"])
def test_any_layout_of_the_same_content_reads_the_same(layout):
    data = as_v2(artefact(SPECS))
    if layout == "sorted dumps":
        raw = dumps(data).encode()  # every key sorted, the rows between them
    elif layout == "questions last":
        rest = {k: v for k, v in data.items() if k != "questions"}
        raw = dumps(rest).encode().replace(b"\n}", b',\n "questions": [\n  '
                                           + b",\n  ".join(compact(r).encode() for r in data["questions"])
                                           + b"\n ]\n}")
    elif layout == "indented":
        raw = json.dumps(data, indent=2).encode()
    elif layout == "one line":
        raw = compact(data).encode()
    elif layout == "a row over two lines":
        raw = writer_layout(data).replace(b'["q2",', b'["q2",\n', 1)
    else:
        data = as_v2(artefact([]))
        raw = writer_layout(data)
    assert run_from_bytes(raw, "a.json") == full_parse(raw)
    if layout in ("sorted dumps", "questions last", "no questions"):
        assert artefact_file._by_lines(raw, "a.json", 0) is not None


def _messages(raw: bytes) -> list[str]:
    try:
        run_from_bytes(raw, "a.json")
    except InputErrors as exc:
        return [str(p) for p in exc.problems]
    except InputError as exc:
        return [str(exc)]
    raise AssertionError("accepted")


def _full_messages(raw: bytes) -> list[str]:
    try:
        full_parse(raw)
    except InputErrors as exc:
        return [str(p) for p in exc.problems]
    except InputError as exc:
        return [str(exc)]
    raise AssertionError("the full parse accepted it")


HOSTILE = {
    "a key twice in the header": lambda d, raw: raw.replace(b'"config": {', b'"config": {"k": 1, ', 1),
    "questions twice": lambda d, raw: raw.replace(b' "summary"', b' "questions": [],\n "summary"'),
    "NaN in a row": lambda d, raw: raw.replace(b"[1,1,0.4,", b"[NaN,1,0.4,", 1),
    "a score overflowing to inf": lambda d, raw: raw.replace(b'["x",9.75]', b'["x",1e999]', 1),
    "a lone surrogate in a row": lambda d, raw: raw.replace(b'"What about q1?"', b'"\\ud800"'),
    "an object in a row": lambda d, raw: raw.replace(b'["faq"]', b'[{"t":1,"t":2}]'),
    "a trailing comma after the last row": lambda d, raw: raw.replace(b"]\n ],", b"],\n ],"),
    "a missing comma between rows": lambda d, raw: raw.replace(b"],\n  [\"q2\"", b"]\n  [\"q2\"", 1),
    "a chunk twice in gold": lambda d, raw: raw.replace(b'[["a",2],["b",1]]', b'[["a",2],["a",1]]'),
    "a question id twice": lambda d, raw: raw.replace(b'["q2",', b'["q1",', 1),
    "a value out of range": lambda d, raw: raw.replace(b"[1,1,0.4,", b"[2.5,1,0.4,", 1),
    "not UTF-8": lambda d, raw: raw.replace(b"What about q2?", b"What \xff q2?"),
    "a byte order mark": lambda d, raw: b"\xef\xbb\xbf" + raw.replace(b'"ok"', b'"fine"', 1),
    "the metrics named again after the rows": lambda d, raw: raw.replace(b' "summary"', b' "metrics": [],\n "summary"'),
    "the list closed twice": lambda d, raw: raw.replace(b"]\n ],", b"]\n ],\n ],", 1),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_input_is_refused_in_the_full_parses_words(case):
    data = as_v2(artefact(SPECS))
    raw = writer_layout(data)
    bad = HOSTILE[case](data, raw)
    assert bad != raw, "the mutation did not apply"
    assert _messages(bad) == _full_messages(bad)
    assert all(m.startswith("a.json:") for m in _messages(bad))


def test_a_file_is_read_with_its_size_limit_and_the_base_deep_enough(tmp_path):
    path = tmp_path / "base.json"
    path.write_bytes(writer_layout(as_v2(artefact(SPECS, k=2))))
    assert read_run(path).depth == 2 and read_run(path, top=5).depth == 5
    with pytest.raises(InputError, match="over the 100-byte limit"):
        read_run(path, max_bytes=100)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_a_file_read_in_chunks_of_any_size_reads_as_the_whole(tmp_path, monkeypatch, chunk):
    """Blocks of lines cut anywhere in the file, a row or a line split over two chunks."""
    from ci_eval.inputs import files

    monkeypatch.setattr(files, "_READ_CHUNK", chunk)
    raw = writer_layout(as_v2(artefact(SPECS)))
    path = tmp_path / "a.json"
    path.write_bytes(raw)
    read = artefact_file._by_lines(files.read_blocks(path, "run artefact"), "a.json", 0)
    assert read is not None  # the line path took it
    assert read == full_parse(raw) == read_run(path)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_input_read_in_small_chunks_is_refused_in_the_same_words(tmp_path, monkeypatch, case):
    from ci_eval.inputs import files

    monkeypatch.setattr(files, "_READ_CHUNK", 5)
    bad = HOSTILE[case](None, writer_layout(as_v2(artefact(SPECS))))
    path = tmp_path / "a.json"
    path.write_bytes(bad)
    with pytest.raises((InputError, InputErrors)) as refused:
        read_run(path)
    problems = refused.value.problems if isinstance(refused.value, InputErrors) else [refused.value]
    assert [str(p).replace(str(path), "a.json", 1) for p in problems] == _full_messages(bad)


def test_integral_values_written_as_integers_read_as_their_floats():
    """The writer puts 1 for 1.0 in a row's metric values: the line path takes the row, reads
    the same artefact as with the values written as floats, and holds floats."""
    raw = writer_layout(as_v2(artefact(SPECS)))
    as_floats = raw.replace(b"[1,1,0.4,", b"[1.0,1.0,0.4,", 1)
    assert as_floats != raw, "the mutation did not apply"
    read = artefact_file._by_lines(raw, "a.json", 0)
    assert read is not None and read == artefact_file._by_lines(as_floats, "a.json", 0) == full_parse(raw)
    assert all(isinstance(v, float) for q in read.questions for v in q.metrics.values())


def test_an_artefact_read_after_another_shares_its_id_strings(tmp_path):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    base.write_bytes(writer_layout(as_v2(artefact(SPECS))))
    head.write_bytes(writer_layout(as_v2(artefact(SPECS[1:]))))
    b = read_run(base)
    h = read_run(head, shared=b)
    assert h == read_run(head)  # the same artefact, its strings shared
    assert all(x is y for x, y in zip(h.columns.ids, b.columns.ids[1:]))
    assert not any(x is y for x, y in zip(read_run(head).columns.ids, b.columns.ids[1:]))


# q1's ranking entry ["x",9.75] written another way: what the reader takes from the file is
# what the full parse takes, or is refused in the full parse's words.
RANKING_ENTRIES = {
    "an escaped quote in an id": b'["x\\"y",9.75]', "a \\u escape in an id": b'["\\u00e9",9.75]',
    "an id holding ,[[": b'["d,[[e",9.75]', "a non-ASCII id": b'["\xc3\xa9\xf0\x9f\x99\x82",9.75]',
    "an id of 1,000 characters": b'["' + b"x" * 1000 + b'",9.75]', "minus zero": b'["x",-0]',
    "an exponent": b'["x",1E+2]', "a small exponent": b'["x",1e-05]', "whitespace": b'[ "x" , 9.75 ]',
    "an id of 1,001 characters": b'["' + b"x" * 1001 + b'",9.75]', "a raw control character": b'["x\x01",9.75]',
    "1e400": b'["x",1e400]', "a leading zero": b'["x",01]', "a point with no digit after it": b'["x",1.]',
    "a bool": b'["x",true]', "a null": b'["x",null]', "a nested list": b'["x",[1]]', "three entries": b'["x",9.75,1]',
    "an id twice": b'["b",9.75]', "an integer past the largest float": b'["x",' + b"9" * 400 + b"]",
}


@pytest.mark.parametrize("case", sorted(RANKING_ENTRIES))
def test_a_ranking_written_another_way_reads_as_the_full_parse_reads_it(case):
    raw = writer_layout(as_v2(artefact(SPECS)))
    changed = raw.replace(b'["x",9.75]', RANKING_ENTRIES[case], 1)
    assert changed != raw, "the mutation did not apply"
    try:
        expected = full_parse(changed)
    except (InputError, InputErrors):
        assert _messages(changed) == _full_messages(changed)
        return
    assert run_from_bytes(changed, "a.json") == expected


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("field", ["k", "judged_at_k"])
def test_a_k_past_its_bound_is_refused_by_the_reader_compare_and_the_poster_share(version, field):
    data = artefact([spec("q1", ["a"], ["a", "b"])], k=2)
    if field == "k":
        data["k"] = 2 ** 63
    else:
        data["summary"]["judged_at_k"] = {"k": 2 ** 63, "mean": 0.5}
    data = as_v2(data) if version == 2 else data
    with pytest.raises(InputError) as refused:
        run_from_bytes(json.dumps(data).encode(), "fork.json")
    assert "9223372036854775808 is out of range" in str(refused.value)
