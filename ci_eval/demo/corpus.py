"""The demo corpus: CPython's pydoc topics, chunked by section heading.

The topics are loaded from the interpreter that runs the demo, never copied into the
repository, so the corpus (and therefore ``index_version``) follows the Python in use. A
gold set labelled on one Python may name chunks that another Python's topics split or
word differently; the version string is what lets the evaluation call that drift by name.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

# Sphinx's text writer underlines titles with a run of one of these, one per level.
_UNDERLINE = re.compile(r"([*=\-~^])\1*")
_SLUG_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Chunk:
    id: str
    topic: str
    title: str
    text: str


def slugify(title: str) -> str:
    """Lowercase alphanumeric runs joined by ``-``; ``"section"`` when nothing is left."""
    words = _SLUG_WORD.findall(title.lower())
    return "-".join(words) if words else "section"


def _is_underline(line: str, title: str) -> bool:
    if not _UNDERLINE.fullmatch(line):
        return False
    # A rule of '=' under an empty line (pdb's page has one) or under indented text is a
    # separator, not a title; a title starts at column 0 and is no longer than its rule.
    if not title.strip() or title[:1].isspace() or _UNDERLINE.fullmatch(title):
        return False
    return len(line) >= len(title.rstrip())


def _sections(text: str) -> list[tuple[str, str]]:
    """Split one topic into (heading, body) pairs in document order.

    Text before the first heading, if any, becomes a section with an empty heading.
    """
    lines = text.splitlines()
    starts: list[int] = []
    for i in range(1, len(lines)):
        if _is_underline(lines[i], lines[i - 1]):
            starts.append(i - 1)
    sections: list[tuple[str, str]] = []
    first = starts[0] if starts else len(lines)
    if first > 0:
        sections.append(("", "\n".join(lines[:first])))
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        sections.append((lines[start].strip(), "\n".join(lines[start + 2 : end])))
    return sections


def chunk_topics(topics: Mapping[str, str]) -> tuple[Chunk, ...]:
    """Chunk a topic-key -> text mapping into heading sections with stable ids.

    Ids are ``"<topic>#<heading slug>"``. A slug repeated within one topic gets ``-2``,
    ``-3``... in document order, so ids depend only on the text, never on dict order or
    hashing. Sections whose body is blank (a heading directly followed by a sub-heading)
    are dropped: there is nothing in them to retrieve.
    """
    chunks: list[Chunk] = []
    for topic in sorted(topics):
        used: set[str] = set()
        for heading, body in _sections(topics[topic]):
            body = body.strip("\n").rstrip()
            if not body.strip():
                continue
            base = slugify(heading) if heading else "intro"
            slug, n = base, 1
            # Checking against every slug already used (not only the bases) keeps a
            # heading that itself slugifies to "foo-2" from colliding with a renamed "foo".
            while slug in used:
                n += 1
                slug = f"{base}-{n}"
            used.add(slug)
            chunks.append(Chunk(id=f"{topic}#{slug}", topic=topic, title=heading, text=body))
    return tuple(chunks)


def window_chunks(topics: Mapping[str, str], size: int) -> tuple[Chunk, ...]:
    """Each topic's text cut every ``size`` characters, headings ignored: the fixed-size
    chunking a ladder of chunkings starts from. Ids are ``"<topic>@<start>"``; a window that
    is only blank is dropped."""
    chunks: list[Chunk] = []
    for topic in sorted(topics):
        text = topics[topic]
        for start in range(0, len(text), size):
            window = text[start:start + size]
            if window.strip():
                chunks.append(Chunk(id=f"{topic}@{start}", topic=topic, title="", text=window))
    return tuple(chunks)


def version_of(chunks: tuple[Chunk, ...], python: str) -> str:
    """``pydoc-topics-<python>-<12 hex>``: the hash covers every id, title and text."""
    digest = hashlib.sha256()
    for chunk in chunks:
        for part in (chunk.id, chunk.title, chunk.text):
            digest.update(part.encode("utf-8"))
            # Separators keep ("ab", "c") and ("a", "bc") from hashing alike.
            digest.update(b"\x1f")
        digest.update(b"\x1e")
    return f"pydoc-topics-{python}-{digest.hexdigest()[:12]}"


def _python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


@lru_cache(maxsize=1)
def load_chunks() -> tuple[Chunk, ...]:
    """The running interpreter's pydoc topics, chunked (cached: the topics never change)."""
    from pydoc_data.topics import topics

    return chunk_topics(topics)


@lru_cache(maxsize=4)
def load_windows(size: int) -> tuple[Chunk, ...]:
    """The running interpreter's pydoc topics cut into ``size``-character windows."""
    from pydoc_data.topics import topics

    return window_chunks(topics, size)


@lru_cache(maxsize=1)
def index_version() -> str:
    return version_of(load_chunks(), _python_version())
