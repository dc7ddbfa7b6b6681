"""A small labelling project on disk, and `ci-eval label` as a real process, for the tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from suite_paths import SUPPORT

# fake_retrievers.lexical ranks the chunk named by the question's first word first, then the
# others in the order alpha, beta, gamma, delta, epsilon.
TEXTS = {
    "alpha": "Alpha is the first letter.",
    "beta": "Beta comes second.",
    "gamma": "Gamma is third.",
    "delta": "Delta is fourth.",
    "epsilon": "Epsilon is fifth.",
}


def write_project(folder: Path, *, texts=TEXTS, questions=None, k: int = 3) -> Path:
    questions = questions or [
        {"id": "q1", "question": "alpha please", "gold": ["alpha"]},
        {"id": "q2", "question": "gamma please", "gold": {"gamma": 2}},
    ]
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    (folder / "chunks.jsonl").write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in texts.items()))
    (folder / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = {k}\n[retriever]\ntype = "python"\ntarget = "fake_retrievers:lexical"\n'
        '[index]\ncallable = "fake_retrievers:manifest"\n')
    return folder


class LabelProcess:
    """`ci-eval label --no-browser` in its own process; its first stdout line names the URL."""

    def __init__(self, cwd: Path, *args: str, judge: str = "Ann"):
        env = {**os.environ, "PYTHONPATH": str(SUPPORT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ci_eval", "label", "--no-browser", "--judge", judge, *args],
            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?t=(\S+)", line)
        if not found:
            self.proc.kill()
            raise AssertionError(f"no URL from ci-eval label: {line!r} {self.proc.stderr.read()!r}")
        self.origin, self.token = found.group(1), found.group(2)
        self.url = f"{self.origin}/?t={self.token}"

    def kill(self) -> str:
        """As a crash would: no clean shutdown. Returns what the process wrote on stderr."""
        self.proc.kill()
        self.proc.wait(timeout=30)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return err


def post(label: LabelProcess, route: str, body):
    """One API call to a running `ci-eval label`, as its page makes it: (status, answer).
    ``body`` is a dict to send as JSON, or the bytes to send as they are."""
    import http.client

    host, port = label.origin.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("POST", route, body=body if isinstance(body, bytes) else json.dumps(body).encode(),
                     headers={"X-CI-Eval-Token": label.token, "Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()
