"""How long a hostile model endpoint can hold `ci-eval gold generate`: the one client's
deadline of a whole answer against servers that keep every single read short.

Each case is a loopback server of tests/support/raw_endpoint.py; the figure is the wall time
of one `ChatEndpoint.ask` in this process (the question the deadline answers), then of the
whole `ci-eval gold generate --timeout T` process (its start-up included), best of --repeat.

    python benchmarks/bench_model_endpoint.py               # --timeout 3, a byte every 0.5 s
    python benchmarks/bench_model_endpoint.py --timeout 1 --interval 0.2 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

from raw_endpoint import RawEndpoint, trickle  # noqa: E402

from ci_eval.errors import InputError  # noqa: E402
from ci_eval.gold.generators import Budget, ChatEndpoint  # noqa: E402


def one_answer(url: str, timeout: float) -> tuple[float, str]:
    start = time.monotonic()
    try:
        ChatEndpoint(url, "m", None, timeout=timeout).ask("Passage:\nwings stall", Budget(10))
        said = "answered"
    except InputError as exc:
        said = exc.message
    return time.monotonic() - start, said


def whole_process(url: str, timeout: float, folder: Path) -> tuple[float, int]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ci_eval", "gold", "generate", "--manifest", "index.jsonl",
                           "--no-gold", "--endpoint", url, "--model", "m", "--count", "1", "--timeout", str(timeout),
                           "--out", "gen.jsonl", "--force"], cwd=folder, capture_output=True, text=True)
    return time.monotonic() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between two trickled bytes")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "index.jsonl").write_text(json.dumps({"id": "a#0", "doc": "a", "text": "Wings stall."}) + "\n")
        for label, headers_too in (("body trickled", False), ("status line and headers trickled", True)):
            asks, procs = [], []
            for _ in range(args.repeat):
                with RawEndpoint(trickle(args.interval, headers_too=headers_too)) as api:
                    seconds, said = one_answer(api.url, args.timeout)
                    asks.append(seconds)
                with RawEndpoint(trickle(args.interval, headers_too=headers_too)) as api:
                    seconds, code = whole_process(api.url, args.timeout, folder)
                    procs.append(seconds)
            print(f"{label}, a byte every {args.interval:g} s, --timeout {args.timeout:g}: one answer given up "
                  f"after {min(asks):.2f} s; the whole command {min(procs):.2f} s, exit {code}")
            print(f"  {said}")


if __name__ == "__main__":
    main()
