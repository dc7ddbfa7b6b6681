"""Chunk fingerprints: what a gold id named, kept so it can be found again after re-ingestion.

Two pieces of evidence, both computed from the chunk's text alone:

- ``text_hash``: sha256 of the whitespace-normalised text (every run of Unicode whitespace
  becomes one space, ends stripped). Identical text under a new id is the same chunk.
- a signature (core/gold/minhash.py): a MinHash of the text's word 3-shingles (lowercased
  ``\\w+`` runs, cut here), which finds an edited or re-cut chunk without keeping the old text.

This half needs no numpy: reading a manifest computes text hashes, and ``ci-eval check``
does that without importing it (80 ms of a check's 140).
"""

from __future__ import annotations

import hashlib
import re

SHINGLE = 3
_WORD = re.compile(r"\w+")


def normalise(text: str) -> str:
    return " ".join(text.split())


def text_hash(text: str) -> str:
    """sha256 (hex) of the whitespace-normalised text: the ``hash`` of a manifest entry."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def shingles(text: str) -> list[str]:
    """Word 3-shingles of the lowercased text; a text under three words is one shingle."""
    words = _WORD.findall(text.lower())
    if len(words) <= SHINGLE:
        return [" ".join(words)] if words else []
    return [" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)]


def shingle_hash(shingle: str) -> int:
    return int.from_bytes(hashlib.blake2b(shingle.encode("utf-8"), digest_size=8).digest(), "big")


def words_at(text: str) -> list[tuple[int, int]] | None:
    """The character spans of the text's ``\\w+`` runs, as the shingles see them; None when
    lowercasing changes the text's length (offsets would no longer line up)."""
    low = text.lower()
    if len(low) != len(text):
        return None
    return [m.span() for m in _WORD.finditer(low)]
