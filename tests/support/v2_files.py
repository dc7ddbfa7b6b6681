"""Version 2 artefact files as the writer lays them out, for tests that read real files."""

from __future__ import annotations

from array import array

import numpy as np
from factories import artefact, as_v2

from ci_eval.core.artefact.artefact_writer import END_KEYS, artefact_pieces


def write_v2(path, specs: list[dict], **kw) -> None:
    """The artefact of ``specs`` (factories.artefact's keywords in ``kw``) written by the
    writer's own pieces (core/artefact/artefact_writer.py)."""
    data = as_v2(artefact(specs, **kw))
    head = {k: v for k, v in data.items() if k not in END_KEYS | {"questions", "question_fields"}}
    end = {k: v for k, v in data.items() if k in END_KEYS}
    path.write_text("".join(artefact_pieces(head, data["questions"], lambda: end)), encoding="utf-8")


def out_of_range(path) -> int:
    """Make the first metric value of each row whose stale list is empty and whose first two
    values are 1 out of range (2.5): several problems in one file. How many rows it changed."""
    with open(path, "rb") as f:
        bad = f.read().replace(b"[],[1,1,", b"[],[2.5,1,")
    with open(path, "wb") as f:
        f.write(bad)
    return bad.count(b"[2.5,")


def assert_same_columns(a, b) -> None:
    """Every field of two artefacts' question columns, and their metric tables, equal."""
    ca, cb = a.columns, b.columns
    fields = set(vars(ca)) - {"strings", "table"}
    assert fields == set(vars(cb)) - {"strings", "table"}
    for name in sorted(fields):
        x, y = getattr(ca, name), getattr(cb, name)
        if isinstance(x, array) and x.typecode == "d":  # NaN stands for None
            assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True), name
        else:
            assert x == y, name
    ta, tb = ca.table, cb.table
    assert ta.names == tb.names and ta.where == tb.where and ta.values.dtype == tb.values.dtype
    assert np.array_equal(ta.values, tb.values, equal_nan=True) and ta.values.shape == (len(ca), len(ta.names))
    assert a == b and a.config == b.config and a.depth == b.depth
