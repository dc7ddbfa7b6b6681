"""The same bytes from two revisions of ci-eval on a 100,000-question pair.

    python benchmarks/check_identical.py [--before main] [--questions 100000]

Makes a base and a head artefact with this tree's ``ci-eval run`` on a project shaped like a
user's (benchmarks/user_shaped.py, fixed seed), then runs ``ci-eval compare`` on that pair
with the tree at ``--before`` (exported with ``git archive`` into a temporary folder) and
with this tree: the comment on stdout, the JSON report (``--json-out``), the full report
the job summary shows (``--summary-out``), the plot (``--svg-out``), the JSON printed with
``--format json``, and the exit code. Prints each output's size and whether its bytes are
equal; exits 1 when one differs. A check, not a timing: it asserts bytes, not seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import user_shaped  # noqa: E402

OUTPUTS = ("stdout.md", "report.json", "summary.md", "plot.svg", "stdout.json")


def _export(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "ci_eval"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _compare(tree: Path, project: Path, base: Path, head: Path, out: Path) -> int:
    out.mkdir()
    env = user_shaped.environment(project, tree, "head")
    argv = [sys.executable, "-m", "ci_eval", "compare", str(base), str(head)]
    started = time.perf_counter()
    shown = subprocess.run([*argv, "--json-out", str(out / "report.json"), "--summary-out", str(out / "summary.md"),
                            "--svg-out", str(out / "plot.svg")], cwd=project, env=env, capture_output=True)
    print(f"  {tree.name}: compare {time.perf_counter() - started:.1f} s, exit {shown.returncode}")
    (out / "stdout.md").write_bytes(shown.stdout)
    as_json = subprocess.run([*argv, "--format", "json"], cwd=project, env=env, capture_output=True)
    (out / "stdout.json").write_bytes(as_json.stdout)
    if shown.returncode not in (0, 1):
        raise SystemExit(f"compare failed in {tree}: {shown.stderr.decode()[-1500:]}")
    return shown.returncode * 10 + as_json.returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the revision to compare against (default main)")
    parser.add_argument("--questions", type=int, default=100_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ci-eval-identical-") as tmp:
        tmp = Path(tmp)
        before, project = tmp / "before", tmp / "project"
        before.mkdir()
        project.mkdir()
        _export(args.before, before)
        user_shaped.write_project(project, args.questions)
        base, head = project / "base.json", project / "head.json"
        for side, out in (("base", base), ("head", head)):
            user_shaped.run_artefact(project, side, out, ROOT, sys.executable)
        print(f"{args.questions:,} questions: base {base.stat().st_size:,} bytes, head {head.stat().st_size:,} bytes")
        codes = {name: _compare(tree, project, base, head, tmp / f"out-{name}")
                 for name, tree in (("before", before), ("after", ROOT))}
        same = codes["before"] == codes["after"]
        print(f"exit codes: before {codes['before']}, after {codes['after']}: {'same' if same else 'DIFFERENT'}")
        for name in OUTPUTS:
            old, new = (tmp / "out-before" / name).read_bytes(), (tmp / "out-after" / name).read_bytes()
            equal = old == new
            same = same and equal
            print(f"{name:<12} {len(new):>12,} bytes  sha256 {hashlib.sha256(new).hexdigest()[:16]}  "
                  f"{'identical' if equal else f'DIFFERENT (before {len(old):,} bytes)'}")
    print("all identical" if same else "DIFFERENCES FOUND")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
