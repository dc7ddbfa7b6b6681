"""``run-file`` with ``format = "openinference"``: traced retrieval spans as a run, through
`ci-eval run`. Real spans come from OpenInference's LangChain instrumentation (written by
tests/trace_langchain.py in its own process); the other export shapes are written here."""

import json
import subprocess
import sys

import pytest
from framework_corpus import GOLD
from framework_projects import QUIET_ENV, rankings, run_project
from suite_paths import SUPPORT

QUESTIONS = {q["id"]: q["question"] for q in GOLD["questions"]}


def traced(tmp_path, shape: str):
    pytest.importorskip("openinference.instrumentation.langchain",
                        reason="openinference-instrumentation-langchain is not installed")
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    out = tmp_path / "spans.jsonl"
    env = {**QUIET_ENV, "PYTHONPATH": str(SUPPORT)}
    subprocess.run([sys.executable, str(SUPPORT / "trace_langchain.py"), str(out), shape], check=True, env=env,
                   timeout=120)
    return out


def retrieved_directly(question: str) -> list[str]:
    import retrievers_langchain

    return [d.metadata["chunk_id"] for d in retrievers_langchain.retriever.invoke(question)]


RUN_FILE = 'type = "run-file"\npath = "spans.jsonl"\nformat = "openinference"\n'


@pytest.mark.parametrize("shape", ["sdk", "otlp"])
def test_real_langchain_spans_matched_by_id_and_by_text(tmp_path, shape):
    traced(tmp_path, shape)
    done, art = run_project(tmp_path, RUN_FILE + 'id_from = "metadata.chunk_id"')
    assert done.returncode == 0, done.stderr
    got = rankings(art)
    for qid, question in QUESTIONS.items():
        # The instrumentation records no score: the traced order, as rank scores (2 documents).
        assert got[qid] == [(cid, float(2 - i)) for i, cid in enumerate(retrieved_directly(question))]
    first = next(iter(QUESTIONS))  # traced with its question id in the metadata, its text upper-cased
    assert got[first] and art["questions"][0]["warnings"] == []
    assert art["config"]["retriever"] | {} == {"type": "run-file", "depth": 3, "params": {}, "path": "spans.jsonl",
                                               "format": "openinference", "id_from": "metadata.chunk_id",
                                               "score": "similarity"}


def test_real_spans_have_no_document_id_and_the_error_names_the_metadata(tmp_path):
    traced(tmp_path, "sdk")
    done, art = run_project(tmp_path, RUN_FILE)
    assert done.returncode == 2 and art is None
    assert done.stderr.strip().startswith(
        "ci-eval: error: spans.jsonl:line 1: retrieval document 1 has no 'id'; its metadata has chunk_id, n: "
        "set retriever.id_from")


def span(docs, question=None, qid=None, span_id=None, parent=None, trace="t1", kind="RETRIEVER"):
    """One span the way the OpenTelemetry SDK writes it: flat dotted attributes."""
    attrs = {"openinference.span.kind": kind}
    if question is not None:
        attrs["input.value"] = question
    if qid is not None:
        attrs["metadata"] = json.dumps({"question_id": qid})
    for n, (cid, score) in enumerate(docs):
        attrs[f"retrieval.documents.{n}.document.id"] = cid
        if score is not None:
            attrs[f"retrieval.documents.{n}.document.score"] = score
    return {"context": {"trace_id": trace, "span_id": span_id}, "parent_id": parent, "attributes": attrs}


def phoenix_row(docs, question):
    """One row of a Phoenix spans dataframe written as JSON lines."""
    return {"span_kind": "RETRIEVER", "context.span_id": "p1", "context.trace_id": "t9",
            "attributes.input.value": question,
            "attributes.retrieval.documents": [{"document.id": c, "document.score": s} for c, s in docs]}


