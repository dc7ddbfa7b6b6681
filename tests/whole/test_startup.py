"""Every command's --help stays cheap: listing or describing commands must not import the
heavy libraries (numpy, tabulate, jsonschema, PyGithub) that only running them needs. The
times themselves are measured in benchmarks/bench_pipeline.py, not here."""

import json
import subprocess
import sys

import pytest

from ci_eval.commands import COMMANDS

HEAVY = ("numpy", "tabulate", "jsonschema", "github")
_PROBE = f"""
import contextlib, io, json, sys
HEAVY = {HEAVY!r}
from ci_eval.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)))
"""


def heavy_imports(*argv: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [("--help",), ("--version",), *((name, "--help") for name in COMMANDS)],
                         ids=" ".join)
def test_help_imports_no_heavy_library(argv):
    assert heavy_imports(*argv) == []


def test_the_probe_sees_a_heavy_import():
    # `metrics` lists the registry, which needs numpy: the probe must notice it.
    assert "numpy" in heavy_imports("metrics")


def test_a_comparison_does_not_load_numpy_ma(tmp_path):
    # np.quantile and np.unique load numpy.ma on first use, a tenth of compare's start-up;
    # the paired intervals and the per-tag grouping do without them.
    from factories import artefact, spec
    from factories import ranked_with_gold_at as at

    ranks = [1, 2, 1, 3, 1, 1, 2, 1, 4, 1]
    base = artefact([spec(f"q{i}", ["g"], at(r), tags=[f"t{i % 3}"]) for i, r in enumerate(ranks)])
    head = artefact([spec(f"q{i}", ["g"], at(None if i < 3 else r + i % 2), tags=[f"t{i % 3}"])
                     for i, r in enumerate(ranks)])
    for name, data in (("base", base), ("head", head)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    probe = _PROBE.replace("HEAVY = ", "HEAVY = ('numpy.ma',) or ").replace(
        'm.split(".")[0] in HEAVY', "m in HEAVY or m == 'numpy.random'")
    out = subprocess.run([sys.executable, "-c", probe, "compare", str(tmp_path / "base.json"),
                          str(tmp_path / "head.json")], capture_output=True, text=True, check=True,
                         cwd=tmp_path)  # no ci-eval.toml of the checkout's
    # numpy.random is there: the bootstrap ran, and numpy.ma was not needed for it
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["numpy.random"]


@pytest.mark.parametrize("argv", [("check",), ("run", "--quiet", "--out", "out.json"), ("compare", "base.json", "head.json")],
                         ids=" ".join)
def test_valid_input_is_checked_without_importing_jsonschema(tmp_path, argv):
    # jsonschema's import is a third of a small command's start-up; it words the problems of
    # a document the small checker refuses (core/validate.py), and is not needed otherwise.
    import shutil

    from suite_paths import REPO_ROOT

    shutil.copytree(REPO_ROOT / "tests" / "bad_inputs" / "_project", tmp_path / "p")
    probe = _PROBE.replace("HEAVY = ", "HEAVY = ('jsonschema',) or ")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True,
                         cwd=tmp_path / "p")
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert (tmp_path / "p" / "out.json").is_file() or argv[0] != "run"


def test_the_probe_sees_jsonschema_where_a_config_is_refused(tmp_path):
    import shutil

    from suite_paths import REPO_ROOT

    shutil.copytree(REPO_ROOT / "tests" / "bad_inputs" / "_project", tmp_path / "p")
    (tmp_path / "p" / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = "two"\n[retriever]\ntype = "run-file"\n'
                                                'path = "run.jsonl"\n')
    probe = _PROBE.replace("HEAVY = ", "HEAVY = ('jsonschema',) or ")
    out = subprocess.run([sys.executable, "-c", probe, "check"], capture_output=True, text=True, check=True,
                         cwd=tmp_path / "p")
    assert "jsonschema" in json.loads(out.stdout.strip().splitlines()[-1])


def test_check_on_valid_input_does_not_import_numpy(tmp_path):
    # `check` resolves metric names and hashes manifest texts, neither of which needs numpy
    # (core/measure/names.py, core/gold/fingerprint.py): its import is half a check's time.
    import shutil

    from suite_paths import REPO_ROOT

    shutil.copytree(REPO_ROOT / "tests" / "bad_inputs" / "_project", tmp_path / "p")
    probe = ("import sys\nfrom ci_eval.cli import main\ncode = main(['check'])\n"
             "print(code, sorted(m for m in sys.modules if m.split('.')[0] == 'numpy'))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=tmp_path / "p")
    assert "no stale gold ids" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "0 []"
