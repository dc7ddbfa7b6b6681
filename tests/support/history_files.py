"""A branch's runs as artefact files, each question's first gold rank planned run by run."""

from __future__ import annotations

import hashlib
from pathlib import Path

from factories import DEFAULT_CONFIG, ranked_with_gold_at, spec
from v2_files import write_v2

ABSENT = "absent"  # the question is not in that run's gold set


def sha_of(run: int) -> str:
    return hashlib.sha1(f"commit {run}".encode()).hexdigest()


def created_at(run: int) -> str:
    return f"2026-11-{1 + run // 24:02d}T{run % 24:02d}:00:00Z"


def write_runs(folder: Path, plans: dict[str, list], *, tags: dict[str, list[str]] | None = None,
               configs: list[dict] | None = None, golds: dict[str, list] | None = None, k: int = 5) -> list[Path]:
    """Run ``r`` (0-based) holds each question of ``plans`` with its gold chunk at rank
    ``plans[q][r]`` (None: not retrieved; ABSENT: not in the run). ``golds[q][r]`` names
    that run's gold chunk (default ``g``); ``configs[r]`` the recorded config. The files
    are named out of time order, so only their ``created_at`` orders them."""
    runs = len(next(iter(plans.values())))
    paths = []
    for r in range(runs):
        specs = []
        for qid, ranks in plans.items():
            if ranks[r] == ABSENT:
                continue
            gold = (golds or {}).get(qid, ["g"] * runs)[r]
            specs.append(spec(qid, gold=[gold], ranking=ranked_with_gold_at(ranks[r], gold=gold),
                              tags=(tags or {}).get(qid, [])))
        path = folder / f"run-{sha_of(r)[:8]}.json"
        write_v2(path, specs, k=k, sha=sha_of(r), created_at=created_at(r),
                 config=(configs or [DEFAULT_CONFIG] * runs)[r])
        paths.append(path)
    return paths


def edit_row(path: Path, qid: str, field: str, value) -> None:
    """Set one field of question ``qid``'s row in the artefact at ``path``, the writer's layout
    kept (a row a line, written compact as the writer writes it)."""
    import json

    from ci_eval.core.artefact.question_row import FIELD

    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(f"  [{json.dumps(qid)},"))
    body = lines[at].rstrip("\n")
    comma = body.endswith(",")
    row = json.loads(body.removesuffix(","))
    row[FIELD[field]] = value
    lines[at] = "  " + json.dumps(row, separators=(",", ":"), ensure_ascii=False) + ("," if comma else "") + "\n"
    path.write_text("".join(lines), encoding="utf-8")
