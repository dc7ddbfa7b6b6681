"""Each project in examples/ through the real CLI (`ci-eval check`, `ci-eval run`) in a copy
of its folder, with the framework it uses; skipped when that package is not installed."""

import importlib.util
import shutil
import sys

import pytest
from framework_projects import cli
from run_files import read_run

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from suite_paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
# example -> (module it imports, pip package)
NEEDS = {
    "langchain-memory": ("langchain_core", "langchain-core"),
    "llamaindex": ("llama_index", "llama-index-core"),
    "haystack-bm25": ("haystack", "haystack-ai"),
    "qdrant-local": ("qdrant_client", "qdrant-client"),
    "sqlite-fts5": (None, None),
}


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()) == sorted(NEEDS)


def copy_of(name: str, tmp_path):
    module, package = NEEDS[name]
    if module and importlib.util.find_spec(module) is None:
        pytest.skip(f"{package} is not installed (pip install -e '.[test]')")
    return shutil.copytree(EXAMPLES / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))


def run_example(root):
    check = cli("check", cwd=root)
    assert check.returncode == 0, check.stdout + check.stderr
    run = cli("run", "--quiet", cwd=root)
    assert run.returncode == 0, run.stderr
    return read_run(root / "ci-eval-run.json")


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_the_example_checks_runs_and_passes_its_gate(tmp_path, name):
    root = copy_of(name, tmp_path)
    art = run_example(root)
    config = tomllib.loads((root / "ci-eval.toml").read_text())
    recorded = art["config"]["retriever"]
    for key in ("type", "target", "id_from", "score"):
        if key in config["retriever"]:
            assert recorded[key] == config["retriever"][key]
    k = config["k"]
    answerable = [q for q in art["questions"] if not q["unanswerable"]]
    for metric, floor in config["gate"]["min"].items():
        hits = sum(q["first_gold_rank"] is not None and q["first_gold_rank"] <= k for q in answerable)
        assert art["summary"]["overall"]["means"][metric] == hits / len(answerable) >= floor
    for q in art["questions"]:
        scores = [r["score"] for r in q["ranking"]]
        assert scores == sorted(scores, reverse=True) and len(q["ranking"]) <= 3 * k


@pytest.mark.parametrize("name, module", [("sqlite-fts5", "library_search"), ("qdrant-local", "router_kb")])
def test_distance_examples_rank_by_the_negated_raw_score(tmp_path, monkeypatch, name, module):
    root = copy_of(name, tmp_path)
    art = run_example(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, module, raising=False)
    app = importlib.import_module(module)
    for q in art["questions"]:
        raw = app.search(q["question"], len(q["ranking"]) or 1) if q["ranking"] else []
        pairs = [(p.payload["chunk_id"], p.score) if hasattr(p, "payload") else p for p in raw]
        # The app's own order (best = lowest) is kept, and each score is the raw one negated.
        assert [(r["id"], r["score"]) for r in q["ranking"]] == [(cid, -s) for cid, s in pairs]
