"""A piece of row lines read with each ranking checked as text says what json's parse of the
piece and the per-row checks say: whatever it accepts is valid and holds the very fields and
ranking ids json gives, and the writer's plain rows are accepted. The rankings are written
as text, so they can hold what json.dumps never writes: escapes, whitespace, numbers such as
1e400, 01 or 1., pairs of other shapes, ids cut in the middle of a ``,[[``."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from v2_rows import METRICS, ROWS

from ci_eval.core.artefact.question_row import FIELD
from ci_eval.core.artefact.row_blocks import checked_block, row_acceptable
from ci_eval.core.artefact.row_text import block_of_lines


def compact(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _reject(name):
    raise ValueError(name)


PLAIN_IDS = st.sampled_from(["a", "b", "c", "é", "d,[[e", "x" * 1000, "🙂", "[", "]],[[", "a b"])
ID_TEXTS = (PLAIN_IDS.map(compact)
            | st.sampled_from(['"x\\"y"', '"\\u00e9"', '"\\\\"', '"a\\nb"', '"\\ud83d\\ude42"', '"a\tb"', '"a\x00"',
                               '"' + "x" * 1001 + '"', '"c",1],["d"', '"a,[["'])
            | st.text(max_size=4).map(compact))
NUMBER_TEXTS = st.sampled_from(["0.25", "1", "-0", "0", "-0.0", "1E+2", "1e-05", "2.5e99", "01", "1.", ".5", "-",
                                "1e400", "1e999", "-1e400", "123456789012345678901", "12345678901234567890.5",
                                "1" * 400, "1" * 400 + ".5", "true", "false", "null", "NaN", "Infinity", "[1]",
                                " 1", "1 ", "0.1e1", "1e+007", "00.5", "+1", "0x1", "1_0", "٣", "1.5e-324"])
NUMBER_TEXTS = NUMBER_TEXTS | st.floats(allow_nan=False, allow_infinity=False).map(repr) | st.integers(-5, 5).map(str)
PAIR_TEXTS = (st.builds("[{},{}]".format, ID_TEXTS, NUMBER_TEXTS)
              | st.builds("[{},{},{}]".format, ID_TEXTS, NUMBER_TEXTS, NUMBER_TEXTS)
              | st.builds("[{}]".format, ID_TEXTS) | NUMBER_TEXTS | st.just("[]")
              | st.builds("[ {} , {} ]".format, ID_TEXTS, NUMBER_TEXTS))
RANKING_TEXTS = st.lists(PAIR_TEXTS, max_size=5).map(lambda pairs: "[" + ",".join(pairs) + "]") | st.sampled_from(
    ["[]", "[ ]", "null", "{}", '"x"', "[[]]", '[["a",1],["a",2]]', '[["a",1] ,["b",2]]', "[[\"a\",1]]]"])


def _line(row: list, ranking: str) -> str:
    """A row line with its ranking written as ``ranking``."""
    head = compact(row[:FIELD["ranking"]])
    return "  " + head[:-1] + "," + ranking + "]"


def _plain_ranking(row: list) -> str:
    return compact(row[FIELD["ranking"]])


ROW_LINES = st.tuples(ROWS, st.none() | RANKING_TEXTS).map(
    lambda drawn: _line(drawn[0], _plain_ranking(drawn[0]) if drawn[1] is None else drawn[1]))


def _verdict(text: str):
    """What the read does with the piece without the scan: json's parse, then the per-row
    checks (a block's fields when every row passes)."""
    try:
        rows = json.loads("[" + text + "]", parse_constant=_reject)
    except (ValueError, RecursionError):
        return None
    if not rows or not all(row_acceptable(row, METRICS) is not None for row in rows):
        return None
    return checked_block(rows, METRICS)


def _same_block(scanned, parsed) -> None:
    ranking = FIELD["ranking"]
    assert scanned.fields[:ranking] == parsed.fields[:ranking]
    assert [list(ids) for ids in scanned.rankings] == [list(ids) for ids in parsed.rankings]
    assert scanned.ranking_lens == parsed.ranking_lens
    assert (scanned.gold_ids, scanned.gold_grades, scanned.gold_lens) == (
        parsed.gold_ids, parsed.gold_grades, parsed.gold_lens)


@settings(max_examples=1500, deadline=None)
@given(st.lists(ROW_LINES, min_size=1, max_size=4))
def test_what_the_scan_accepts_is_what_json_and_the_row_checks_accept(lines):
    text = ",\n".join(lines)
    scanned, parsed = block_of_lines(text, METRICS), _verdict(text)
    if scanned is not None:
        assert parsed is not None, text
        _same_block(scanned, parsed)


PLAIN_SCORES = st.integers(-10 ** 6, 10 ** 6) | st.floats(-1e6, 1e6).filter(lambda x: x == 0 or abs(x) >= 1e-4)


# an id holding ",[[" (the last in its line, so the cut is made in it) is left to the parse
WRITTEN_IDS = PLAIN_IDS.filter(lambda cid: ",[[" not in cid)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(ROWS, st.lists(st.tuples(WRITTEN_IDS, PLAIN_SCORES), max_size=6, unique_by=lambda p: p[0])),
                min_size=1, max_size=5))
def test_the_writers_rows_are_accepted_by_the_scan(drawn):
    lines = []
    for row, ranking in drawn:
        row[FIELD["ranking"]] = [list(pair) for pair in ranking]
        lines.append("  " + compact(row))
    text = ",\n".join(lines)
    parsed = _verdict(text)
    if parsed is None:
        assert block_of_lines(text, METRICS) is None
        return
    scanned = block_of_lines(text, METRICS)
    assert scanned is not None, text
    _same_block(scanned, parsed)


GOOD = ["q", "", [], False, "ok", [["g", 1]], [], [0.5, None, 1], 1, 0.5, 3.0, None, 0.2, None, [], []]


def _piece(*rankings: str) -> str:
    return ",\n".join(_line(GOOD, ranking) for ranking in rankings)


def test_each_kind_of_ranking_is_scanned_or_left_to_the_parse():
    scanned = ['[["g",0.5],["h",0.25]]', "[]", '[["g",1],["h",-0]]', '[["g",1E+2],["h",1e-05]]',
               '[["é",0.5],["🙂",1]]', '[["' + "x" * 1000 + '",0.5]]']
    for ranking in scanned:
        block = block_of_lines(_piece(ranking, '[["g",0.5]]'), METRICS)
        assert block is not None, ranking
        _same_block(block, _verdict(_piece(ranking, '[["g",0.5]]')))
    parsed_only = ['[["x\\"y",0.5]]', '[["\\u00e9",0.5]]', '[["g", 0.5]]', '[["g",1e+007]]', '[["g",0.5],[ "h",1]]',
                   '[["d,[[e",0.5]]']
    refused = ['[["g",1e400]]', '[["g",01]]', '[["g",1.]]', '[["g",true]]', '[["g",null]]', '[["g",[1]]]', '[["g",1,2]]', '[["g",1],["g",2]]',
               '[["' + "x" * 1001 + '",0.5]]', '[["a\tb",0.5]]']
    for ranking in parsed_only + refused:
        assert block_of_lines(_piece(ranking), METRICS) is None, ranking
    assert all(_verdict(_piece(r)) is not None for r in parsed_only)
    assert all(_verdict(_piece(r)) is None for r in refused)
