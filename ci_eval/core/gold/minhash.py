"""MinHash signatures of chunk texts (core/gold/fingerprint.py cuts the shingles).

``signature``: 64 slots; two signatures agree on a share of slots that estimates the
Jaccard similarity of the two shingle sets, which finds an edited or re-cut chunk without
keeping the old text.

Every constant below is derived from sha256, never from Python's ``hash()`` (salted per
process) or numpy's generators (whose streams may change between versions): a signature
written today must compare with one computed on another machine next year.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np

from ci_eval.core.gold.fingerprint import SHINGLE, shingle_hash, shingles

SLOTS = 64
SIGNATURE_PREFIX = "mh64w3:"
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _seeds() -> np.ndarray:
    return np.array([int.from_bytes(hashlib.sha256(f"ci-eval minhash slot {i}".encode()).digest()[:8], "big")
                     for i in range(SLOTS)], dtype=np.uint64)


_SEEDS = _seeds()


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (multiplication wraps mod 2**64): each slot's hash of a
    shingle is mix(shingle hash XOR slot seed), a different, well-spread order per slot."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _shingle_hashes(text: str) -> np.ndarray:
    return np.array([shingle_hash(s) for s in set(shingles(text))], dtype=np.uint64)


def batch_slots(hashes: np.ndarray, owners: np.ndarray, count: int, batch: int = 1 << 15) -> np.ndarray:
    """The MinHash slots (one uint32 row of SLOTS per text) of ``count`` texts at once, from
    their shingles' ``shingle_hash`` values and which text owns each (``owners``, sorted,
    every text owning at least one). The same values ``signature_slots`` gives one text;
    worked ``batch`` shingles at a time so memory stays flat (SLOTS x 8 bytes a shingle)."""
    out = np.empty((count, SLOTS), dtype=np.uint32)
    starts = np.searchsorted(owners, np.arange(count + 1))
    first = 0
    while first < count:
        last = max(first + 1, int(np.searchsorted(starts, starts[first] + batch, "right")) - 1)
        last = min(last, count)
        lo, hi = starts[first], starts[last]
        with np.errstate(over="ignore"):
            values = (_mix(_SEEDS[None, :] ^ hashes[lo:hi, None]) >> np.uint64(32)).astype(np.uint32)
        out[first:last] = np.minimum.reduceat(values, starts[first:last] - lo, axis=0)
        first = last
    return out


def shingle_values(text: str) -> np.ndarray | None:
    """Every shingle's value in every slot (one row per slot, one column per distinct
    shingle, the high 32 bits kept); None for a text without words. The signature is the
    minimum of each row."""
    x = _shingle_hashes(text)
    if not len(x):
        return None
    with np.errstate(over="ignore"):
        values = _mix(_SEEDS[:, None] ^ x[None, :])
    return (values >> np.uint64(32)).astype(np.uint32)


def signature_slots(text: str) -> np.ndarray | None:
    """The 64 MinHash values (uint32) of the text; None for a text without words."""
    values = shingle_values(text)
    return None if values is None else values.min(axis=1).astype(">u4")


def held(slots: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each slot of a signature, whether its shingle is one of the text whose
    ``shingle_values`` are given. A slot's shingle is a uniform draw from the signed text's
    shingles, so the share of True estimates the share of that text found in this one
    (containment; standard error at most 0.5 / sqrt(64) = 0.0625)."""
    return (values == slots.astype(np.uint32)[:, None]).any(axis=1)


def estimated_size(slots: np.ndarray) -> float:
    """How many distinct shingles the signed text had: each slot is the least of that many
    uniform 32-bit values, whose mean is 1 / (n + 1); (SLOTS - 1) / sum is the unbiased
    estimate of n + 1 (relative error about 1 / sqrt(64))."""
    total = float(np.sum(slots.astype(np.float64))) / 2 ** 32
    return max(1.0, (SLOTS - 1) / max(total, 1e-12) - 1)


def signature(text: str) -> str | None:
    """The signature as stored in an anchor: ``mh64w3:`` and the slots in base64."""
    slots = signature_slots(text)
    if slots is None:
        return None
    return SIGNATURE_PREFIX + base64.b64encode(slots.tobytes()).decode("ascii")


def decode_signature(sig: str) -> np.ndarray | None:
    """The slots of a stored signature; None when it is not one this version can read."""
    if not sig.startswith(SIGNATURE_PREFIX):
        return None
    try:
        raw = base64.b64decode(sig[len(SIGNATURE_PREFIX):], validate=True)
    except ValueError:
        return None
    if len(raw) != SLOTS * 4:
        return None
    return np.frombuffer(raw, dtype=">u4")


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated Jaccard similarity of two shingle sets: the share of agreeing slots."""
    return float(np.count_nonzero(a == b)) / SLOTS


def is_signature(sig: str) -> bool:
    return decode_signature(sig) is not None


def positional_values(words: list[str]) -> np.ndarray | None:
    """Every slot's value of the shingle starting at each word of ``words`` (lowercased
    ``\\w+`` runs of one document): one row per slot, one column per start position, so a
    signature's slot can be found *where* its shingle lies in the document, not only whether
    it does. None when there are fewer words than a shingle."""
    if len(words) < SHINGLE:
        return None
    x = np.array([int.from_bytes(hashlib.blake2b(" ".join(words[i:i + SHINGLE]).encode("utf-8"),
                                                 digest_size=8).digest(), "big")
                  for i in range(len(words) - SHINGLE + 1)], dtype=np.uint64)
    with np.errstate(over="ignore"):
        values = _mix(_SEEDS[:, None] ^ x[None, :])
    return (values >> np.uint64(32)).astype(np.uint32)
