"""One artefact's per-question metric values as one float table, not a dict per question.

A dict of ten metric values and its ten float objects take about 500 bytes a question;
the same values in a table row take 80. Version 2 rows are read straight into the table
(``MetricTable.add``); each ``QuestionResult`` keeps a ``MetricRow``, a read-only mapping
over its row, so every reader of ``QuestionResult.metrics`` sees the same values as the
dict it replaces: a metric the run did not record (``null`` in the row, or a question not
measured at all) is absent, NaN in the table.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from itertools import chain

import numpy as np

_NAN = float("nan")


class MetricTable:
    """Rows appended while reading (``add``), then ``finish``ed into a 2-D float array whose
    columns are the artefact's metrics in its order."""

    __slots__ = ("names", "where", "_flat", "_empty", "_rows", "values")

    def __init__(self, names):
        self.names = tuple(names)
        self.where = {name: j for j, name in enumerate(self.names)}
        self._flat = array("d")
        self._empty = [_NAN] * len(self.names)
        self._rows = 0
        self.values = None

    def add(self, values: list) -> MetricRow:
        """One question's values (one per name, None: not recorded; []: not measured)."""
        self.append(values)
        return MetricRow(self, self._rows - 1)

    def append(self, values: list) -> None:
        """``add`` without the row's mapping, for a reader that makes it only when asked
        (``row``)."""
        self._rows += 1
        if not values:
            self._flat.extend(self._empty)
        elif None in values:
            self._flat.extend([_NAN if v is None else v for v in values])
        else:
            self._flat.extend(values)

    def extend(self, rows) -> None:
        """``append`` of each of ``rows`` in turn: at once when no value is None."""
        full = [values or self._empty for values in rows]
        flat = list(chain.from_iterable(full))
        if None in flat:
            flat = [_NAN if v is None else v for v in flat]
        self._rows += len(rows)
        self._flat.extend(flat)

    def row(self, i: int) -> MetricRow:
        return MetricRow(self, i)

    def finish(self) -> MetricTable:
        self.values = np.frombuffer(self._flat, dtype=float).reshape(self._rows, len(self.names))
        return self

    def column(self, metric: str):
        """Every question's ``QuestionResult.value(metric)``: 0 where not recorded, and +0.0
        for -0.0 as ``value`` gives (adding 0.0 does that), so no difference of two columns
        is ever -0.0."""
        j = self.where.get(metric)
        if j is None:
            return np.zeros(self.values.shape[0])
        return np.nan_to_num(self.values[:, j], nan=0.0) + 0.0


class MetricRow(Mapping):
    """One question's recorded metric values, read from its table row."""

    __slots__ = ("_table", "_i")

    def __init__(self, table: MetricTable, i: int):
        self._table, self._i = table, i

    def _value(self, j: int) -> float:
        table = self._table
        if table.values is None:  # still reading
            return table._flat[self._i * len(table.names) + j]
        return float(table.values[self._i, j])

    def __getitem__(self, metric: str) -> float:
        j = self._table.where.get(metric)
        value = _NAN if j is None else self._value(j)
        if value != value:  # NaN: not recorded
            raise KeyError(metric)
        return value

    def get(self, metric: str, default=None):
        """``QuestionResult.value`` and ``hit`` ask this of every compared question: answered
        here without the KeyError that Mapping.get would raise and catch for a NaN."""
        j = self._table.where.get(metric)
        if j is None:
            return default
        value = self._value(j)
        return default if value != value else value

    def __iter__(self):
        return (name for name in self._table.names if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, metric) -> bool:
        j = self._table.where.get(metric)
        return j is not None and self._value(j) == self._value(j)

    def __repr__(self) -> str:
        return repr(dict(self))
