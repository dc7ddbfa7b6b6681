"""A deterministic STAND-IN for an end-to-end answer-correctness judge.

The demo has no language model and no human grader, yet the failure matrix (gold
retrieved? x answer correct?) needs an answer-correctness column to show anything. This
module invents one, deterministically, with the shape real systems tend to have:

* gold retrieved at k: usually correct, but a fixed hash-chosen minority of questions is
  wrong anyway ("the model ignored the chunk": a generation failure);
* gold not retrieved: usually wrong, but a small hash-chosen minority is right anyway
  ("answered from the model's own knowledge");
* on top of that, each configuration label flips a few questions of its own, so base and
  head differ on some questions even where retrieval did not change: a stand-in for
  generation-side differences between two runs.

Nothing here judges any answer. Do not read its output as a measurement.
"""

from __future__ import annotations

import hashlib

# Shares of questions, chosen so that on ~50 questions each cell of the failure matrix
# gets a handful of entries rather than zero or most of them.
IGNORED_WHEN_RETRIEVED = 0.12
KNOWN_WITHOUT_RETRIEVAL = 0.15
FLIPPED_PER_LABEL = 0.04


def _unit(*parts: str) -> float:
    """A stable number in [0, 1) from the parts (sha256, so no PYTHONHASHSEED effect)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def answer_correct(question_id: str, retrieved_gold_at_k: bool, config_label: str) -> bool:
    """Whether the stand-in judge calls the answer to ``question_id`` correct.

    ``config_label`` names the configuration being judged (the demo uses ``"base"`` and
    ``"head"``); the same three arguments always give the same result.
    """
    draw = _unit("question", question_id)
    if retrieved_gold_at_k:
        correct = draw >= IGNORED_WHEN_RETRIEVED
    else:
        correct = draw < KNOWN_WITHOUT_RETRIEVAL
    if _unit("label", config_label, question_id) < FLIPPED_PER_LABEL:
        correct = not correct
    return correct
