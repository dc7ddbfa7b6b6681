"""The app's retrieval stage, with no framework: SQLite's FTS5 full-text index over a public
library's help pages (the standard library's sqlite3 only).

FTS5's ``bm25()`` is lower for better matches (it is negative), so ci-eval.toml says
``score = "distance"``: ci-eval negates it before ranking. The database is built in memory
on import; a real app would open its file."""

from __future__ import annotations

import re
import sqlite3
import threading

PAGES = [
    ("hours#weekdays", "The library opens at nine and closes at eight on weekdays."),
    ("hours#weekend", "On Saturdays the library closes at five; it is closed on Sundays."),
    ("loans#renew", "Renew a loan online or at the desk up to three times unless someone reserved it."),
    ("loans#late", "Late returns cost twenty cents a day per item, up to the price of the item."),
    ("cards#new", "A library card is free: bring an identity document and proof of address."),
    ("cards#lost", "Report a lost library card at once; a replacement card costs two euros."),
    ("rooms#booking", "Study rooms can be booked for two hours a day at the front desk or online."),
    ("printing#cost", "Printing costs ten cents a page in black and white and fifty in colour."),
]

_db = sqlite3.connect(":memory:", check_same_thread=False)
_db.execute("CREATE VIRTUAL TABLE pages USING fts5(chunk_id UNINDEXED, body)")
_db.executemany("INSERT INTO pages (chunk_id, body) VALUES (?, ?)", PAGES)
_lock = threading.Lock()  # one connection, used from ci-eval's worker threads


def search(question: str, k: int) -> list[tuple[str, float]]:
    """(chunk id, bm25) pairs, best (lowest) first: any question word may match."""
    words = re.findall(r"\w+", question.lower())
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    with _lock:
        rows = _db.execute("SELECT chunk_id, bm25(pages) FROM pages WHERE pages MATCH ? ORDER BY bm25(pages) LIMIT ?",
                           (match, k)).fetchall()
    return [(chunk_id, score) for chunk_id, score in rows]


def manifest() -> dict:
    return {"version": "library-help-1", "ids": [cid for cid, _ in PAGES]}
