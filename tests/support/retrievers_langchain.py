"""Real LangChain objects over framework_corpus for the langchain retriever type's tests."""

from __future__ import annotations

import math

from framework_corpus import CHUNKS, embed, words
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore


class HashEmbeddings(Embeddings):
    def embed_documents(self, texts):
        return [embed(t) for t in texts]

    def embed_query(self, text):
        return embed(text)


def _docs(with_ids: bool = True) -> list[Document]:
    return [Document(page_content=text, id=cid if with_ids else None, metadata={"chunk_id": cid, "n": i})
            for i, (cid, text) in enumerate(CHUNKS.items())]


def memory_store() -> InMemoryVectorStore:
    """A factory: the store is built when ci-eval runs."""
    store = InMemoryVectorStore(HashEmbeddings())
    store.add_documents(_docs())
    return store


# A module-level retriever object, as apps usually expose one.
retriever = memory_store().as_retriever(search_kwargs={"k": 2})


class L2Store(VectorStore):
    """A store that, like FAISS or pgvector, returns Euclidean distances (lower is better)."""

    def __init__(self, docs):
        self.docs = docs

    @classmethod
    def from_texts(cls, texts, embedding=None, metadatas=None, **kwargs):
        raise NotImplementedError

    def add_texts(self, texts, metadatas=None, **kwargs):
        raise NotImplementedError

    def similarity_search_with_score(self, query, k=4, **kwargs):
        q = embed(query)
        scored = [(d, math.dist(q, embed(d.page_content))) for d in self.docs]
        return sorted(scored, key=lambda p: p[1])[:k]

    def similarity_search(self, query, k=4, **kwargs):
        return [d for d, _ in self.similarity_search_with_score(query, k)]


def l2_store() -> L2Store:
    return L2Store(_docs())


def l2_search(question: str, k: int):
    """A python-type callable returning LangChain's (Document, distance) pairs."""
    return l2_store().similarity_search_with_score(question, k=k)


class NoIdRetriever(BaseRetriever):
    """Documents without an id, the chunk id in metadata (as most LangChain loaders leave
    them); for a question about refunds the metadata is lost too."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun):
        store = memory_store()
        found = store.similarity_search(query, k=4)
        out = []
        for d in found:
            meta = {} if "refund" in query.lower() else dict(d.metadata)
            out.append(Document(page_content=d.page_content, metadata=meta))
        return out


no_id_retriever = NoIdRetriever()
not_a_retriever = {"k": 3}


def shared_words(question: str, text: str) -> int:
    return len(set(words(question)) & set(words(text)))


class OverlapRetriever(BaseRetriever):
    """A retriever with a ``k`` field, as BM25Retriever and TFIDFRetriever have: chunks by
    the number of words they share with the question, at most ``k``, none under ``min_shared``."""

    docs: list[Document]
    k: int = 2
    min_shared: int = 0

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun):
        ranked = sorted(self.docs, key=lambda d: (-shared_words(query, d.page_content), d.id))
        return [d for d in ranked if shared_words(query, d.page_content) >= self.min_shared][: self.k]


overlap = OverlapRetriever(docs=_docs(), k=2)
mmr = memory_store().as_retriever(search_type="mmr", search_kwargs={"k": 1, "fetch_k": 2})


def overlap_order(question: str, docs: list) -> list:
    """The compressor's rule, also read by the tests: documents sharing more of the
    question's words first (stable), those sharing none dropped."""
    asked = set(words(question))
    shared = [(len(asked & set(words(d.page_content))), n, d) for n, d in enumerate(docs)]
    return [d for count, _, d in sorted(shared, key=lambda t: (-t[0], t[1])) if count]


def compression():
    """A factory: a ContextualCompressionRetriever (langchain_classic) over the store's
    retriever, with a compressor that reorders by shared words, a cross-encoder stand-in."""
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.documents.compressor import BaseDocumentCompressor

    class OverlapCompressor(BaseDocumentCompressor):
        def compress_documents(self, documents, query, callbacks=None):
            return overlap_order(query, list(documents))

    return ContextualCompressionRetriever(base_compressor=OverlapCompressor(),
                                          base_retriever=memory_store().as_retriever(search_kwargs={"k": 2}))
