"""When a run failed: the one definition every reader of an artefact applies.

A run failed when the retriever failed on any question it was asked: an exception, an answer
of the wrong type, a process that died, and the questions a run stopped early left unasked
(core/artefact/results.py records them as failures too); or, in a repeated run (`run
--repeat N`), on any question of a further pass (core/artefact/repeat.py), since a retriever
that fails one time in N fails in production too. A run that failed is never a pass: `run`
and `merge` exit 4 on it, the gate's ``errors`` rule fails on it (`compare`, the action and
the workflow_run poster alike), the action's verdict is ``error``, and `history` leaves its
rows out (a failure is not a miss).

Only what the artefact records is read: the questions whose status is ``error`` (or the
summary's count of them) and the ``repeat`` key.
"""

from __future__ import annotations

from ci_eval.core.artefact.run_head import Repeat, RunHead


def run_failure(errors: int, repeat: Repeat | None, first: tuple[str, str] | None = None,
                unanswerable: int = 0) -> str | None:
    """Why the run failed, in one sentence, or None when it did not. ``errors``: the
    questions the recorded pass failed on (``first``: the first one's id and error;
    ``unanswerable``: how many of them were unanswerable), ``repeat``: the artefact's
    ``repeat`` record."""
    if errors:
        also = f" ({unanswerable} of them unanswerable)" if unanswerable else ""
        where = f"; first: {first[0]}: {first[1]}" if first else ""
        return f"the retriever failed on {errors} question(s){also}{where}"
    if repeat is not None and repeat.failed is not None:
        count, qid, message = repeat.failed
        return (f"the retriever failed on {count} question(s) in a repeated pass (run --repeat); "
                f"first: {qid}: {message}")
    return None


def head_failure(head: RunHead) -> str | None:
    """``run_failure`` of an artefact read without its rows (history, a merge's part), from
    its recorded summary's count of errors and its ``repeat`` key."""
    errors = (head.summary or {}).get("errors") or 0
    return run_failure(errors if isinstance(errors, int) and not isinstance(errors, bool) else 0, head.repeat)
