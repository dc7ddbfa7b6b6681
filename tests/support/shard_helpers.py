"""A small project on disk and the run artefacts of it, whole or in shards, for the shard,
merge and cache tests. Retrievers are the real callables of fake_retrievers.py."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.core.artefact import dumps

CONFIG = """gold_set = "gold.json"
k = 1
abstain_below = 0.9
[retriever]
type = "python"
target = "fake_retrievers:{target}"
{retriever_extra}
[index]
callable = "fake_retrievers:manifest"
"""


def write_project(root: Path, questions: list[dict], target: str = "failing", retriever_extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "idx-2",
                                                "questions": questions}))
    (root / "ci-eval.toml").write_text(CONFIG.format(target=target, retriever_extra=retriever_extra))
    return root / "ci-eval.toml"


def run_in_process(config_path: Path, shard=None, cache_dir=None) -> dict:
    """One run through the same pipeline `ci-eval run` uses, read back as a file would be."""
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    inputs = load_inputs(load_config(config_path))
    artefact = run_evaluation(inputs, show_progress=False,
                              shard=shard, cache_dir=cache_dir)
    return json.loads(dumps(artefact))


def without_times(artefact: dict) -> str:
    """The artefact's bytes with what legitimately differs between runs taken out: the
    creation time and the latencies."""
    data = json.loads(dumps(artefact))
    data.pop("created_at")
    data["summary"].pop("latency_ms")
    for q in data["questions"]:
        q.pop("latency_ms")
    return dumps(data)
