"""The action and the retrieval cache: the action restores and saves (actions/cache) only
the folder its `cache` input names, so a config's `[retriever] cache` with that input empty
is not used, and the job's log says why and what to set."""

from __future__ import annotations

from action_harness import BASE, CONFIG, push_event, run_action
from run_files import read_run

from ci_eval.retrieval.cache import FILE_NAME

CACHED = CONFIG.format(gold="eval/gold.json", gate="").replace(
    'target = "fake_retrievers:lexical"', 'target = "fake_retrievers:lexical"\ncache = "from-config"')


def _push(gh, tmp_path, checkout, **inputs):
    (checkout / "cached.toml").write_text(CACHED)
    return run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE, ref="refs/heads/main",
                      config="cached.toml", **inputs)


def test_a_config_cache_the_action_would_not_keep_is_not_used_and_said(gh, checkout, tmp_path):
    job = _push(gh, tmp_path, checkout)
    assert job.code == 0, job.stderr
    assert "[retriever] cache = 'from-config' is not used" in job.stderr
    assert "cache: from-config" in job.stderr  # what to set
    assert not (checkout / "from-config").exists()
    assert "cache" not in read_run(job.bundle / "ci-eval-run.json")


def test_the_cache_input_is_the_folder_used(gh, checkout, tmp_path):
    job = _push(gh, tmp_path, checkout, cache=str(tmp_path / "kept"))
    assert job.code == 0, job.stderr
    assert (tmp_path / "kept" / FILE_NAME).is_file() and not (checkout / "from-config").exists()
    assert "is not used" not in job.stderr
    assert read_run(job.bundle / "ci-eval-run.json")["cache"]["misses"] > 0
