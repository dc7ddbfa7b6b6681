"""The llamaindex retriever type with real llama-index-core objects, through `ci-eval run`."""

import importlib.util

import pytest

# Found, not imported: importing it costs each worker 1.5 s at collection; the tests
# that need it in this process import it themselves.
if importlib.util.find_spec("llama_index.core") is None:
    pytest.skip("llama-index-core is not installed (pip install -e '.[test]')", allow_module_level=True)

from framework_corpus import GOLD, by_cosine  # noqa: E402
from framework_projects import assert_refused_by_check_and_run, errors, rankings, run_project  # noqa: E402

QUESTIONS = {q["id"]: q["question"] for q in GOLD["questions"]}


def test_an_index_factory_gives_node_ids_and_cosine_scores(tmp_path):
    done, art = run_project(tmp_path, 'type = "llamaindex"\ntarget = "retrievers_llamaindex:index"')
    assert done.returncode == 0, done.stderr
    for qid, got in rankings(art).items():
        cos = dict(by_cosine(QUESTIONS[qid]))
        assert [s for _, s in got] == pytest.approx([s for _, s in by_cosine(QUESTIONS[qid])[:3]])
        assert [s for _, s in got] == pytest.approx([cos[cid] for cid, _ in got])
    assert art["questions"][0]["ranking"][0]["id"] == "kb/keys#rotate"
    assert art["config"]["retriever"]["id_from"] == "node_id"


def test_a_retriever_is_widened_to_the_depth_and_ref_doc_id_names_the_article(tmp_path):
    gold = {**GOLD, "questions": [{**q, "gold": [q["gold"][0].split("#")[0]]} for q in GOLD["questions"]]}
    done, art = run_project(tmp_path, 'type = "llamaindex"\ntarget = "retrievers_llamaindex:retriever"\n'
                                      'id_from = "ref_doc_id"', gold=gold)
    assert done.returncode == 0, done.stderr
    q = {e["id"]: e for e in art["questions"]}
    # similarity_top_k=1 on the user's retriever is raised to 3k = 3 nodes; their articles,
    # a second chunk of one article dropped as a duplicate id (first kept, with a warning).
    for qid, question in QUESTIONS.items():
        articles = list(dict.fromkeys(cid.split("#")[0] for cid, _ in by_cosine(question)[:3]))
        assert [r["id"] for r in q[qid]["ranking"]] == articles
    assert q["q-rotate"]["ranking"][0]["id"] == "kb/keys" and q["q-rotate"]["metrics"]["hit@1"] == 1.0
    assert q["q-rotate"]["warnings"] == ["1 duplicate id(s) dropped (first occurrence kept)"]


def test_a_metadata_key_the_nodes_lack_fails_each_question(tmp_path):
    done, art = run_project(tmp_path, 'type = "llamaindex"\ntarget = "retrievers_llamaindex:index"\n'
                                      'id_from = "metadata.doc"')
    assert done.returncode == 4
    assert errors(art)["q-export"] == "unusable result: result 1 has no metadata 'doc' (its metadata keys: chunk_id)"
    assert set(errors(art)) == set(QUESTIONS)


@pytest.mark.parametrize("target, params, place, reason", [
    ("index", "{ similarity_top_k = 10 }", "retriever.params.similarity_top_k",
     "'similarity_top_k' is how ci-eval asks for the depth (3)"),
    ("index", "{ top_n = 4 }", "retriever.params.top_n", "'top_n' is not an argument of VectorIndexRetriever"),
    ("retriever", "{ doc_ids = [\"kb/keys\"] }", "retriever.params.doc_ids",
     "'doc_ids' cannot reach VectorIndexRetriever, a retriever already built"),
    ("index", "{ node_ids = [\"kb/keys#rotate\"] }", "retriever.params",
     "VectorStoreIndex.as_retriever refused the params: "),
])
def test_params_the_retriever_would_not_receive_are_refused_by_check_and_run(tmp_path, target, params, place,
                                                                             reason):
    from framework_projects import assert_refused_by_check_and_run

    assert_refused_by_check_and_run(
        tmp_path, f'type = "llamaindex"\ntarget = "retrievers_llamaindex:{target}"\nparams = {params}', place, reason)


ENGINE = ('type = "llamaindex"\ntarget = "retrievers_llamaindex:engine"\ndepth = 3\n'
          '[[stages]]\nname = "retriever"\ndepth = 3\n[[stages]]\nname = "SimilarityPostprocessor"\ndepth = 3\n')


def test_a_query_engine_s_postprocessors_are_its_stages_and_the_cutoff_is_named_for_its_loss(tmp_path):
    import retrievers_llamaindex

    done, art = run_project(tmp_path, ENGINE)
    assert done.returncode == 0, done.stderr
    assert [s["name"] for s in art["stages"]["chain"]] == ["retriever", "SimilarityPostprocessor", "results"]
    retriever = retrievers_llamaindex.index().as_retriever(similarity_top_k=3)
    for q in GOLD["questions"]:
        # the retriever asked directly, in this process; the cutoff applied by hand
        found = retriever.retrieve(q["question"])
        pool = [n.node.node_id for n in found]
        kept = [n.node.node_id for n in found if n.score >= retrievers_llamaindex.CUTOFF]
        gold = q["gold"][0]
        ranks = [[r for r, cid in enumerate(ids, 1) if cid == gold] for ids in (pool, kept, kept[:1])]
        assert art["stages"]["questions"][q["id"]]["ranks"] == ranks, q["id"]
        assert [cid for cid, _ in rankings(art)[q["id"]]] == kept
    # the refund question's gold is in the pool below the cutoff: the postprocessor lost it
    refund = art["stages"]["questions"]["q-refund"]["ranks"]
    assert refund[0] and not refund[1]


def test_a_stage_that_is_neither_the_retriever_nor_a_postprocessor_is_refused(tmp_path):
    assert_refused_by_check_and_run(
        tmp_path, ENGINE.replace('name = "SimilarityPostprocessor"', 'name = "rerank"'), "stages",
        "stage 'rerank' is neither the query engine's retriever nor one of its node postprocessors "
        "(they are: retriever, SimilarityPostprocessor)")
