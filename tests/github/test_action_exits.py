"""No way out of the user's code ends the action green, and the token never reaches it:
action.yml's own Run and Gate steps (tests/support/action_steps.py) on a real project, with the
loopback GitHub. Each retriever here is the user's code doing what a red team would."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from action_harness import GOLD, clean_environ, pr_event, run_action
from action_steps import context_for, input_values, run_step

CONFIG = 'gold_set = "gold.json"\nk = 1\n\n[retriever]\n{retriever}\n'
# fake_retrievers' lexical answer, written here so the project needs nothing on the path
LEXICAL = """
CHUNKS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]


def search(question, depth):
    first = question.split()[0].lower()
    return [(c, 1.0 if c == first else 0.5 - i / 10) for i, c in enumerate(CHUNKS)][:depth]
"""


def project(root: Path, retriever: str, modules: dict[str, str]) -> Path:
    root.mkdir()
    (root / "gold.json").write_text(json.dumps(GOLD))
    (root / "ci-eval.toml").write_text(CONFIG.format(retriever=retriever))
    for name, source in modules.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


def job_environ() -> dict[str, str]:
    # The project's own modules come from its folder (the config's), not the test support.
    env = clean_environ()
    env["PYTHONPATH"] = env["PYTHONPATH"].split(":", 1)[1]
    return env


def pr_job(gh, tmp_path, root, **inputs):
    return run_action(gh, tmp_path, root, "pull_request", pr_event(), environ=job_environ(), comment="off",
                      **inputs)


# -- every way out of user code is a red job -------------------------------------------------


def test_a_langchain_factory_that_calls_os_exit_0_is_a_red_job(gh, tmp_path):
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    root = project(tmp_path / "p", 'type = "langchain"\ntarget = "factory:build"',
                   {"factory.py": "import os\n\n\ndef build():\n    os._exit(0)\n"})
    job = pr_job(gh, tmp_path, root)

    assert job.code == 4, job.stderr
    assert "factory:build() called os._exit(0)" in job.stderr
    assert job.gate.returncode == 4 and "ci-eval exited with code 4" in job.gate.stdout


def test_an_atexit_os_exit_0_in_the_retriever_module_is_a_red_job(gh, tmp_path):
    failing_twice = LEXICAL.replace("    first =", '    if question in ("beta please", "gamma please"):\n'
                                             '        raise RuntimeError("index offline")\n    first =')
    root = project(tmp_path / "p", 'type = "python"\ntarget = "retriever:search"',
                   {"retriever.py": "import atexit, os\natexit.register(lambda: os._exit(0))\n" + failing_twice})
    job = pr_job(gh, tmp_path, root)

    assert job.code == 4, job.stderr
    assert job.outputs["verdict"] == "error"
    assert "the retriever failed on 2 question(s)" in job.stderr
    assert job.gate.returncode == 4


@pytest.mark.parametrize(("outputs", "inputs", "code", "says"), [
    ({"exit-code": "0", "verdict": "pass"}, {}, 0, ""),
    # what an exit code replaced by user code leaves behind: no verdict, or not "pass"
    ({"exit-code": "0"}, {}, 4, "without a verdict"),
    ({"exit-code": "0", "verdict": "error"}, {}, 4, "the verdict error"),
    ({"exit-code": "0", "verdict": "fail"}, {}, 1, "the verdict fail"),
    # the user asked for a failed gate not to fail the job; a shard's job writes a part
    ({"exit-code": "0", "verdict": "fail"}, {"fail-on-gate": "false"}, 0, ""),
    ({"exit-code": "0", "part-name": "ci-eval-part-1-of-2"}, {"shard": "1/2"}, 0, ""),
    ({"exit-code": "0"}, {"shard": "1/2"}, 3, "no shard part"),
    ({"exit-code": "0"}, {"mode": "comment"}, 0, ""),
    ({"exit-code": "1", "verdict": "fail"}, {}, 1, "gate failed"),
    ({}, {}, 3, "no exit code"),
])
def test_the_gate_step_requires_the_verdict_pass_as_well_as_exit_0(tmp_path, outputs, inputs, code, says):
    context = context_for(input_values(inputs, "unused"), tmp_path, {"run": outputs})
    done = run_step("Gate", context, clean_environ(), tmp_path, tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    assert says in done.stdout
    assert (done.stdout.startswith("::error title=ci-eval::")) == (code != 0)


# -- the token never reaches the user's code -------------------------------------------------

# Each retriever reads its own environment block and its parent's, as they were at exec time,
# and leaves them beside itself for the test.
PY_SNOOP = LEXICAL + """
import os
from pathlib import Path

