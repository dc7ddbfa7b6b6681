"""A base and a head artefact read for ``compare``: the base first, then the head sharing
its id strings (base and head name mostly the same ids).

They are read one after the other. Reading the base in a forked child at the same time
bought nothing measurable (docs/benchmarks.md, "Speed mechanisms, measured") and was removed.
"""

from __future__ import annotations

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.inputs.artefact_file import read_run


def read_pair(base_path: str | None, head_path: str) -> tuple[Artefact | None, Artefact]:
    """The base and head artefacts at those paths, each read as ``read_run`` reads it, the
    base deep enough for the head's k (judged@k reads the base at it), their id maps
    dropped. A bad base is the error raised when both are bad. No ``base_path``: no base
    (None), the head alone."""
    if base_path is None:
        head = read_run(head_path)
        head.columns.done_reading()
        return None, head
    base = read_run(base_path)
    head = read_run(head_path, shared=base)  # one string per id both name
    if base.depth < head.header.k:  # a rare k change: read again, sharing the head's strings
        base = read_run(base_path, top=head.header.k, shared=head)
    base.columns.done_reading()
    head.columns.done_reading()
    return base, head
