"""The base branch's recent runs, question by question: what lets a PR comment say "retrieved
in the last 12 runs on main" or "flapping: missed in 4 of the last 12 runs on main" beside a
regression, name the questions failing on main since a commit, and draw each tag's trend.

The action keeps it beside the run artefact, in the run's artifact (``ci-eval-questions.json``),
so the artefact does not grow with it: each push run reads its branch's previous file, adds
itself and writes it again, the last ``RECENT_RUNS`` runs. A question's states are one
character a run, oldest first (``runs``: ``[sha, created_at]`` each): ``1`` its first gold chunk within the top k, ``0`` not,
``-`` not measured in that run (not yet in the gold set, unanswerable, failed or stale).
A tag's values are its hit@k mean at each run (None where it had no measured question).
``configs`` holds each run's retriever config key (core/compare/history.config_key), and a
state is written ``H`` (hit) or ``M`` (missed) instead when the question's gold changed since
the run before (the previous run's artefact, which the push run reads anyway): a question's
change of state counts toward flapping only between runs of the same config and the same
gold, the rule `ci-eval history` applies (core/compare/history.state_changes, one function
for both). A window stored before ``configs`` existed reads as one config throughout.

The file comes from a stored artifact, so it is read as hostile input (``read_recent``): a
file that is not exactly this shape is dropped with the reason, never half used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.core.compare.history import FLAP_CHANGES, config_key, state_changes

RECENT_RUNS = 30
SCHEMA_VERSION = 1
_STATES = frozenset("01-HM")
_GOLD_EDITED = {"1": "H", "0": "M", "-": "-"}
_CONFIG = re.compile(r"[0-9a-f]{8}|")
_CODES = np.full(256, -1, dtype=np.int8)  # a state character -> 1 hit, 0 missed, -1 not measured
_CODES[ord("1")], _CODES[ord("0")], _CODES[ord("H")], _CODES[ord("M")] = 1, 0, 1, 0
_SHA = re.compile(r"[0-9a-f]{0,64}")
_STAMP = re.compile(r"[0-9A-Za-z:.+-]{0,40}")
MAX_QUESTIONS = 1_000_000
MAX_TAGS = 1_000


@dataclass(frozen=True)
class RecentRuns:
    k: int
    runs: tuple[tuple[str, str], ...]  # (sha, created_at), oldest first
    states: dict  # question id -> one character a run
    tags: dict  # tag -> hit@k mean a run (None: no measured question)
    configs: tuple[str, ...] = ()  # each run's config key ("" not recorded); () all unrecorded

    def as_json(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "k": self.k,
                "runs": [[sha, at] for sha, at in self.runs],
                "configs": list(self.run_configs()), "states": self.states, "tags": self.tags}

    def run_configs(self) -> tuple[str, ...]:
        return self.configs or ("",) * len(self.runs)


@dataclass(frozen=True)
class QuestionTrail:
    """One question over the window: how many runs measured it, how many missed it, how
    often its state changed, and since which run (index into ``runs``) it has been missed
    without a break, after having been retrieved (None: it is not failing, or never was
    retrieved in the window)."""

    measured: int
    misses: int
    changes: int
    failing_since: int | None

    @property
    def flapping(self) -> bool:
        return self.changes >= FLAP_CHANGES


def _state(artefact: Artefact, i: int, measured, k: int) -> str:
    if not measured[i]:
        return "-"
    rank = artefact.columns.first_gold_rank(i)
    return "1" if rank is not None and rank <= k else "0"


def gold_prints(artefact: Artefact | None) -> dict:
    """Each question's gold (its chunk ids and grades) as one hash: what ``extend`` compares,
    in the same process, to mark the questions whose gold changed since that run (None: no
    run, nothing known)."""
    if artefact is None:
        return {}
    return dict(zip(artefact.columns.ids, _prints(artefact.columns)))


def _prints(columns) -> list[int]:
    """``gold_prints``'s hashes in question order, over the columns' flat gold arrays."""
    ids, grades, starts = columns.gold_ids, columns.gold_grades, columns.gold_start
    return [hash((*ids[a:b], grades[a:b].tobytes())) for a, b in zip(starts, starts[1:])]


def extend(previous: RecentRuns | None, run: Artefact, gold_before: dict | None = None) -> RecentRuns:
    """``previous`` with ``run`` added last (the window cut to ``RECENT_RUNS``). A previous
    window at another k starts over: its states answer another question. A run of the same
    commit as the last one replaces it (a re-run is not a second data point). ``gold_before``:
    ``gold_prints`` of the window's last run; a question whose gold differs from it gets
    ``H`` or ``M`` (None or a question it lacks: not known, taken as unchanged)."""
    k = run.header.k
    if previous is not None and previous.k != k:
        previous = None
    runs = list(previous.runs) if previous else []
    configs = list(previous.run_configs()) if previous else []
    states = previous.states if previous else {}  # read only: the new window is built below
    tags = previous.tags if previous else {}
    sha = run.header.sha or ""
    if runs and sha and runs[-1][0] == sha:
        gold_before = None  # the run replaced is the one the prints are of
        runs.pop()
        configs.pop()
        states = {q: s[:-1] for q, s in states.items()}
        tags = {t: v[:-1] for t, v in tags.items()}
    before = len(runs)
    runs.append((sha, run.header.created_at or ""))
    configs.append(config_key(run.config, run.header.index_version))
    measured = run.measured_mask()
    columns = run.columns
    now = {}
    prints = _prints(columns) if gold_before else ()
    for i, qid in enumerate(columns.ids):
        state = _state(run, i, measured, k)
        if prints and gold_before.get(qid, prints[i]) != prints[i]:
            state = _GOLD_EDITED[state]
        now[qid] = states.get(qid, "-" * before) + state
    means = {tag: dict(group.means).get(f"hit@{k}") if group.count else None for tag, group in run.summary.by_tag}
    tags = {tag: tags.get(tag, [None] * before) + [means.get(tag)] for tag in sorted(set(tags) | set(means))}
    cut = max(0, len(runs) - RECENT_RUNS)
    # A question or tag gone from the gold set keeps no line: the window describes the set as it is.
    return RecentRuns(k, tuple(runs[cut:]), {q: s[cut:] for q, s in now.items()},
                      {t: v[cut:] for t, v in tags.items() if t in means}, tuple(configs[cut:]))


def _trails(lines: list[str], configs: tuple[str, ...]) -> list[QuestionTrail]:
    """Each question's trail, all at once: the states as one (questions, runs) array, the
    changes counted by history's rule (``state_changes``)."""
    if not lines:
        return []
    raw = np.frombuffer("".join(lines).encode("ascii"), dtype=np.uint8).reshape(len(lines), -1)
    state = _CODES[raw]
    r = state.shape[1]
    keys = {key: n for n, key in enumerate(dict.fromkeys(configs))}
    edited = (raw == ord("H")) | (raw == ord("M"))
    _, counted = state_changes(state, np.array([keys[c] for c in configs], dtype=np.int64), edited)
    known = state >= 0
    hit_at = np.where(state == 1, np.arange(r), -1).max(axis=1)
    after = known & (np.arange(r)[None, :] > hit_at[:, None])
    last_known = np.where(known.any(axis=1), r - 1 - np.argmax(known[:, ::-1], axis=1), -1)
    failing = (hit_at >= 0) & (last_known > hit_at)  # a miss known after the last hit
    since = np.where(failing, np.argmax(after, axis=1), -1)
    return [QuestionTrail(int(m), int(x), int(c), int(f) if f >= 0 else None)
            for m, x, c, f in zip(known.sum(axis=1).tolist(), (state == 0).sum(axis=1).tolist(),
                                  counted.sum(axis=1).tolist(), since.tolist())]


