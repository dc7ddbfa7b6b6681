"""Chunk fingerprints: the normalised-text hash and the MinHash signature."""

import hashlib

import numpy as np

from ci_eval.core.gold import fingerprint as fp


def test_hash_ignores_whitespace_runs_and_ends():
    assert fp.text_hash("  the  quick\n\tfox ") == fp.text_hash("the quick fox")
    assert fp.text_hash("the quick fox") == hashlib.sha256(b"the quick fox").hexdigest()


def test_hash_keeps_case_and_punctuation():
    assert fp.text_hash("The fox.") != fp.text_hash("the fox")


def test_shingles_are_lowercased_word_triples():
    assert fp.shingles("The quick, brown fox!") == ["the quick brown", "quick brown fox"]
    assert fp.shingles("Two words") == ["two words"]
    assert fp.shingles("  ...  ") == []


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
    for i in range(fp.SLOTS):
        seed = int.from_bytes(hashlib.sha256(f"ci-eval minhash slot {i}".encode()).digest()[:8], "big")
        expected.append(min(mix(x ^ seed) for x in xs) >> 32)
    assert fp.signature_slots(text).tolist() == expected
    assert fp.decode_signature(fp.signature(text)).tolist() == expected


def test_similarity_estimates_jaccard():
    words = [f"w{i}" for i in range(200)]
    a = " ".join(words)
    b = " ".join(words[:100] + ["changed"] + words[101:])
    # Changing word 100 replaces the 3 shingles that hold it: 198 shingles each, 195 shared.
    jaccard = 195 / (198 + 3)
    score = fp.similarity(fp.signature_slots(a), fp.signature_slots(b))
    # 64 slots: the estimate's standard deviation is sqrt(J(1-J)/64), about 0.02 here.
    assert abs(score - jaccard) < 5 * np.sqrt(jaccard * (1 - jaccard) / fp.SLOTS)
    assert fp.similarity(fp.signature_slots(a), fp.signature_slots(a)) == 1.0
    other = " ".join(f"v{i}" for i in range(200))
    assert fp.similarity(fp.signature_slots(a), fp.signature_slots(other)) < 0.1


def test_unreadable_signatures_are_refused():
    assert fp.signature("...") is None
    assert fp.decode_signature("mh32w2:AAAA") is None
    assert fp.decode_signature("mh64w3:not base64!") is None
    assert fp.decode_signature("mh64w3:AAAA") is None
    assert fp.is_signature(fp.signature("a b c d"))


def test_batch_slots_give_each_text_the_signature_it_has_alone():
    texts = ["the wing makes lift at speed", "drag slows a plane down", "x", "one two three four five six"]
    hashes, owners = [], []
    for i, text in enumerate(texts):
        unique = sorted(set(fp.shingles(text)))
        hashes += [fp.shingle_hash(s) for s in unique]
        owners += [i] * len(unique)
    # batch=2: several passes, and a text cut across none of them
    got = fp.batch_slots(np.array(hashes, dtype=np.uint64), np.array(owners), len(texts), batch=2)
    for i, text in enumerate(texts):
        assert got[i].tolist() == fp.signature_slots(text).astype(np.uint32).tolist()
