"""core/gold/minhash.py: the MinHash signature of a chunk's text."""

import hashlib

import numpy as np

from ci_eval.core.gold import fingerprint as fp
from ci_eval.core.gold import minhash as mh


def test_signature_follows_the_documented_formula():
    """Recomputed with Python integers from the module docstring's recipe."""
    text = "one two three four five"
    mask = (1 << 64) - 1

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    xs = [int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big")
          for s in set(fp.shingles(text))]
    expected = []
    for i in range(mh.SLOTS):
        seed = int.from_bytes(hashlib.sha256(f"ci-eval minhash slot {i}".encode()).digest()[:8], "big")
        expected.append(min(mix(x ^ seed) for x in xs) >> 32)
    assert mh.signature_slots(text).tolist() == expected
    assert mh.decode_signature(mh.signature(text)).tolist() == expected


def test_similarity_estimates_jaccard():
    words = [f"w{i}" for i in range(200)]
    a = " ".join(words)
    b = " ".join(words[:100] + ["changed"] + words[101:])
    # Changing word 100 replaces the 3 shingles that hold it: 198 shingles each, 195 shared.
    jaccard = 195 / (198 + 3)
    score = mh.similarity(mh.signature_slots(a), mh.signature_slots(b))
    # 64 slots: the estimate's standard deviation is sqrt(J(1-J)/64), about 0.02 here.
    assert abs(score - jaccard) < 5 * np.sqrt(jaccard * (1 - jaccard) / mh.SLOTS)
    assert mh.similarity(mh.signature_slots(a), mh.signature_slots(a)) == 1.0
    other = " ".join(f"v{i}" for i in range(200))
    assert mh.similarity(mh.signature_slots(a), mh.signature_slots(other)) < 0.1


def test_unreadable_signatures_are_refused():
    assert mh.signature("...") is None
    assert mh.decode_signature("mh32w2:AAAA") is None
    assert mh.decode_signature("mh64w3:not base64!") is None
    assert mh.decode_signature("mh64w3:AAAA") is None
    assert mh.is_signature(mh.signature("a b c d"))


def test_batch_slots_give_each_text_the_signature_it_has_alone():
    texts = ["the wing makes lift at speed", "drag slows a plane down", "x", "one two three four five six"]
    hashes, owners = [], []
    for i, text in enumerate(texts):
        unique = sorted(set(fp.shingles(text)))
        hashes += [fp.shingle_hash(s) for s in unique]
        owners += [i] * len(unique)
    # batch=2: several passes, and a text cut across none of them
    got = mh.batch_slots(np.array(hashes, dtype=np.uint64), np.array(owners), len(texts), batch=2)
    for i, text in enumerate(texts):
        assert got[i].tolist() == mh.signature_slots(text).astype(np.uint32).tolist()