def trail(states: str, configs: tuple[str, ...] | None = None) -> QuestionTrail:
    """One question's trail (``configs``: each run's config key; None: one config)."""
    return _trails([states], configs or ("",) * len(states))[0]


def regression_note(recent: RecentRuns | None, qid: str, branch: str) -> str:
    """What the base branch's recent runs say of a question that regressed here ("" when
    they say nothing: no window, or fewer than 2 runs measured it)."""
    if recent is None or qid not in recent.states:
        return ""
    line = trail(recent.states[qid], recent.run_configs())
    if line.measured < 2:
        return ""
    if line.flapping:
        return f"flapping on {branch}: missed in {line.misses} of the last {line.measured} runs, possibly noise"
    if line.misses == 0:
        return f"retrieved in the last {line.measured} runs on {branch}"
    return ""


def failing_on_base(recent: RecentRuns | None) -> list[tuple[str, str, int]]:
    """The questions failing on the base branch since a run, after having been retrieved
    there: (question id, that run's sha, how many runs ago: 1 for the newest), newest first."""
    if recent is None:
        return []
    out = []
    for qid, line in zip(recent.states, _trails(list(recent.states.values()), recent.run_configs())):
        if line.failing_since is not None and not line.flapping:
            out.append((qid, recent.runs[line.failing_since][0], len(recent.runs) - line.failing_since))
    return sorted(out, key=lambda item: (item[2], item[0]))


