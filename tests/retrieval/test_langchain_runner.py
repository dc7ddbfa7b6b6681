"""The langchain retriever type with real langchain-core objects, through `ci-eval run`."""

import pytest

pytest.importorskip("langchain_core", reason="langchain-core is not installed (pip install -e '.[test]')")

from framework_corpus import GOLD, by_cosine, l2  # noqa: E402
from framework_projects import errors, rankings, run_project  # noqa: E402

QUESTIONS = {q["id"]: q["question"] for q in GOLD["questions"]}


def assert_nearest_first(qid: str, ids: list[str], depth: int) -> None:
    """``ids`` are the ``depth`` chunks most similar to the question, most similar first (in
    any order among equally similar ones: the store's tie order is its own)."""
    cos = dict(by_cosine(QUESTIONS[qid]))
    assert [cos[c] for c in ids] == pytest.approx([s for _, s in by_cosine(QUESTIONS[qid])[:depth]])


def test_a_vector_store_factory_without_relevance_scores_keeps_its_order_as_rank_scores(tmp_path):
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:memory_store"')
    assert done.returncode == 0, done.stderr
    depth = art["config"]["retriever"]["depth"]  # 3k = 3: asked of the store
    for qid, got in rankings(art).items():
        assert_nearest_first(qid, [cid for cid, _ in got], depth)
        # InMemoryVectorStore has no relevance function: scores come from the rank, best = depth.
        assert [s for _, s in got] == [float(depth - i) for i in range(depth)]
    assert art["config"]["retriever"] | {} == {
        "type": "langchain", "depth": 3, "params": {}, "target": "retrievers_langchain:memory_store",
        "id_from": "id", "score": "similarity"}


def test_a_similarity_retriever_is_asked_through_its_store_for_the_full_depth(tmp_path):
    # The retriever says k=2; ci-eval needs 3k = 6 to tell "just past k" from "gone".
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:retriever"', k=2)
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        assert_nearest_first(qid, [cid for cid, _ in got], 6)


def test_distances_are_negated_so_the_nearest_chunk_ranks_first(tmp_path):
    done, art = run_project(
        tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:l2_store"\nscore = "distance"')
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        distance = dict(l2(QUESTIONS[qid]))
        assert [s for _, s in got] == pytest.approx([-distance[cid] for cid, _ in got])
        assert [-s for _, s in got] == pytest.approx([d for _, d in l2(QUESTIONS[qid])[:3]])
    assert art["config"]["retriever"]["score"] == "distance"


def test_a_distance_store_left_at_similarity_keeps_its_own_order(tmp_path):
    # No relevance function on this store: its own order (nearest first) as rank scores,
    # never its raw distances read as similarities.
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:l2_store"')
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        distance = dict(l2(QUESTIONS[qid]))
        assert [distance[cid] for cid, _ in got] == pytest.approx([d for _, d in l2(QUESTIONS[qid])[:3]])
        assert [s for _, s in got] == [3.0, 2.0, 1.0]


@pytest.mark.parametrize("score", ["distance", "similarity"])
def test_python_callable_returning_documents_with_distances(tmp_path, score):
    # A python callable handing back LangChain's (Document, distance) pairs: with
    # score = "distance" the nearest ranks first; read as similarities the ranking inverts.
    done, art = run_project(tmp_path, 'type = "python"\ntarget = "retrievers_langchain:l2_search"\n'
                                      f'id_from = "metadata.chunk_id"\nscore = "{score}"')
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        nearest = [d for _, d in l2(QUESTIONS[qid])[:3]]
        if score == "distance":
            assert [-s for _, s in got] == pytest.approx(nearest)
        else:
            assert [s for _, s in got] == pytest.approx(nearest[::-1])
    assert {k: art["config"]["retriever"][k] for k in ("id_from", "score")} == {
        "id_from": "metadata.chunk_id", "score": score}


def test_documents_without_id_fail_every_question_naming_the_metadata_keys(tmp_path):
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:no_id_retriever"')
    assert done.returncode == 4
    errs = errors(art)
    assert set(errs) == set(QUESTIONS)
    assert "result 1 has no 'id'; its metadata has chunk_id, n: set retriever.id_from" in errs["q-rotate"]
    assert all(not q["ranking"] and q["metrics"]["hit@1"] == 0.0 for q in art["questions"])


def test_id_from_metadata_reads_the_chunk_id_and_a_missing_key_fails_only_that_question(tmp_path):
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:no_id_retriever"\n'
                                      'id_from = "metadata.chunk_id"')
    assert done.returncode == 4  # one question failed
    assert errors(art) == {"q-refund": "unusable result: result 1 has no metadata 'chunk_id' (its metadata keys: none)"}
    got = rankings(art)
    for qid in ("q-rotate", "q-export"):
        # A retriever's documents carry no score: the rank gives them, its order is kept.
        assert_nearest_first(qid, [cid for cid, _ in got[qid]], 3)
        assert [s for _, s in got[qid]] == [3.0, 2.0, 1.0]


def test_a_target_of_the_wrong_kind_is_bad_input(tmp_path):
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:not_a_retriever"')
    assert done.returncode == 2 and art is None
    assert done.stderr.strip() == (
        "ci-eval: error: ci-eval.toml:retriever.target: 'retrievers_langchain:not_a_retriever' is a dict, "
        "expected a LangChain BaseRetriever or VectorStore (or a function returning one)")


