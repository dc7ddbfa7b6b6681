"""A small project on disk and the run artefacts of it, whole or in shards, for the shard,
merge and cache tests. Retrievers are the real callables of fake_retrievers.py."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from run_files import read_run

from ci_eval.core.artefact.artefact import dumps

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


def run_to(config_path: Path, out: Path, shard=None, cache_dir=None) -> Path:
    """One run through the same pipeline `ci-eval run` uses, streamed to ``out``."""
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    inputs = load_inputs(load_config(config_path))
    run_evaluation(inputs, out, show_progress=False, shard=shard, cache_dir=cache_dir)
    return out


def run_in_process(config_path: Path, shard=None, cache_dir=None) -> dict:
    """``run_to`` a temporary file, read back as a file would be."""
    with tempfile.TemporaryDirectory() as tmp:
        return read_run(run_to(config_path, Path(tmp) / "run.json", shard, cache_dir))


def merge_in_process(paths: list[Path], out: Path) -> dict:
    """The parts at ``paths`` merged as `ci-eval merge` merges them, read back."""
    from ci_eval.inputs.artefact_out import write_merged, written_rows
    from ci_eval.inputs.artefact_stream import read_part

    parts = [read_part(p) for p in paths]
    write_merged(out, parts, [written_rows(p.source, p.ids, p.head.metrics) for p in parts])
    return read_run(out)


def without_times(artefact: dict) -> str:
    """The artefact's bytes with what legitimately differs between runs taken out: the
    creation time and the latencies."""
    data = json.loads(dumps(artefact))
    data.pop("created_at")
    data["summary"].pop("latency_ms")
    for q in data["questions"]:
        q.pop("latency_ms")
    return dumps(data)