HERE = Path(__file__).parent
for name, path in (("self", "/proc/self/environ"), ("parent", f"/proc/{os.getppid()}/environ")):
    (HERE / f"python-{name}.environ").write_bytes(Path(path).read_bytes())
(HERE / "python-os-environ.txt").write_text(repr(dict(os.environ)))
"""
CMD_SNOOP = f"""#!{sys.executable}
import json, os, sys
from pathlib import Path

HERE = Path(__file__).parent
for name, path in (("self", "/proc/self/environ"), ("parent", f"/proc/{{os.getppid()}}/environ")):
    (HERE / f"command-{{name}}.environ").write_bytes(Path(path).read_bytes())
for line in sys.stdin:
    q = json.loads(line)
    first = q["question"].split()[0].lower()
    print(json.dumps({{"id": q["id"], "results": [{{"id": first, "score": 1.0}}]}}), flush=True)
"""


@pytest.mark.parametrize("kind", ["python", "command"])
def test_neither_retriever_finds_the_token_in_its_or_its_parent_s_environment(gh, tmp_path, kind):
    if kind == "python":
        root = project(tmp_path / "p", 'type = "python"\ntarget = "snoop:search"', {"snoop.py": PY_SNOOP})
    else:
        root = project(tmp_path / "p", 'type = "command"\ncommand = ["./snoop"]', {"snoop": CMD_SNOOP})
        (root / "snoop").chmod(0o755)
    job = pr_job(gh, tmp_path, root)

    assert job.code == 0, job.stderr
    found = {p.name: p.read_bytes() for p in root.glob(f"{kind}-*.environ")}
    assert sorted(found) == [f"{kind}-parent.environ", f"{kind}-self.environ"]
    for name, block in found.items():
        assert b"PATH=" in block, name  # the block was read, and it is an environment
        assert gh.token.encode() not in block, name
    if kind == "python":
        assert gh.token not in (root / "python-os-environ.txt").read_text()


# A command retriever that walks up its process tree, leaving its own environment block and
# every ancestor's beside itself (with that process's command line), for the test to search:
# the retriever cannot know the token, so it cannot search itself. It stops at the test's own
# process (SNOOP_TOP), which stands for the runner: what is above it is not the job's.
TREE_SNOOP = f"""#!{sys.executable}
import json, os, sys
from pathlib import Path

HERE = Path(__file__).parent
seen = {{"self": [" ".join(sys.argv), Path("/proc/self/environ").read_bytes().hex()],
        "os.environ": ["", "\\0".join(f"{{k}}={{v}}" for k, v in os.environ.items()).encode().hex()]}}
pid = os.getppid()
while pid > 1 and pid != int(os.environ["SNOOP_TOP"]):
    cmdline = Path(f"/proc/{{pid}}/cmdline").read_bytes().replace(b"\\0", b" ").decode(errors="replace")
    seen[str(pid)] = [cmdline, Path(f"/proc/{{pid}}/environ").read_bytes().hex()]
    stat = Path(f"/proc/{{pid}}/stat").read_text()
    pid = int(stat.rsplit(")", 1)[1].split()[1])
(HERE / "tree.json").write_text(json.dumps(seen))
for line in sys.stdin:
    q = json.loads(line)
    first = q["question"].split()[0].lower()
    print(json.dumps({{"id": q["id"], "results": [{{"id": first, "score": 1.0}}]}}), flush=True)