def test_rank_scores_get_no_cutoff_suggestion_and_no_histogram(tmp_path):
    # InMemoryVectorStore gives no scores: every top score is the depth. Over those the
    # cutoff section would say "no gap" and suggest a least-wrong cutoff of ranks.
    from framework_projects import cli

    gold = {**GOLD, "questions": GOLD["questions"] + [
        {"id": f"u{i}", "question": q, "gold": [], "unanswerable": True}
        for i, q in enumerate(["What is the capital of Peru?", "Who painted the Mona Lisa?"])]}
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:memory_store"',
                            gold=gold)
    assert done.returncode == 0, done.stderr
    assert {q["top_score"] for q in art["questions"]} == {3.0}  # the stand-ins this is about
    shown = cli("compare", "--no-base", "run.json", "--summary-out", "full.md",
                "--svg-out", "cutoff.svg", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    full = (tmp_path / "full.md").read_text()
    for md in (shown.stdout, full):
        assert "The scores are ranks" in md
        assert "no gap" not in md.lower() and "fewest mistakes" not in md
        assert "least wrong" not in md and "top score  " not in md  # the histogram's header
    svg = (tmp_path / "cutoff.svg").read_text()
    assert "<circle" not in svg and "The scores are ranks." in svg
    as_json = cli("compare", "--no-base", "run.json", "--format", "json", cwd=tmp_path)
    import json

    head = json.loads(as_json.stdout)["cutoff"]["head"]
    assert head["scores_are_ranks"] is True and head["suggested"] is None
    assert head["least_wrong"] is None


def _overlap_order(question: str, min_shared: int = 0) -> list[str]:
    from framework_corpus import CHUNKS
    from retrievers_langchain import shared_words

    ranked = sorted(CHUNKS, key=lambda cid: (-shared_words(question, CHUNKS[cid]), cid))
    return [cid for cid in ranked if shared_words(question, CHUNKS[cid]) >= min_shared]


def test_a_retriever_with_a_k_field_is_asked_for_the_depth(tmp_path):
    # OverlapRetriever(k=2), as a BM25Retriever(k=5): invoke()[:depth] gave k results
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:overlap"')
    assert done.returncode == 0, done.stderr
    depth = art["config"]["retriever"]["depth"]
    assert depth == 3
    for qid, got in rankings(art).items():
        assert [cid for cid, _ in got] == _overlap_order(QUESTIONS[qid])[:depth]
    assert "fewer results" not in done.stderr


def test_a_params_field_reaches_the_retriever(tmp_path):
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:overlap"\n'
                                      "params = { min_shared = 2 }")
    assert done.returncode == 0, done.stderr
    got = rankings(art)
    for qid in QUESTIONS:
        assert [cid for cid, _ in got[qid]] == _overlap_order(QUESTIONS[qid], 2)[:3]
    # the parameter had an effect: some question lost results it had without it
    assert any(len(_overlap_order(q, 2)) < 3 for q in QUESTIONS.values())


def test_an_mmr_retriever_is_asked_for_the_depth_through_search_kwargs(tmp_path):
    done, art = run_project(tmp_path, 'type = "langchain"\ntarget = "retrievers_langchain:mmr"')
    assert done.returncode == 0, done.stderr
    assert all(len(got) == 3 for got in rankings(art).values())  # search_kwargs k=1, fetch_k=2


@pytest.mark.parametrize("target, params, place, reason", [
    ("overlap", "{ k = 15 }", "retriever.params.k", "'k' is how ci-eval asks for the depth (3): set retriever.depth"),
    ("overlap", "{ top_n = 4 }", "retriever.params.top_n",
     "'top_n' is neither a field of OverlapRetriever nor an argument its _get_relevant_documents takes"),
    ("retriever", "{ k = 15 }", "retriever.params.k", "'k' is how ci-eval asks for the depth"),
])
def test_params_the_retriever_would_not_receive_are_refused_by_check_and_run(tmp_path, target, params, place,
                                                                             reason):
    from framework_projects import assert_refused_by_check_and_run

    assert_refused_by_check_and_run(
        tmp_path, f'type = "langchain"\ntarget = "retrievers_langchain:{target}"\nparams = {params}', place, reason)


COMPRESSION = 'type = "langchain"\ntarget = "retrievers_langchain:compression"\n'


def test_a_compression_retriever_s_base_retriever_is_a_stage_and_its_compressor_the_final_list(tmp_path):
    pytest.importorskip("langchain_classic", reason="langchain-classic is not installed (pip install -e '.[test]')")
    import retrievers_langchain

    stages = '\n[[stages]]\nname = "base_retriever"\ndepth = 5\n'
    done, art = run_project(tmp_path, COMPRESSION + stages)
    assert done.returncode == 0, done.stderr
    gold = {q["id"]: q["gold"][0] for q in GOLD["questions"]}
    store = retrievers_langchain.memory_store()
    for qid, got in rankings(art).items():
        # the base retriever asked for the stage's depth (5 > the run's 3), then compressed
        base = store.similarity_search(QUESTIONS[qid], k=5)
        final = retrievers_langchain.overlap_order(QUESTIONS[qid], base)[:3]
        assert [cid for cid, _ in got] == [d.id for d in final]
        ids = [d.id for d in base]
        record = art["stages"]["questions"][qid]
        assert record["ranks"][0] == ([ids.index(gold[qid]) + 1] if gold[qid] in ids else [])
    assert [s["name"] for s in art["stages"]["chain"]] == ["base_retriever", "results"]


def test_a_compression_retriever_offers_no_other_stage(tmp_path):
    pytest.importorskip("langchain_classic", reason="langchain-classic is not installed (pip install -e '.[test]')")
    done, art = run_project(tmp_path, COMPRESSION + '\n[[stages]]\nname = "reranker"\ndepth = 5\n')
    assert done.returncode == 2 and art is None
    assert done.stderr.startswith("ci-eval: error: ci-eval.toml:stages: stage 'reranker' is not a stage of a "
                                  "ContextualCompressionRetriever"), done.stderr
