"""Real Haystack objects over framework_corpus for the haystack retriever type's tests: the
in-memory BM25 retriever Haystack ships (no model, nothing downloaded)."""

from __future__ import annotations

import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from framework_corpus import CHUNKS  # noqa: E402
from haystack import Document, Pipeline, component  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402


def store(with_ids: bool = True) -> InMemoryDocumentStore:
    docs = InMemoryDocumentStore()
    docs.write_documents([Document(content=text, id=cid if with_ids else None, meta={"chunk_id": cid})
                          for cid, text in CHUNKS.items()])
    return docs


bm25 = InMemoryBM25Retriever(store())


def pipeline() -> Pipeline:
    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store()))
    return p


# Documents written without an id get a hash of their content as id (it changes whenever
# the text does); the chunk id is in meta.
hashed = InMemoryBM25Retriever(store(with_ids=False))


@component
class DemotingRanker:
    """A ranker stand-in: keeps the retriever's order but sends every document whose chunk
    id is in ``demote`` to the end, with scores falling by position."""

    def __init__(self, demote: list[str]):
        self.demote = set(demote)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], top_k: int | None = None):
        kept = [d for d in documents if d.id not in self.demote] + [d for d in documents if d.id in self.demote]
        ranked = [Document(id=d.id, content=d.content, meta=d.meta, score=float(len(kept) - n))
                  for n, d in enumerate(kept)]
        return {"documents": ranked[:top_k]}


def reranked(demote: list[str]) -> Pipeline:
    """BM25 over the corpus -> the demoting ranker: a pool and the list after it."""
    p = Pipeline()
    p.add_component("retriever", InMemoryBM25Retriever(store()))
    p.add_component("ranker", DemotingRanker(demote))
    p.connect("retriever.documents", "ranker.documents")
    return p


DEMOTED = ["kb/keys#rotate"]  # the ranker's fault: the key-rotation chunk sent to the end


def demoting() -> Pipeline:
    return reranked(DEMOTED)
