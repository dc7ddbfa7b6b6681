"""Real Haystack objects over framework_corpus for the haystack retriever type's tests: the
in-memory BM25 retriever Haystack ships (no model, nothing downloaded)."""

from __future__ import annotations

import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from framework_corpus import CHUNKS  # noqa: E402
from haystack import Document, Pipeline  # noqa: E402
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
