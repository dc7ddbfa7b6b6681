"""action.yml's metadata as GitHub's runner loads it, before any step runs.

The runner reads every scalar of action.yml as a template: a ``${{ }}`` in a field whose
schema allows no expression (an input's or output's ``description``, the action's name and
description) fails the action's load ("Unrecognized named-value"), which fails every job
that uses it. An input's ``default`` may hold an expression over a few contexts only.
"""

import re

import yaml
from suite_paths import REPO_ROOT

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
# The contexts the runner's action schema allows in an input's default.
DEFAULT_CONTEXTS = {"github", "strategy", "matrix", "job", "runner"}
NAMED = re.compile(r"(?<![\w.'])([A-Za-z_][\w-]*)")


def _metadata():
    return yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))


def expression_free_fields(action: dict):
    """(place, text) of every field that must hold no expression."""
    for key in ("name", "description", "author"):
        yield key, action.get(key)
    for section in ("inputs", "outputs"):
        for name, spec in (action.get(section) or {}).items():
            for key in ("description", "deprecationMessage"):
                if key in spec:
                    yield f"{section}.{name}.{key}", spec[key]


def named_values(text: str) -> set[str]:
    """The contexts an expression's text names (strings and member names left out)."""
    names = set()
    for body in EXPRESSION.findall(text):
        body = re.sub(r"'[^']*'", "", body)
        names.update(n for n in NAMED.findall(body) if n not in {"true", "false", "null"})
    return names


def metadata_problems(action: dict) -> list[str]:
    problems = [f"{place}: holds an expression" for place, text in expression_free_fields(action)
                if isinstance(text, str) and "${{" in text]
    for name, spec in (action.get("inputs") or {}).items():
        default = spec.get("default")
        if isinstance(default, str):
            bad = named_values(default) - DEFAULT_CONTEXTS
            problems += [f"inputs.{name}.default: {n!r} is not allowed" for n in sorted(bad)]
    return problems


def test_no_expression_where_the_runner_allows_none():
    assert metadata_problems(_metadata()) == []


def test_the_check_finds_an_expression_in_a_description():
    action = _metadata()
    action["inputs"]["shard"]["description"] = "I/N, e.g. ${{ matrix.shard }}/8"
    assert metadata_problems(action) == ["inputs.shard.description: holds an expression"]


def test_the_check_finds_a_context_no_default_may_name():
    action = _metadata()
    action["inputs"]["cache"]["default"] = "${{ steps.x.outputs.y }}"
    assert metadata_problems(action) == ["inputs.cache.default: 'steps' is not allowed"]


def test_the_token_default_names_an_allowed_context():
    assert named_values(_metadata()["inputs"]["github-token"]["default"]) == {"github"}
