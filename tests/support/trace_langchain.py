"""Traces real LangChain retrievals with OpenInference's instrumentation and writes the
spans to a file, the way an app that already traces exports them.

    python tests/trace_langchain.py OUT sdk|otlp [--with-ids]

``sdk``: one span per line, the OpenTelemetry SDK's ``span.to_json()``; ``otlp``: one
OTLP/JSON export batch per line. Each gold question of framework_corpus is asked once, the
first one tagged with its question id in the span metadata (so it is matched by id, the
others by their text), plus a question that is no gold question (other traffic).
"""

from __future__ import annotations

import json
import sys

from framework_corpus import GOLD
from openinference.instrumentation import using_metadata
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def traced_spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    import retrievers_langchain

    first, *rest = GOLD["questions"]
    with using_metadata({"question_id": first["id"]}):
        # The text differs from the gold set's: only the id can match it.
        retrievers_langchain.retriever.invoke(first["question"].upper())
    for q in rest:
        retrievers_langchain.retriever.invoke(q["question"])
    retrievers_langchain.retriever.invoke("what is the weather like?")
    return exporter.get_finished_spans()


def main(out: str, shape: str) -> None:
    spans = traced_spans()
    with open(out, "w", encoding="utf-8") as fh:
        if shape == "sdk":
            for span in spans:
                fh.write(json.dumps(json.loads(span.to_json())) + "\n")
        else:
            from google.protobuf.json_format import MessageToJson
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

            for span in spans:
                fh.write(MessageToJson(encode_spans([span]), indent=None) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