"""


def _tree_project(tmp_path) -> Path:
    root = project(tmp_path / "p", 'type = "command"\ncommand = ["./snoop"]', {"snoop": TREE_SNOOP})
    (root / "snoop").chmod(0o755)
    return root


def _assert_no_token_in_the_tree(root: Path, token: str) -> list[str]:
    """The command lines of the processes read; fails on the token in any block."""
    seen = json.loads((root / "tree.json").read_text())
    for name, (cmdline, block) in seen.items():
        block = bytes.fromhex(block)
        assert b"PATH=" in block, name  # an environment was read
        assert token.encode() not in block, f"the token is in the environment of {name}: {cmdline}"
    return [cmdline for cmdline, _ in seen.values()]


def test_no_process_above_a_command_retriever_holds_the_token_even_when_the_job_sets_github_token(gh, tmp_path):
    # A workflow that sets the token for the whole job (`env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}`
    # at the job level, for the gh CLI, say), and a copy of it under a name of its own.
    root = _tree_project(tmp_path)
    environ = {**job_environ(), "SNOOP_TOP": str(os.getpid()), "GITHUB_TOKEN": gh.token, "GH_TOKEN": gh.token, "DEPLOY_AUTH": f"Bearer {gh.token}"}
    job = run_action(gh, tmp_path, root, "pull_request", pr_event(), environ=environ, comment="always")

    assert job.code == 0, job.stderr
    assert len(gh.comments_on(7)) == 1  # ci-eval had the token and used it
    cmdlines = _assert_no_token_in_the_tree(root, gh.token)
    # the blocks read include the ci-eval process and the shell that waits for it
    assert any("entry.py action" in c for c in cmdlines) and any("run.sh" in c for c in cmdlines)


def test_ci_eval_action_started_with_the_token_in_its_environment_starts_again_without_it(gh, tmp_path):
    # `ci-eval action` run by hand, or by a launcher of its own, as its --help allows.
    import subprocess

    from action_harness import REPO

    root = _tree_project(tmp_path)
    (tmp_path / "event.json").write_text(json.dumps(pr_event()))
    (tmp_path / "output").touch()
    env = {**job_environ(), "SNOOP_TOP": str(os.getpid()), "INPUT_GITHUB-TOKEN": gh.token, "INPUT_COMMENT": "off", "GITHUB_ACTIONS": "true",
           "GITHUB_API_URL": gh.api_url, "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_EVENT_PATH": str(tmp_path / "event.json"), "GITHUB_SHA": "0" * 40,
           "GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/ci-eval.yml@refs/heads/main",
           "GITHUB_OUTPUT": str(tmp_path / "output"), "RUNNER_TEMP": str(tmp_path / "temp"),
           "CI_EVAL_RETRY_BACKOFF": "0.01"}
    done = subprocess.run([sys.executable, "-m", "ci_eval", "action"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120, check=False)

    assert done.returncode == 0, done.stderr
    assert gh.requests  # it talked to GitHub with the token it was handed
    assert all(r.headers["authorization"] == f"token {gh.token}" for r in gh.requests)
    cmdlines = _assert_no_token_in_the_tree(root, gh.token)
    assert any("-m ci_eval action" in c for c in cmdlines)


# -- the workspace cannot stand in for the tool ----------------------------------------------


def test_a_repository_folder_named_ci_eval_does_not_run_instead_of_the_tool(gh, tmp_path):
    impostor = "raise SystemExit('the repository folder ran, not the tool')\n"
    root = project(tmp_path / "p", 'type = "python"\ntarget = "retriever:search"',
                   {"retriever.py": LEXICAL, "ci_eval/__init__.py": impostor, "ci_eval/__main__.py": impostor})
    job = pr_job(gh, tmp_path, root)

    assert job.code == 0, job.stderr
    assert "the repository folder ran" not in job.stderr
    assert job.outputs["verdict"] == "pass" and job.gate.returncode == 0


# An index.callable that looks for the token everywhere its process can: its environment
# block, its parent's, and every writable page of its own memory (a dump left beside it for
# the test to search; the callable cannot know the token, so it cannot search itself).
INDEX_SNOOP = """
import os
from pathlib import Path

HERE = Path(__file__).parent


def _writable_memory():
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                yield mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue  # a guard page, vsyscall


def index():
    marker = "-".join(["index", "callable", "was", "here"])  # made at run time: in memory only
    for name, path in (("self", "/proc/self/environ"), ("parent", f"/proc/{os.getppid()}/environ")):
        (HERE / f"index-{name}.environ").write_bytes(Path(path).read_bytes())
    with open(HERE / "index-memory.bin", "wb") as out:
        for block in _writable_memory():
            out.write(block)
    return {"version": marker, "ids": ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]}
"""


def test_the_index_callable_finds_the_token_nowhere_in_its_process(gh, tmp_path):
    root = project(tmp_path / "p", 'type = "python"\ntarget = "retriever:search"',
                   {"retriever.py": LEXICAL, "snoop_index.py": INDEX_SNOOP})
    with (root / "ci-eval.toml").open("a") as fh:
        fh.write('\n[index]\ncallable = "snoop_index:index"\n')
    job = pr_job(gh, tmp_path, root)

    assert job.code == 0, job.stderr
    memory = (root / "index-memory.bin").read_bytes()
    assert b"index-callable-was-here" in memory  # the dump holds what the process made
    assert gh.token.encode() not in memory
    for name in ("self", "parent"):
        block = (root / f"index-{name}.environ").read_bytes()
        assert b"PATH=" in block and gh.token.encode() not in block, name
