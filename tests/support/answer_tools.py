"""Real result files of the end-to-end tools, made offline by the tools themselves.

One small evaluation, the same for every tool: five graded answers over a gold set of six
questions. The answers are deterministic (promptfoo's ``echo`` provider, DeepEval's and
Ragas's exact-match scoring of a fixed answer), so what each tool writes is known:

- ``a1`` carries its id and passes; ``a3`` carries its id in the test's metadata and passes;
- "answerable 2" has no id, is matched by its text, and fails;
- "shared text" is the text of two gold questions (``d1``, ``d2``): ambiguous;
- ``zz`` is an id the gold set does not hold: unmatched;
- ``a4`` is in the gold set, and no answer covers it: missing, never wrong.

Each maker runs its tool in a process of its own (the packages are heavy to import and
must never reach the network: their telemetry is off), once per test session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from suite_paths import REPO_ROOT

GOLD = [
    {"id": "a1", "question": "answerable 1", "gold": ["c1"]},
    {"id": "a2", "question": "answerable 2", "gold": ["c2"]},
    {"id": "a3", "question": "answerable 3", "gold": ["c3"]},
    {"id": "a4", "question": "answerable 4", "gold": ["c4"]},
    {"id": "d1", "question": "shared text", "gold": ["c5"]},
    {"id": "d2", "question": "shared text", "gold": ["c6"]},
]
# (id or None, where the id is kept, question, the answer, the reference answer)
CASES = [
    ("a1", "vars", "answerable 1", "answerable 1", "answerable 1"),
    (None, None, "answerable 2", "answerable 2", "something else"),
    (None, None, "shared text", "shared text", "shared text"),
    ("zz", "vars", "not in the gold set", "x", "x"),
    ("a3", "metadata", "answerable 3", "answerable 3", "answerable 3"),
]
# What the join must make of them, per gold question (None: no verdict).
EXPECTED = {"a1": True, "a2": False, "a3": True, "a4": None, "d1": None, "d2": None}

QUIET = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1",
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES", "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO", "DEEPEVAL_GRPC_LOGGING": "NO",
    "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1", "OPENAI_API_KEY": "sk-not-used",
    # Any attempt to reach a network service goes to a closed loopback port, not the internet.
    "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "",
}
# Where .ci/run installs promptfoo (npm), unless CI_EVAL_PROMPTFOO names the executable.
PROMPTFOO_HOME = REPO_ROOT / ".ci-node"


def quiet_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(QUIET, HOME=str(home), PROMPTFOO_CONFIG_DIR=str(home / "promptfoo"),
               DEEPEVAL_RESULTS_FOLDER=str(home / "deepeval-results"))
    return env


def promptfoo_executable() -> str | None:
    named = os.environ.get("CI_EVAL_PROMPTFOO")
    if named:
        return named
    local = PROMPTFOO_HOME / "node_modules" / ".bin" / "promptfoo"
    return str(local) if local.exists() else shutil.which("promptfoo")


def make_promptfoo(folder: Path) -> Path:
    """``promptfoo eval -o results.json`` over the cases: the echo provider answers with the
    prompt, and a ``contains`` assertion on the reference grades it."""
    exe = promptfoo_executable()
    tests = []
    for qid, where, question, _, reference in CASES:
        test = {"vars": {"question": question}, "assert": [{"type": "equals", "value": reference}]}
        if qid is not None:
            (test["vars"] if where == "vars" else test.setdefault("metadata", {}))["id"] = qid
        tests.append(test)
    config = {"prompts": ["{{question}}"], "providers": ["echo"], "tests": tests}
    (folder / "promptfooconfig.json").write_text(json.dumps(config))
    out = folder / "results.json"
    done = subprocess.run([exe, "eval", "-c", "promptfooconfig.json", "-o", str(out), "--no-cache",
                           "--no-progress-bar", "--no-table"], cwd=folder, env=quiet_env(folder),
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    # promptfoo exits 100 when a test fails, as one does here by design.
    if done.returncode not in (0, 100) or not out.exists():
        raise RuntimeError(f"promptfoo eval failed ({done.returncode}): {done.stderr[-2000:]}")
    return out


DEEPEVAL_SCRIPT = """
import json, sys
from deepeval import evaluate
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase

class SameAnswer(BaseMetric):
    # Deterministic: the answer equals the reference (no model is asked).
    def __init__(self, threshold=0.5):
        self.threshold = threshold
    def measure(self, test_case, *args, **kwargs):
        self.score = 1.0 if test_case.actual_output == test_case.expected_output else 0.0
        self.success = self.score >= self.threshold
        self.reason = "compared with the reference"
        return self.score
    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)
    def is_successful(self):
        return self.success
    @property
    def __name__(self):
        return "SameAnswer"

cases = [LLMTestCase(input=q, actual_output=out, expected_output=ref,
                     additional_metadata=None if qid is None else {"id": qid})
         for qid, _, q, out, ref in json.loads(sys.argv[1])]
evaluate(cases, [SameAnswer()])
"""


def deepeval_python() -> str | None:
    """A Python with DeepEval: CI_EVAL_DEEPEVAL_PYTHON, else this one when it has it."""
    import importlib.util

    named = os.environ.get("CI_EVAL_DEEPEVAL_PYTHON")
    if named:
        return named
    return sys.executable if importlib.util.find_spec("deepeval") is not None else None


def make_deepeval(folder: Path) -> Path:
    """DeepEval's saved test run (``DEEPEVAL_RESULTS_FOLDER``) of the cases."""
    env = quiet_env(folder)
    done = subprocess.run([deepeval_python(), "-c", textwrap.dedent(DEEPEVAL_SCRIPT), json.dumps(CASES)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    results = Path(env["DEEPEVAL_RESULTS_FOLDER"])
    if done.returncode != 0 or not results.is_dir():
        raise RuntimeError(f"deepeval failed ({done.returncode}): {done.stderr[-2000:]}")
    return results


RAGAS_SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
from ragas import EvaluationDataset, evaluate
from ragas.metrics import ExactMatch

cases = json.loads(sys.argv[1])
data = EvaluationDataset.from_list([{"user_input": q, "response": out, "reference": ref}
                                    for _, _, q, out, ref in cases])
table = evaluate(data, metrics=[ExactMatch()], show_progress=False).to_pandas()
# Ragas keeps no id of its own: teams add their question ids as a column before saving.
table.insert(0, "id", [qid for qid, *_ in cases])
table.to_csv(sys.argv[2] + ".csv", index=False)
table.to_json(sys.argv[2] + ".jsonl", orient="records", lines=True)
"""


def make_ragas(folder: Path) -> tuple[Path, Path]:
    """``evaluate(...).to_pandas()`` of the cases, saved as CSV and as JSON lines."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(RAGAS_SCRIPT), json.dumps(CASES),
                           str(folder / "ragas")], cwd=folder, env=quiet_env(folder), capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"ragas failed ({done.returncode}): {done.stderr[-2000:]}")
    return folder / "ragas.csv", folder / "ragas.jsonl"
