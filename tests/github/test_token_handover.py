"""github/token_handover.py: the environment a process starts again with, and the pipe the
token comes on, read by a real exec'd interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from suite_paths import REPO_ROOT

from ci_eval.github.token_handover import CARRIERS, carries_token, clean_environment

TOKEN = "ghs_" + "k3y" * 12


def test_the_clean_environment_keeps_the_inputs_and_drops_every_carrier_of_the_token():
    environ = {"PATH": "/usr/bin", "INPUT_CONFIG": "ci-eval.toml", "OPENAI_API_KEY": "sk-other",
               "CI_EVAL_TOKEN_FD": "9", "DEPLOY": f"Bearer {TOKEN}", **{name: TOKEN for name in CARRIERS}}
    assert carries_token(environ)
    clean = clean_environment(environ, TOKEN)
    # what ci-eval reads after the exec, and the user's other secrets for the retriever, stay
    assert clean == {"PATH": "/usr/bin", "INPUT_CONFIG": "ci-eval.toml", "OPENAI_API_KEY": "sk-other"}
    assert not carries_token(clean)


def test_a_short_token_is_not_searched_for_in_values():
    # "abc" would take out every variable that happens to contain it
    assert clean_environment({"PATH": "/abc/bin", "GH_TOKEN": "abc"}, "abc") == {"PATH": "/abc/bin"}


def test_the_exec_d_program_finds_the_token_on_its_pipe_and_nowhere_in_its_environment(tmp_path):
    child = ("import json, os, sys; sys.path.pop(0); from ci_eval.github.token_handover import take_handed_token; "
             "block = open('/proc/self/environ', 'rb').read().decode(); "
             "print(json.dumps({'token': take_handed_token(os.environ), 'pid': os.getpid(), 'block': block}))")
    hand_over = (f"import os, sys; sys.path.pop(0); print(os.getpid(), flush=True); "
                 f"from ci_eval.github.token_handover import exec_without_token; "
                 f"exec_without_token([sys.executable, '-c', {child!r}], os.environ)")
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO_ROOT), "GITHUB_TOKEN": TOKEN, "GH_TOKEN": TOKEN}
    done = subprocess.run([sys.executable, "-c", hand_over], env=env, capture_output=True, text=True,
                          timeout=60, check=True, cwd=tmp_path)
    pid, report = done.stdout.splitlines()
    seen = json.loads(report)
    assert seen["token"] == TOKEN  # handed over whole
    assert seen["pid"] == int(pid)  # the same process, started again: its parent sees no new child
    assert TOKEN not in seen["block"] and "CI_EVAL_TOKEN_FD=" in seen["block"]
