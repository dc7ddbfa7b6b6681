"""The app's retrieval stage: recipe notes in a LangChain in-memory vector store.

The documents come in the way LangChain loaders leave them: no ``Document.id``, the chunk id
in ``metadata["chunk_id"]`` (ci-eval.toml says ``id_from = "metadata.chunk_id"``). The
embedding is a deterministic stand-in (hashed word counts) so the example runs offline;
a real app would pass its embedding model here."""

from __future__ import annotations

import hashlib
import re

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

NOTES = [
    ("bread/sourdough#starter", "Feed the sourdough starter flour and water every day until it doubles in four hours."),
    ("bread/sourdough#bake", "Bake sourdough at 250 C in a covered pot for twenty minutes, then uncovered until dark."),
    ("pasta/fresh#dough", "Fresh pasta dough is one egg for every hundred grams of flour, kneaded for ten minutes."),
    ("pasta/sauce#tomato", "Simmer tomatoes with garlic and olive oil for half an hour for a quick pasta sauce."),
    ("rice/risotto#stock", "Add hot stock to risotto rice one ladle at a time and stir until it is absorbed."),
    ("eggs/boiled#timing", "A soft boiled egg takes six minutes in boiling water, a hard boiled one ten."),
    ("storage/freezer#bread", "Slice bread before freezing it so single slices can go straight into the toaster."),
    ("storage/fridge#herbs", "Keep soft herbs in a glass of water in the fridge, loosely covered with a bag."),
]


class HashedWordEmbeddings(Embeddings):
    """Word counts hashed into 128 dimensions: same text, same vector; shared words, close."""

    size = 128

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * self.size
        for word in re.findall(r"[a-z]+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "big") % self.size] += 1.0
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]


def build_store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(HashedWordEmbeddings())
    store.add_documents([Document(page_content=text, metadata={"chunk_id": cid}) for cid, text in NOTES])
    return store


# What the app's chain uses; ci-eval asks its store for 3k results.
retriever = build_store().as_retriever(search_kwargs={"k": 2})
