"""The haystack retriever type with Haystack's in-memory BM25 retriever, through `ci-eval run`."""

import importlib.util
import os

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
# Found, not imported: importing it costs each worker 0.7 s at collection; the tests
# that need it in this process import it themselves.
if importlib.util.find_spec("haystack") is None:
    pytest.skip("haystack-ai is not installed (pip install -e '.[test]')", allow_module_level=True)

from framework_corpus import GOLD  # noqa: E402
from framework_projects import assert_refused_by_check_and_run, errors, rankings, run_project  # noqa: E402

QUESTIONS = {q["id"]: q["question"] for q in GOLD["questions"]}


def expected(question: str, depth: int = 3) -> list[tuple[str, float]]:
    """What the same retriever returns when asked directly, in this process."""
    import retrievers_haystack

    found = retrievers_haystack.bm25.run(query=question, top_k=depth)["documents"]
    return [(d.id, d.score) for d in found]


@pytest.mark.parametrize("target", ["bm25", "pipeline"])
def test_component_and_pipeline_give_document_ids_and_bm25_scores(tmp_path, target):
    done, art = run_project(tmp_path, f'type = "haystack"\ntarget = "retrievers_haystack:{target}"')
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        want = expected(QUESTIONS[qid])
        assert [s for _, s in got] == pytest.approx([s for _, s in want])
        assert {c for c, _ in got} == {c for c, _ in want}  # BM25 leaves out chunks sharing no word
    assert art["questions"][0]["ranking"][0]["id"] == "kb/keys#rotate"


def test_id_from_meta_gives_the_chunk_ids_of_documents_stored_with_hash_ids(tmp_path):
    done, art = run_project(tmp_path, 'type = "haystack"\ntarget = "retrievers_haystack:hashed"')
    assert done.returncode == 0, done.stderr
    # Content hashes are no gold ids: every question misses.
    assert all(q["metrics"]["hit@3"] == 0.0 for q in art["questions"])
    done, art = run_project(tmp_path, 'type = "haystack"\ntarget = "retrievers_haystack:hashed"\n'
                                      'id_from = "metadata.chunk_id"')
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        assert {c for c, _ in got} == {c for c, _ in expected(QUESTIONS[qid])}


def test_a_missing_meta_key_fails_each_question(tmp_path):
    done, art = run_project(tmp_path, 'type = "haystack"\ntarget = "retrievers_haystack:bm25"\n'
                                      'id_from = "metadata.source"')
    assert done.returncode == 4
    assert errors(art) == {qid: "unusable result: result 1 has no metadata 'source' (its metadata keys: chunk_id)"
                           for qid in QUESTIONS}


@pytest.mark.parametrize("target, params", [("bm25", "{ scale_score = true }"),
                                            ("pipeline", "{ retriever = { scale_score = true } }")])
def test_params_reach_the_component(tmp_path, target, params):
    import retrievers_haystack

    done, art = run_project(tmp_path, f'type = "haystack"\ntarget = "retrievers_haystack:{target}"\n'
                                      f"params = {params}")
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        found = retrievers_haystack.bm25.run(query=QUESTIONS[qid], top_k=3, scale_score=True)["documents"]
        assert [s for _, s in got] == pytest.approx([d.score for d in found])
        assert [s for _, s in got] != pytest.approx([s for _, s in expected(QUESTIONS[qid])])


@pytest.mark.parametrize("target, params, place, reason", [
    ("bm25", "{ top_k = 10 }", "retriever.params.top_k", "'top_k' is how ci-eval asks for the depth (3)"),
    ("bm25", "{ top_n = 1 }", "retriever.params.top_n",
     "'top_n' is not an argument of InMemoryBM25Retriever.run (it takes filters, scale_score)"),
    ("pipeline", "{ ranker = { top_k = 1 } }", "retriever.params.ranker",
     "'ranker' is not a component of the pipeline with an unconnected input (they are: retriever)"),
    ("pipeline", "{ retriever = { top_n = 1 } }", "retriever.params.retriever.top_n",
     "'retriever.top_n' is not an unconnected input of 'retriever'"),
    ("pipeline", "{ retriever = { top_k = 1 } }", "retriever.params.retriever.top_k",
     "'retriever.top_k' is set by ci-eval"),
])
def test_params_the_component_would_not_receive_are_refused_by_check_and_run(tmp_path, target, params, place,
                                                                             reason):
    from framework_projects import assert_refused_by_check_and_run

    assert_refused_by_check_and_run(
        tmp_path, f'type = "haystack"\ntarget = "retrievers_haystack:{target}"\nparams = {params}', place, reason)


STAGED = ('type = "haystack"\ntarget = "retrievers_haystack:demoting"\ndepth = 3\n'
          '[[stages]]\nname = "retriever"\ndepth = 3\n[[stages]]\nname = "ranker"\ndepth = 1\n')


def test_a_pipeline_s_components_are_its_stages_and_the_ranker_is_named_for_its_loss(tmp_path):
    import retrievers_haystack

    done, art = run_project(tmp_path, STAGED)
    assert done.returncode == 0, done.stderr
    assert [s["name"] for s in art["stages"]["chain"]] == ["retriever", "ranker", "results"]
    ranker = retrievers_haystack.DemotingRanker(retrievers_haystack.DEMOTED)
    for q in GOLD["questions"]:
        # what each component gives when asked directly, in this process
        pool = retrievers_haystack.bm25.run(query=q["question"], top_k=3)["documents"]
        after = ranker.run(documents=pool)["documents"]
        gold = q["gold"][0]
        ranks = [[r for r, d in enumerate(docs[:depth], 1) if d.id == gold] for docs, depth in
                 ((pool, 3), (after, 1), (after, 1))]
        assert art["stages"]["questions"][q["id"]]["ranks"] == ranks, q["id"]
    # the rotation question's gold was in the pool and the ranker demoted it out of the top 1
    rotate = art["stages"]["questions"]["q-rotate"]["ranks"]
    assert rotate[0] and not rotate[1] and not rotate[2]


def test_a_stage_that_is_no_component_of_the_pipeline_is_refused(tmp_path):
    assert_refused_by_check_and_run(
        tmp_path, STAGED.replace('name = "ranker"', 'name = "reranker"'), "stages",
        "stage 'reranker' is not a component of the pipeline with a \"documents\" output (they are: ranker, retriever)")