def write(tmp_path, *records):
    (tmp_path / "spans.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_export_shapes_nested_retrievers_and_other_traffic(tmp_path):
    q1, q2, q3 = QUESTIONS
    write(tmp_path,
          span([("x", 0.1)], kind="LLM", question=QUESTIONS[q1]),  # not a retrieval: skipped
          # An ensemble: the outer span (s1) holds the final ranking, its child the BM25 leg.
          span([("kb/keys#create", 0.4)], question=QUESTIONS[q1], span_id="s2", parent="s1"),
          span([("kb/keys#rotate", 0.9), ("kb/keys#create", 0.5)], question=QUESTIONS[q1], span_id="s1"),
          phoenix_row([("kb/billing#refund", 2.5), ("kb/export#csv", 1.5)], QUESTIONS[q2]),
          span([("kb/sso#okta", 1.0)], question="unrelated traffic"))
    done, art = run_project(tmp_path, RUN_FILE)
    assert done.returncode == 0, done.stderr
    got = rankings(art)
    assert got[q1] == [("kb/keys#rotate", 0.9), ("kb/keys#create", 0.5)]
    assert got[q2] == [("kb/billing#refund", 2.5), ("kb/export#csv", 1.5)]
    assert got[q3] == [] and art["questions"][2]["warnings"] == ["not in the run file spans.jsonl"]


def test_a_scripted_agent_traced_in_two_calls_is_a_hit_at_call_2(tmp_path):
    qid = "q-rotate"
    gold = next(q["gold"][0] for q in GOLD["questions"] if q["id"] == qid)
    misses = [(f"kb/miss#{n}", 1.0 - n / 100) for n in range(10)]
    write(tmp_path,
          span([], kind="AGENT", qid=qid, span_id="agent", trace="run-7"),
          span(misses, qid=qid, span_id="call-1", parent="agent", trace="run-7"),
          span([(gold, 3.0), ("kb/miss#0", 1.0)], qid=qid, span_id="call-2", parent="agent", trace="run-7"))
    done, art = run_project(tmp_path, RUN_FILE)
    assert done.returncode == 0, done.stderr
    record = art["calls"]["questions"][qid]
    assert record["found_at"] == 2 and record["ranks"] == [[], [1]]
    assert record["sizes"] == [len(misses), 2]
    # the calls' concatenation cut at k=1 (what a single ranked list scores) misses it
    assert record["final_hit"] is False
    question = next(q for q in art["questions"] if q["id"] == qid)
    assert question["first_gold_rank"] is None  # eleventh in the concatenation: past its depth of 3k


def test_traced_distances_are_negated(tmp_path):
    q1 = next(iter(QUESTIONS))
    write(tmp_path, span([("kb/keys#rotate", 0.2), ("kb/keys#create", 0.7)], qid=q1))
    done, art = run_project(tmp_path, RUN_FILE + 'score = "distance"')
    assert done.returncode == 0, done.stderr
    assert rankings(art)[q1] == [("kb/keys#rotate", -0.2), ("kb/keys#create", -0.7)]


@pytest.mark.parametrize("records, message", [
    ([span([("a", 1.0)], question=QUESTIONS["q-refund"], trace="t1", span_id="a"),
      span([("b", 1.0)], question=QUESTIONS["q-refund"], trace="t2", span_id="b")],
     "spans.jsonl:line 2: question 'q-refund' has 2 separate retrieval spans (lines 1, 2): trace each gold "
     "question once"),
    ([span([("a", 1.0), ("b", None)], qid="q-refund")],
     "spans.jsonl:line 1: retrieval document 2 has no score while others have one"),
    ([span([("a", 1.0), ("a", 0.5)], qid="q-refund")],
     "spans.jsonl:line 1: question 'q-refund': document 'a' appears twice"),
])
def test_bad_traces_are_bad_input_naming_the_line(tmp_path, records, message):
    write(tmp_path, *records)
    done, art = run_project(tmp_path, RUN_FILE)
    assert done.returncode == 2 and art is None
    assert done.stderr.strip() == f"ci-eval: error: {message}"


def rerank_span(docs, trace=None, query=None, span_id="rr"):
    """An OpenInference RERANKER span: its output documents, flat dotted attributes."""
    attrs = {"openinference.span.kind": "RERANKER", "reranker.model_name": "stand-in"}
    if query is not None:
        attrs["reranker.query"] = query
    for n, (cid, score) in enumerate(docs):
        attrs[f"reranker.output_documents.{n}.document.id"] = cid
        attrs[f"reranker.output_documents.{n}.document.score"] = score
    return {"context": {"trace_id": trace, "span_id": span_id}, "parent_id": None, "attributes": attrs}


STAGED = RUN_FILE + '\n[[stages]]\nname = "retriever"\ndepth = 10\n[[stages]]\nname = "reranker"\ndepth = 5\n'


def test_a_reranker_span_is_the_final_list_and_both_are_stages(tmp_path):
    """q-rotate: retrieved third, reranked first (its reranker found by the trace); q-refund:
    retrieved first, reranked second (its reranker names it by reranker.query, no trace);
    q-export: not reranked, its stages unreported. Each stage's gold rank is read off the
    spans written here."""
    rotate, refund, export = (q["gold"][0] for q in GOLD["questions"])
    write(tmp_path,
          span([("kb/a", 3.0), ("kb/b", 2.0), (rotate, 1.0)], qid="q-rotate", span_id="r1", trace="t-r"),
          rerank_span([(rotate, 0.9), ("kb/a", 0.2)], trace="t-r", span_id="x1"),
          span([(refund, 3.0), ("kb/c", 2.0)], qid="q-refund", span_id="r2", trace="t-f"),
          rerank_span([("kb/c", 0.8), (refund, 0.1)], query=QUESTIONS["q-refund"], span_id="x2"),
          span([(export, 1.0)], qid="q-export", span_id="r3", trace="t-e"))
    done, art = run_project(tmp_path, STAGED)
    assert done.returncode == 0, done.stderr
    got = rankings(art)
    assert got["q-rotate"] == [(rotate, 0.9), ("kb/a", 0.2)]
    assert got["q-refund"] == [("kb/c", 0.8), (refund, 0.1)]
    assert got["q-export"] == [(export, 1.0)]
    assert [s["name"] for s in art["stages"]["chain"]] == ["retriever", "reranker", "results"]
    ranks = {qid: record["ranks"] for qid, record in art["stages"]["questions"].items()}
    assert ranks == {"q-rotate": [[3], [1], [1]], "q-refund": [[1], [2], []], "q-export": [None, None, [1]]}


@pytest.mark.parametrize("records, message", [
    (lambda g: [span([(g, 1.0)], qid="q-rotate", span_id="r", trace="t"),
                rerank_span([(g, 1.0)], trace="t", span_id="x1"), rerank_span([(g, 1.0)], trace="t", span_id="x2")],
     "spans.jsonl:line 3: question 'q-rotate' has 2 reranker spans (lines 2, 3): one reranker per question is read"),
    (lambda g: [span([(g, 1.0)], qid="q-rotate", span_id="c1", trace="t"),
                span([(g, 1.0)], qid="q-rotate", span_id="c2", trace="t"),
                rerank_span([(g, 1.0)], trace="t", span_id="x")],
     "spans.jsonl:line 3: question 'q-rotate' was retrieved in 2 calls and reranked"),
])
def test_rerankers_that_cannot_be_read_are_refused_at_their_line(tmp_path, records, message):
    write(tmp_path, *records(GOLD["questions"][0]["gold"][0]))
    done, art = run_project(tmp_path, STAGED)
    assert done.returncode == 2 and art is None, done.stderr
    assert done.stderr.startswith(f"ci-eval: error: {message}"), done.stderr
