"""The app's retrieval stage: a Haystack pipeline with the in-memory BM25 retriever over a
hiking guide, one document per trail section (``Document.id`` is the section id)."""

from __future__ import annotations

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

GUIDE = {
    "ridge-loop#parking": "Park at the visitor centre; the ridge loop trailhead is behind the ranger station.",
    "ridge-loop#length": "The ridge loop is twelve kilometres with six hundred metres of climbing.",
    "lake-trail#swimming": "Swimming in the lake is allowed from June to September at the north beach.",
    "lake-trail#dogs": "Dogs must be kept on a leash on the lake trail because of nesting birds.",
    "summit#permit": "The summit route needs a permit, issued free at the ranger station the day before.",
    "summit#weather": "Turn back from the summit if thunderstorms are forecast: the ridge has no shelter.",
    "camping#sites": "The three camp sites by the lake are first come first served; fires only in rings.",
    "camping#water": "Filter or boil stream water before drinking it; the lake pump is off in winter.",
}


def build_pipeline() -> Pipeline:
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=section, content=text) for section, text in GUIDE.items()])
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store))
    return pipeline