class RecentError(ValueError):
    """Why a stored window is not used (one phrase)."""


def read_recent(raw) -> RecentRuns:
    """A parsed ``ci-eval-questions.json`` -> RecentRuns; RecentError naming the first thing
    that is not the shape ``as_json`` writes."""
    if not isinstance(raw, dict) or raw.get("schema_version") != SCHEMA_VERSION:
        raise RecentError(f"not a schema_version {SCHEMA_VERSION} object")
    k, runs, states, tags = raw.get("k"), raw.get("runs"), raw.get("states"), raw.get("tags")
    if type(k) is not int or not 1 <= k <= 10_000:
        raise RecentError("k is not a whole number from 1 to 10000")
    if not isinstance(runs, list) or not 1 <= len(runs) <= RECENT_RUNS:
        raise RecentError(f"runs is not a list of 1 to {RECENT_RUNS} runs")
    pairs = []
    for n, entry in enumerate(runs):
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(v, str) for v in entry)
                and _SHA.fullmatch(entry[0]) and _STAMP.fullmatch(entry[1])):
            raise RecentError(f"runs[{n}] is not [sha, created_at]")
        pairs.append((entry[0], entry[1]))
    if not isinstance(states, dict) or len(states) > MAX_QUESTIONS:
        raise RecentError("states is not an object of at most 1,000,000 questions")
    for qid, line in states.items():
        if not (isinstance(line, str) and len(line) == len(pairs) and _STATES.issuperset(line)):
            raise RecentError(f"states[{qid[:80]!r}] is not one of 0, 1, -, H, M a run")
    configs = raw.get("configs", [""] * len(pairs))  # absent: stored before it was kept
    if not (isinstance(configs, list) and len(configs) == len(pairs)
            and all(isinstance(c, str) and _CONFIG.fullmatch(c) for c in configs)):
        raise RecentError("configs is not one config key (8 hex digits) a run")
    if not isinstance(tags, dict) or len(tags) > MAX_TAGS:
        raise RecentError("tags is not an object of at most 1,000 tags")
    for tag, values in tags.items():
        if not (isinstance(values, list) and len(values) == len(pairs)
                and all(v is None or (type(v) in (int, float) and 0.0 <= v <= 1.0) for v in values)):
            raise RecentError(f"tags[{tag[:80]!r}] is not a mean from 0 to 1 (or null) a run")
    return RecentRuns(k, tuple(pairs), dict(states), {t: [None if v is None else float(v) for v in vs]
                                                       for t, vs in tags.items()}, tuple(configs))
