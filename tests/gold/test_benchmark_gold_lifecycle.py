"""The re-ingestion measurement of docs/gold-lifecycle.md, on a small slice of the real
collections (skipped when ../shared is absent)."""

import importlib.util
import sys

from suite_paths import REPO_ROOT

BENCH = REPO_ROOT / "benchmarks" / "gold_lifecycle.py"


def _module():
    spec = importlib.util.spec_from_file_location("gold_lifecycle", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_remap_on_a_slice_of_cranfield(shared_dir):
    bench = _module()
    loaded = bench.load_cranfield(shared_dir / "collections" / "cranfield")
    r = bench.measure("Cranfield", *loaded, max_docs=150, max_queries=12)
    first = r["scenarios"][0]
    for sc in r["scenarios"]:
        assert sc["automatic"] + sc["proposed"] + sc["unresolved"] == sc["gold_ids"] > 0
        assert sc["automatic_exact"] <= sc["automatic"] and sc["automatic_of_moved"] <= sc["moved"]
        assert sum(e["gold_ids"] for e in sc["by_edit"].values()) == sc["gold_ids"]
    # Every chunk id changed scheme, so the stale gold finds nothing.
    assert first["stale"] == (0.0, 0.0)
    # With doc, spans and text, the automatic remaps of every cut are the true ones.
    with_spans = [sc for sc in r["scenarios"] if "without doc" not in sc["rechunk"]]
    assert all(sc["automatic_exact"] == sc["automatic"] > 0 for sc in with_spans)
    # The remap recovers what the stale gold lost, to within 0.1 of the true mapping's MRR.
    assert first["remapped"][0] > first["stale"][0]
    assert abs(first["remapped"][0] - first["truth"][0]) <= 0.1


def test_the_re_ingestion_keeps_every_word_s_identity():
    bench = _module()
    import random

    doc = bench.Doc("d", [f"w{i}." if i % 7 == 6 else f"w{i}" for i in range(90)], list(range(90)))
    for edit in ("sentence inserted", "paragraphs reordered", "first paragraph dropped", "phrase reworded",
                 "words cleaned"):
        words, wids = list(doc.words), list(doc.wids)
        bench._edit(edit, words, wids, random.Random(3))
        assert len(words) == len(wids)
        # Old words keep their identity and appear once; a new word has none.
        kept = [w for w in wids if w is not None]
        assert len(kept) == len(set(kept)) and set(kept) <= set(doc.wids)
    # Windows overlapping by half cover every word, and the truth of an unchanged chunk is
    # the chunk of exactly its words where one exists.
    pieces = bench.chunk_windows(doc, 40, 20)
    assert set().union(*(p.wids for p in pieces)) == set(doc.wids)
    old = bench.chunk_windows(doc)[1]
    assert bench.truth_of(old, {"d": pieces}) == ("d#2",)


def test_without_spans_the_text_signature_proposes(shared_dir):
    bench = _module()
    loaded = bench.load_cranfield(shared_dir / "collections" / "cranfield")
    r = bench.measure("Cranfield", *loaded, max_docs=150, max_queries=12, rechunks=bench.RECHUNKS[:1])
    bare = r["scenarios"][-1]
    assert "without doc" in bare["rechunk"]
    assert bare["proposed"] > 0 and bare["proposed_right"] <= bare["proposed"]
    assert bare["remapped_with_proposals"][0] >= bare["remapped"][0]
