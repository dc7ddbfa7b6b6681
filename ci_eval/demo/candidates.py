"""``ci-eval label --demo --demo-candidates``: the keep-or-bin loop shown offline.

Candidates come from the two places a real project has them: mined from a small shipped log
of what users asked (``asked.log``, with the repeats and near-duplicates real logs hold), and
written by a **stand-in generator**: no model, just a question made from each sampled
section's heading, so a new user sees generated candidates, their proposed chunk and the
screen without an endpoint. A real generator is ``ci-eval gold generate``.
"""

from __future__ import annotations

from importlib import resources

from ci_eval.core.gold.generation import Source, sample_sources, screen
from ci_eval.core.gold.mining import mine

MINED, GENERATED = 10, 6


def standin_questions(count: int, seed: int = 0) -> list[tuple[str, Source]]:
    """The stand-in generator: "How does <heading> work?" for sections
    sampled across the demo's topics, each with the section it came from."""
    from ci_eval.demo.corpus import load_chunks

    chunks = {c.id: c for c in load_chunks()}
    sources = [Source(c.id, c.topic, c.text) for c in chunks.values() if c.title]
    return [(f"How does {chunks[s.id].title.strip(' .').lower()} work?", s)
            for s in sample_sources(sources, count, seed)]


def demo_candidates(known: list[str]) -> list[str]:
    """Mined candidates first, then the stand-in's, none near ``known`` or near each other."""
    log = resources.files(__package__).joinpath("asked.log").read_text(encoding="utf-8").splitlines()
    mined = [g.question for g in mine(log, known, count=MINED, topics=3).chosen]
    written = screen(standin_questions(GENERATED), list(known) + mined, threshold=0.5)
    return mined + [g.question for g in written if g.dropped is None]
