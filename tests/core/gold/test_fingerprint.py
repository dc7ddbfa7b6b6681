"""core/gold/fingerprint.py: the normalised-text hash and the shingles."""

import hashlib

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
