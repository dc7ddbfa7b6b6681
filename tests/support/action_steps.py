"""action.yml's own steps, run as the runner runs them: a step's ``env`` with its expressions
evaluated against the inputs (action.yml's defaults under the ones given), the earlier steps'
outputs, ``runner.temp`` and ``github.action_path``, then its ``run`` script in bash. Only the
expressions action.yml uses are known; any other fails the test that meets it."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import yaml
from suite_paths import REPO_ROOT

_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


@cache
def action() -> dict:
    return yaml.safe_load((REPO_ROOT / "action.yml").read_text())


def step(name: str) -> dict:
    return next(s for s in action()["runs"]["steps"] if s.get("name") == name)


def input_values(given: dict[str, str], token: str) -> dict[str, str]:
    """Every input's value: the given ones, else action.yml's default."""
    values = {}
    for name, spec in action()["inputs"].items():
        default = str(spec.get("default", ""))
        values[name] = given.get(name, token if default == "${{ github.token }}" else default)
    return values


def evaluate(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in context:
            raise AssertionError(f"action.yml uses ${{{{ {name} }}}}, which the harness does not know")
        return context[name]

    return _EXPRESSION.sub(value, text)


def context_for(inputs: dict[str, str], runner_temp: Path, outputs: dict[str, dict[str, str]]) -> dict[str, str]:
    """What the expressions of the steps may name: ``outputs`` by step id."""
    ctx = {f"inputs.{k}": v for k, v in inputs.items()}
    ctx["runner.temp"] = str(runner_temp)
    ctx["github.action_path"] = str(REPO_ROOT)
    for step_id, values in outputs.items():
        ctx.update({f"steps.{step_id}.outputs.{k}": v for k, v in values.items()})
    return ctx


def step_env(name: str, context: dict[str, str]) -> dict[str, str]:
    """A step's ``env``; an output nobody set evaluates to "", as on the runner."""
    env = {}
    for key, text in (step(name).get("env") or {}).items():
        def value(match: re.Match) -> str:
            expr = match.group(1)
            if expr.startswith("steps.") and expr not in context:
                return ""
            return evaluate(match.group(0), context)

        env[key] = _EXPRESSION.sub(value, str(text))
    return env


def run_step(name: str, context: dict[str, str], base_env: dict[str, str], cwd: Path, script_dir: Path,
             timeout: float = 180) -> subprocess.CompletedProcess:
    """The step's script with ``bash -e`` as the runner's ``shell: bash`` does (the script
    from a file), in the job's environment plus the step's ``env``."""
    spec = step(name)
    assert spec.get("shell") == "bash", f"{name}: the harness runs bash steps only"
    script = script_dir / f"step-{re.sub(r'[^a-z]+', '-', name.lower())}.sh"
    script.write_text(spec["run"])
    env = {**base_env, **step_env(name, context)}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
