"""The app's retrieval stage: a LlamaIndex ``VectorStoreIndex`` over notes on Python
packaging, one node per section.

Each node's ``ref_doc_id`` is the page it comes from and its ``node_id`` the section, so the
gold set can be labelled per section (``id_from = "node_id"``, the default) or per page
(``id_from = "ref_doc_id"``). The embedding is a deterministic stand-in (hashed character
trigrams) so the example runs offline; a real app sets its embedding model."""

from __future__ import annotations

import zlib

from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

SECTIONS = {
    "pyproject#build-system": "The build-system table of pyproject.toml names the backend that builds the wheel.",
    "pyproject#dependencies": "List runtime dependencies in the dependencies array of the project table.",
    "pyproject#extras": "Optional dependencies are extras: pip install 'name[extra]' installs them.",
    "venv#create": "Create a virtual environment with python -m venv .venv and activate it.",
    "venv#why": "A virtual environment keeps each project's packages apart from the system Python.",
    "wheels#what": "A wheel is a built distribution: installing it copies files, nothing is compiled.",
    "wheels#manylinux": "Manylinux wheels carry compiled extensions that run on most Linux distributions.",
    "publish#twine": "Upload the sdist and the wheel to the package index with twine upload dist/*.",
}


class TrigramEmbedding(BaseEmbedding):
    """Character trigrams hashed into 256 dimensions: robust to plurals and word forms."""

    def _get_text_embedding(self, text: str) -> list[float]:
        vector = [0.0] * 256
        padded = f"  {text.lower()} "
        for i in range(len(padded) - 2):
            vector[zlib.adler32(padded[i:i + 3].encode()) % 256] += 1.0
        return vector

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)


def build_index() -> VectorStoreIndex:
    nodes = [TextNode(text=text, id_=section,
                      relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=section.split("#")[0])})
             for section, text in SECTIONS.items()]
    return VectorStoreIndex(nodes, embed_model=TrigramEmbedding())
