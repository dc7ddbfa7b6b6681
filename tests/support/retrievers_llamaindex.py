"""Real LlamaIndex objects over framework_corpus for the llamaindex retriever type's tests.
Nodes are built directly (no text splitter, so no tokenizer is loaded); the embedding is the
deterministic one of framework_corpus."""

from __future__ import annotations

from framework_corpus import CHUNKS, embed
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode


class HashEmbedding(BaseEmbedding):
    def _get_query_embedding(self, query: str) -> list[float]:
        return embed(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return embed(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return embed(text)


def _nodes() -> list[TextNode]:
    # The node id is the chunk id, the source document the article (the part before "#");
    # the metadata stays out of the embedded text so scores are the plain cosine.
    return [TextNode(text=text, id_=cid, metadata={"chunk_id": cid}, excluded_embed_metadata_keys=["chunk_id"],
                     relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=cid.split("#")[0])})
            for cid, text in CHUNKS.items()]


def index() -> VectorStoreIndex:
    return VectorStoreIndex(_nodes(), embed_model=HashEmbedding())


# A module-level retriever that asks for fewer nodes than ci-eval needs.
retriever = index().as_retriever(similarity_top_k=1)


CUTOFF = 0.3  # the postprocessor's fault: a gold chunk scored below it is cut


def engine():
    """A query engine as an app builds one: the retriever's top 3, then a similarity cutoff
    (the response synthesizer's model is a stand-in: ci-eval only retrieves)."""
    from llama_index.core import get_response_synthesizer
    from llama_index.core.llms import MockLLM
    from llama_index.core.postprocessor import SimilarityPostprocessor
    from llama_index.core.query_engine import RetrieverQueryEngine

    return RetrieverQueryEngine(retriever=index().as_retriever(similarity_top_k=3),
                                node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=CUTOFF)],
                                response_synthesizer=get_response_synthesizer(llm=MockLLM()))
