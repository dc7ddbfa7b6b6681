"""``ci-eval gold mine``: read the log and the gold set, call the core, write the candidates."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ci_eval.core.gold.mining import BAND_NAMES, Mined, mine
from ci_eval.core.gold.origin import mined_origin
from ci_eval.core.gold.personal import scrub_all
from ci_eval.errors import InputError
from ci_eval.inputs.files import atomic_write
from ci_eval.inputs.question_log import QuestionLog, read_log


def known_questions(gold_path: str | None) -> list[str]:
    """Every question the gold set holds, kept as pending, or binned: none is news."""
    if gold_path is None:
        return []
    from ci_eval.gold.store import read_gold

    doc, _ = read_gold(gold_path)
    prov = doc.get("provenance", {})
    held = list(doc.get("questions", [])) + list(prov.get("pending", []))
    return [q.get("question", "") for q in held] + [b.get("question", "") for b in prov.get("binned", {}).values()]


def gold_path_for(gold: str | None, config: str | None, no_gold: bool) -> str | None:
    if no_gold:
        return None
    if gold:
        return gold
    from ci_eval.inputs.loaders import discover_config, load_config

    found = config or discover_config()
    return load_config(found).gold_set if found else None


def _refuse_existing(paths, force: bool) -> None:
    for path in paths:
        if path and os.path.exists(path) and not force:
            raise InputError("exists already: pass --force to replace it (nothing written)", path)


def candidate_lines(result: Mined, log: str) -> str:
    rows = [{"question": g.question, "frequency": g.frequency, "near_duplicates": len(g.members) - 1,
             "topic": ", ".join(result.topics[g.topic]), "asked": BAND_NAMES[g.band],
             "origin": mined_origin(log, g.frequency)} for g in result.chosen]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def group_lines(result: Mined) -> str:
    rows = [{"question": g.question, "frequency": g.frequency, "members": list(g.members)} for g in result.groups]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@dataclass(frozen=True)
class Removed:
    """The personal data taken out of the log's questions (core/gold/personal.py)."""
    found: Counter  # kind -> items replaced
    questions: int  # questions that held some


def without_personal_data(read: QuestionLog) -> tuple[QuestionLog, Removed]:
    questions, found, touched = scrub_all(read.questions)
    return replace(read, questions=questions), Removed(found, touched)


def mine_log(log: str, fmt: str, field: str, out: str, *, gold: str | None, count: int, seed: int,
             topics: int, similarity: float, groups_out: str | None = None, force: bool = False,
             keep_personal: bool = False, strict: bool = False,
             tick=lambda n, total: None) -> tuple[Mined, QuestionLog, Removed | None]:
    _refuse_existing([out, groups_out], force)
    read = read_log(log, fmt, field, strict)
    removed = None
    if not keep_personal:  # before folding: nothing written below can hold what was typed
        read, removed = without_personal_data(read)
    result = mine(read.questions, known_questions(gold), count=count, seed=seed, topics=topics,
                  threshold=similarity, tick=tick)
    if groups_out:
        atomic_write(groups_out, group_lines(result))
    atomic_write(Path(out), candidate_lines(result, log))
    return result, read, removed
