"""The comment's own table writer writes what tabulate's "github" format writes."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.report.markdown import TableLengths, _tabulated, table

# Cells as the comment has them (code spans, escaped text, arrows, dashes) and the edges:
# surrounding and unicode whitespace, wide and zero-width characters, pipes, empty cells.
CELL = st.text(alphabet=st.sampled_from(list("ab |`\\-—→ \t\u3000\xa0\u200b漢é*_<>")), max_size=12)
HEADERS = st.lists(st.sampled_from(["question", "first gold rank", "what happened", "tags", "a", ""]),
                   min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(HEADERS.flatmap(lambda h: st.tuples(st.just(h), st.lists(st.lists(CELL, min_size=len(h), max_size=len(h)),
                                                              max_size=6))))
def test_the_table_is_tabulates_byte_for_byte(case):
    headers, rows = case
    assert table(headers, rows) == _tabulated(headers, rows)


def test_cells_tabulate_lays_out_specially_still_go_through_it():
    headers, rows = ["a", "b"], [["two\nlines", "x"], ["\x1b[31mred\x1b[0m", "y"]]
    assert table(headers, rows) == _tabulated(headers, rows)
    assert "two" in table(headers, rows)


@settings(max_examples=300, deadline=None)
@given(HEADERS.flatmap(lambda h: st.tuples(st.just(h), st.lists(st.lists(CELL, min_size=len(h), max_size=len(h)),
                                                              max_size=8))),
       st.lists(st.integers(min_value=0, max_value=10), max_size=5))
def test_a_tables_length_is_counted_without_writing_it(case, limits):
    headers, rows = case
    lengths = TableLengths(headers, iter(rows))
    for n in limits + [len(rows), 0]:  # in any order, past the end too
        shown = rows[:n]
        assert lengths.length(n) == (len(table(headers, shown)) if shown else 0)


def test_a_row_tabulate_lays_out_is_not_counted_but_the_rows_before_it_are():
    headers, rows = ["a", "b"], [["x", "yy"], ["two\nlines", "z"]]
    lengths = TableLengths(headers, iter(rows))
    assert lengths.length(1) == len(table(headers, rows[:1]))
    assert lengths.length(2) is None


@settings(max_examples=300, deadline=None)
@given(HEADERS.flatmap(lambda h: st.tuples(st.just(h), st.lists(st.lists(CELL, min_size=len(h), max_size=len(h)),
                                                              max_size=8))),
       st.lists(st.tuples(st.integers(min_value=0, max_value=8), st.integers(min_value=-5, max_value=400)),
                max_size=6))
def test_a_length_over_a_room_may_stop_early_but_says_it_is_over(case, asks):
    headers, rows = case
    lengths = TableLengths(headers, iter(rows))
    for n, over in asks:
        n = min(n, len(rows))  # ``over`` is asked only of lengths the rows reach
        exact = len(table(headers, rows[:n])) if n else 0
        got = lengths.length(n, over)
        assert got == exact or (got > over and exact > over), (n, over, got, exact)
    # the rows counted are the rows written, however few were read to count them
    for n in (0, 1, len(rows) // 2, len(rows), len(rows) + 2):
        assert lengths.first(n) == rows[:n]
        assert lengths.length(min(n, len(rows))) == (len(table(headers, rows[:n])) if rows[:n] else 0)


def test_a_length_over_the_room_reads_no_row_past_the_one_that_shows_it():
    headers = ["a"]
    rows = [["x" * 10]] * 100
    read = []
    lengths = TableLengths(headers, (read.append(1) or r for r in rows))
    room = len(table(headers, rows[:10]))
    # once the first row has set the width, eleven rows are known to be over ten
    assert lengths.length(11, room) > room and len(read) == 1
    # 10 rows fit exactly: all ten are read to know it
    assert lengths.length(10, room) == room and len(read) == 10
    assert lengths.length(11, room) > room and len(read) == 10
