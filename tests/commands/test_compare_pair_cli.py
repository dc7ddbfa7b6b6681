"""`ci-eval compare` reading base and head (inputs/paired_read.py), end to end in a
subprocess: a bad file gives the words and exit code reading that file alone gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from factories import ranked_with_gold_at as at
from factories import spec
from suite_paths import REPO_ROOT
from v2_files import out_of_range, write_v2

from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.artefact_file import read_run

SPECS = [spec(f"q{i}", ["g"], at(r)) for i, r in enumerate([1, 2, 1, 3, 1, 1, 2, 1, 4, 1])]


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", "compare", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})


def _said(path: Path) -> str:
    """What the command line says for the error reading ``path`` alone raises."""
    with pytest.raises(InputError) as caught:
        read_run(path)
    error = caught.value
    lines = error.lines() if isinstance(error, InputErrors) else [str(error)]
    return "".join(f"ci-eval: error: {line}\n" for line in lines)


def _truncated(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


@pytest.mark.parametrize("bad", ["base", "head", "both"])
def test_a_bad_file_is_said_as_reading_one_after_the_other_says_it(tmp_path, bad):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_v2(base, SPECS)
    write_v2(head, SPECS[1:])
    if bad in ("base", "both"):
        _truncated(base)
    if bad in ("head", "both"):
        assert out_of_range(head) == 9  # every row's first value: nine problems
    r = _cli(base, head, "--no-config", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == _said(head if bad == "head" else base)
    assert len(r.stderr.splitlines()) == (9 if bad == "head" else 1)


def test_a_good_pair_reads_as_before(tmp_path):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_v2(base, SPECS)
    write_v2(head, [spec(s["id"], ["g"], at(None)) if s["id"] == "q0" else s for s in SPECS])
    r = _cli(base, head, "--no-config", "--min", "hit@5=0.95", cwd=tmp_path)
    assert r.returncode == 1, r.stderr  # head: 9 of 10 found
    assert "### ❌ 1 question lost its gold chunk at k=5: `q0`" in r.stdout
    assert "Gate failed: hit@5 is 0.900, below the floor 0.950" in r.stdout
