"""A small corpus, a gold set over it and a deterministic embedding, shared by the tests of
the framework retriever types (no framework is imported here).

The embedding is a bag of words hashed into a fixed number of dimensions: the same text
always gives the same vector, texts sharing words are close, and nothing is downloaded."""

from __future__ import annotations

import math
import re
import zlib

CHUNKS = {
    "kb/keys#rotate": "Rotate an API key from the settings page; the old key stops working after one hour.",
    "kb/keys#create": "Create an API key in the settings page and copy it once, it is not shown again.",
    "kb/billing#invoice": "Invoices are emailed on the first day of each month and listed under billing.",
    "kb/billing#refund": "Ask for a refund within thirty days by writing to the billing team.",
    "kb/export#csv": "Export your data as CSV from the reports page, one file per project.",
    "kb/sso#okta": "Single sign-on with Okta needs an admin to upload the SAML metadata file.",
}
DIM = 64
GOLD = {
    "schema_version": 1,
    "questions": [
        {"id": "q-rotate", "question": "How do I rotate an API key?", "gold": ["kb/keys#rotate"]},
        {"id": "q-refund", "question": "Can I get a refund?", "gold": ["kb/billing#refund"]},
        {"id": "q-export", "question": "How to export data as CSV", "gold": ["kb/export#csv"]},
    ],
}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def embed(text: str) -> list[float]:
    vec = [0.0] * DIM
    for w in words(text):
        vec[zlib.crc32(w.encode()) % DIM] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def by_cosine(question: str) -> list[tuple[str, float]]:
    """Every chunk with its cosine similarity to the question, best first (ties: larger id
    first, trec_eval's order)."""
    q = embed(question)
    scored = [(cid, cosine(q, embed(text))) for cid, text in CHUNKS.items()]
    return sorted(scored, key=lambda p: (-p[1], tuple(-b for b in p[0].encode())))


def l2(question: str) -> list[tuple[str, float]]:
    """Every chunk with its Euclidean distance to the question, nearest first."""
    q = embed(question)
    out = [(cid, math.dist(q, embed(text))) for cid, text in CHUNKS.items()]
    return sorted(out, key=lambda p: p[1])
