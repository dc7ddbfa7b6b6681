"""The action's sharded setup: matrix jobs that each run one shard and upload the part, and
a ``mode: merge`` job that downloads this run's parts, merges them strictly and hands the
result to ``run_mode`` as its head (compare, comment, gate exactly as ``mode: run``).

Parts travel as workflow artifacts named ``<artifact-name>-part-<I>-of-<N>``, one per
shard, found through the GitHub API as this run's artifacts and read as hostile zips."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ci_eval.core.artefact.merge import Part
from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED, InputError
from ci_eval.github.artifact_zip import RUN_MEMBER, read_artifact_zip
from ci_eval.github.env import ActionInputs, Event, require, write_outputs
from ci_eval.github.job import MAX_ARTIFACT_ZIP, job_git, log


def part_artifact_name(artifact_name: str, shard) -> str:
    # Artifact names may not hold "/", so "2/8" is spelled 2-of-8.
    return f"{artifact_name}-part-{shard.index}-of-{shard.count}"


def _load(inputs: ActionInputs, what: str):
    from ci_eval.inputs.loaders import load_config

    if inputs.config == "demo":
        raise InputError(f"the embedded demo is not {what}: give your own config", "input config")
    return load_config(inputs.config)


def part_mode(inputs: ActionInputs, event: Event, env) -> int:
    """A matrix job: run one shard, write the part where the upload step looks, and name
    the artifact it is uploaded as. No baseline, no comment, no gate: the merge job does those."""
    from ci_eval.core.artefact.shard import parse_shard
    from ci_eval.retrieval.pipeline import load_inputs, retriever_failed, run_evaluation

    shard = parse_shard(inputs.shard, "input shard")
    config = _load(inputs, "sharded")
    path = Path(inputs.out_dir) / RUN_MEMBER
    part = run_evaluation(load_inputs(config), path, git=job_git(event, env), shard=shard,
                          cache_dir=inputs.cache)
    name = part_artifact_name(inputs.artifact_name, shard)
    write_outputs(env.get("GITHUB_OUTPUT"), {"part-name": name, "artefact": str(path)})
    errors = part.columns.errors.count
    log(f"ci-eval: shard {shard}: {part.columns.asked} question(s); the part is uploaded as {name}")
    failure = retriever_failed(part) or (f"the retriever failed on {errors} question(s)" if errors else None)
    if failure:
        log(f"ci-eval: error: {failure}; see the part")
        return EXIT_RETRIEVER_FAILED
    return EXIT_OK


def download_parts(port, run_id: int, artifact_name: str, folder: Path) -> list[tuple[Path, Part]]:
    """(file, checked part) for every part artifact of run ``run_id``, by shard number. Each
    zip's run artefact is extracted to a file in ``folder`` and checked from there a line at
    a time: one zip is in memory at a time, and no part is ever held whole."""
    from ci_eval.inputs.artefact_stream import read_part

    pattern = re.compile(re.escape(artifact_name) + r"-part-(\d+)-of-(\d+)")
    listed = [(tuple(map(int, m.groups())), a) for a in port.run_artifacts(run_id)
              if (m := pattern.fullmatch(a.name))]
    if not listed:
        raise InputError(f"run {run_id} has no part artifacts ({artifact_name}-part-I-of-N); the matrix "
                         "jobs upload them when given the shard input", "input mode")
    parts = []
    for n, (_, artifact) in enumerate(sorted(listed, key=lambda pair: pair[0])):
        source = f"artifact {artifact.name} (id {artifact.id})"
        if artifact.expired:
            raise InputError("has expired", source)
        if artifact.size_in_bytes > MAX_ARTIFACT_ZIP:
            raise InputError(f"the zip is {artifact.size_in_bytes} bytes, over the {MAX_ARTIFACT_ZIP}-byte "
                             "limit", source)
        path = folder / f"part-{n + 1}.json"
        members = read_artifact_zip(port.download_artifact(artifact.id, MAX_ARTIFACT_ZIP), source, optional=())
        path.write_bytes(members.pop(RUN_MEMBER))
        del members
        part = read_part(path, source=f"{source}:{RUN_MEMBER}")
        parts.append((path, replace(part, source=source)))
    return parts


def merged_evaluation(port_factory):
    """``run_mode``'s evaluate step for ``mode: merge``: the head is this run's parts merged,
    streamed to the bundle's artefact."""

    def evaluate(inputs: ActionInputs, event: Event, env, history_after):
        import tempfile

        from ci_eval.core.artefact.merge import check_parts
        from ci_eval.core.artefact.shard import config_sha256
        from ci_eval.inputs.artefact_out import write_merged, written_rows

        config = _load(inputs, "merged")
        run_id = int(require(env, "GITHUB_RUN_ID"))
        with tempfile.TemporaryDirectory(prefix="ci-eval-parts-") as tmp:
            downloaded = download_parts(port_factory(), run_id, inputs.artifact_name, Path(tmp))
            parts = [part for _, part in downloaded]
            check_parts(parts)
            if config_sha256(parts[0].head.config) != config_sha256(config.as_recorded()):
                # The gate applied here must be the one the parts were measured under.
                raise InputError("the parts were run with another config than this job's", config.source)
            rows = [written_rows(path, part.ids, part.head.metrics) for path, part in downloaded]
            head = write_merged(Path(inputs.out_dir) / RUN_MEMBER, parts, rows, history_after(None))
        log(f"ci-eval: merged {head.columns.asked} questions from this run's parts")
        return head, config

    return evaluate
