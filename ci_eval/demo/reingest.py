"""The demo's head index: a re-ingestion of one page of the corpus.

The pull request re-chunks the ``compound`` topic (the compound statements) with a
smaller chunk size: each of its sections longer than ``MAX_CHARS`` is split in two at the
paragraph break nearest its middle, ids ``<old id>/1`` and ``/2``. Gold ids naming those
sections go stale on every Python version, and ``ci-eval gold remap`` maps them back by
span. Both indexes' manifests carry each chunk's document (its topic), span and text.
"""

from __future__ import annotations

from functools import lru_cache

from ci_eval.demo.corpus import Chunk, _python_version, load_chunks, version_of

TOPIC = "compound"
MAX_CHARS = 3000


def _halves(chunk: Chunk) -> tuple[Chunk, Chunk] | None:
    breaks = [i for i in range(len(chunk.text)) if chunk.text.startswith("\n\n", i)]
    if len(chunk.text) <= MAX_CHARS or not breaks:
        return None
    at = min(breaks, key=lambda i: abs(i - len(chunk.text) // 2))
    first, second = chunk.text[:at], chunk.text[at + 2:]
    return (Chunk(f"{chunk.id}/1", chunk.topic, chunk.title, first),
            Chunk(f"{chunk.id}/2", chunk.topic, chunk.title, second))


@lru_cache(maxsize=1)
def reingested_chunks() -> tuple[Chunk, ...]:
    out: list[Chunk] = []
    for chunk in load_chunks():
        halves = _halves(chunk) if chunk.topic == TOPIC else None
        out.extend(halves or (chunk,))
    return tuple(out)


@lru_cache(maxsize=1)
def reingested_version() -> str:
    return version_of(reingested_chunks(), _python_version())


def manifest_entries(chunks: tuple[Chunk, ...]) -> list[dict]:
    """Manifest entries with spans: each chunk's offset in its topic's text."""
    from pydoc_data.topics import topics

    entries, cursor = [], {}
    for c in chunks:
        text = topics[c.topic]
        start = text.find(c.text, cursor.get(c.topic, 0))
        if start < 0:  # cannot happen for text cut from the topic; keep the entry usable
            entries.append({"id": c.id, "doc": c.topic, "text": c.text})
            continue
        cursor[c.topic] = start + len(c.text)
        entries.append({"id": c.id, "doc": c.topic, "start": start, "end": start + len(c.text), "text": c.text})
    return entries
