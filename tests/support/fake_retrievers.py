"""Retrievers for tests: real Python callables and a real command-line program.

Run as a program (``python tests/fake_retrievers.py MODE``) it speaks the JSON-lines
protocol on stdin/stdout, misbehaving the way MODE says.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

# A tiny "index": each question's answer is the chunk named after its first word.
CHUNKS = ["alpha", "beta", "gamma", "delta", "epsilon"]


def lexical(question: str, k: int, **params) -> list[tuple[str, float]]:
    """Scores 1.0 for the chunk named by the question's first word, then a fixed tail."""
    first = question.split()[0].lower()
    scored = [(c, 1.0 if c == first else 0.5 - i / 10) for i, c in enumerate(CHUNKS)]
    return sorted(scored, key=lambda pair: -pair[1])[:k]


def lexical_missing(question: str, k: int, miss=(), **params) -> list[tuple[str, float]]:
    """``lexical``, but the chunk a question names is ranked last when its first word is in
    ``miss``: past k and the depth for those questions (a change that loses them)."""
    first = question.split()[0].lower()
    if first not in miss:
        return lexical(question, k)
    scored = [(c, 0.0 if c == first else 0.5 - i / 10) for i, c in enumerate(CHUNKS)]
    return sorted(scored, key=lambda pair: -pair[1])[:k]


def lexical_batch(questions: list[str], k: int, **params):
    return [lexical(q, k) for q in questions]


def echo_params(question: str, k: int, **params):
    return [(f"{key}={value}", 1.0) for key, value in sorted(params.items())]


def failing(question: str, k: int):
    if "boom" in question:
        raise RuntimeError("index shard 3 unavailable")
    return lexical(question, k)


def sleepy(question: str, k: int):
    time.sleep(float(question.split()[-1]))
    return lexical(question, k)


def garbage(question: str, k: int):
    word = question.split()[0]
    if word == "nan":
        return [("alpha", float("nan"))]
    if word == "dict":
        return {"alpha": 1.0}
    if word == "dup":
        return [("alpha", 1.0), ("alpha", 0.2), ("beta", 0.5)]
    if word == "tuple3":
        return [("alpha", 1.0, "extra")]
    return lexical(question, k)


# Every question the counting retriever was asked, in call order (the cache tests read it).
class CallLog:
    """The questions ``counting`` was called with, in a file: the retriever runs in ci-eval's
    worker process, so a list here would stay empty. The file is named by FAKE_CALLS_FILE."""

    def path(self) -> Path:
        return Path(os.environ["FAKE_CALLS_FILE"])

    def append(self, question: str) -> None:
        with self.path().open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(question) + "\n")

    def _read(self) -> list[str]:
        path = self.path()
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def clear(self) -> None:
        self.path().unlink(missing_ok=True)

    def __iter__(self):
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __eq__(self, other) -> bool:
        return self._read() == list(other)


CALLS = CallLog()


def counting(question: str, k: int, **params):
    """``failing`` that records each call: a paid retriever whose bill the cache should cut."""
    CALLS.append(question)
    return failing(question, k)


def manifest():
    return {"version": "idx-2", "ids": CHUNKS}


def _serve(mode: str) -> None:
    answered = 0
    pending = []
    for line in sys.stdin:
        query = json.loads(line)
        answered += 1
        results = [{"id": c, "score": s} for c, s in lexical(query["question"], query["k"])]
        if mode == "crash" and answered == 3:
            print("fatal: out of memory", file=sys.stderr, flush=True)
            sys.exit(7)
        if mode == "hang" and "hang" in query["question"]:
            time.sleep(60)
        if mode == "noise":
            for _ in range(2000):
                print("x" * 200, file=sys.stderr)
        if mode == "garbage" and answered == 2:
            print("this is not json", flush=True)
            continue
        if mode == "reverse":
            # Answer in pairs, second first: out-of-order output must be matched by id.
            pending.append({"id": query["id"], "results": results})
            if len(pending) == 2:
                for msg in reversed(pending):
                    print(json.dumps(msg), flush=True)
                pending.clear()
            continue
        if mode == "params":
            import os

            results = [{"id": os.environ["CI_EVAL_PARAMS"], "score": 1.0}]
        print(json.dumps({"id": query["id"], "results": results}), flush=True)
    for msg in reversed(pending):
        print(json.dumps(msg), flush=True)


if __name__ == "__main__":
    _serve(sys.argv[1] if len(sys.argv) > 1 else "ok")
