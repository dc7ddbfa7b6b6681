"""Reading a gold-set document with its parsed form, and writing one back atomically."""

from __future__ import annotations

import os
from pathlib import Path

from ci_eval.core.gold.goldformat import gold_text
from ci_eval.core.gold.goldset import GoldSet, parse_gold_set
from ci_eval.inputs.files import atomic_write, read_json


def read_gold(path: str | os.PathLike) -> tuple[dict, GoldSet]:
    """The document as parsed JSON (kept whole, notes and all, for rewriting) and as a GoldSet."""
    data, _ = read_json(path, "gold set")
    return data, parse_gold_set(data, str(path))


def write_gold(path: str | os.PathLike, document: dict) -> GoldSet:
    """Check the document is a valid gold set, then replace the file in one step, keeping
    the layout the file had (core/gold/goldformat.gold_text)."""
    gold = parse_gold_set(document, str(path))
    atomic_write(path, gold_text(document, _previous(path)))
    return gold


def _previous(path) -> str | None:
    """The file's text as it is now, or None when there is none to keep the layout of."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
