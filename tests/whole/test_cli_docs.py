"""Every command and option is documented: docs/cli.md is generated from the parsers, each
command's help carries an example, and README.md names every command.

Regenerate the reference with: python tests/whole/test_cli_docs.py
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from ci_eval.cli import build_parser

# Also run as a script (below), so the path is its own, not tests/support's.
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "cli.md"


def _subcommands(parser, prefix: str) -> dict:
    """``{"gold anchor": parser, ...}``: every level of subcommands, by its full name."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[f"{prefix}{name}"] = sub
                out.update(_subcommands(sub, f"{prefix}{name} "))
    return out


def _commands():
    parser = build_parser()
    return parser, _subcommands(parser, "")


def render() -> str:
    # A fixed width, so the text does not depend on the terminal that regenerates it.
    os.environ["COLUMNS"] = "100"
    parser, commands = _commands()
    parts = ["# Command-line reference", "",
             "Generated from the parsers by `python tests/whole/test_cli_docs.py`; a test fails when it is stale.",
             "", "```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in commands.items():
        parts += [f"## ci-eval {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(parts)


def test_cli_reference_names_every_command_and_option():
    # argparse's layout changes between Python versions, so the check is on content: each
    # command has its section and every option string appears in it.
    doc = DOC.read_text()
    for name, sub in _commands()[1].items():
        head = f"## ci-eval {name}\n"
        assert head in doc, f"docs/cli.md has no section for {name}: run python tests/whole/test_cli_docs.py"
        section = doc.split(head, 1)[1].split("\n## ", 1)[0]
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in section, f"ci-eval {name} {flag} is not in docs/cli.md"
            if not action.option_strings and action.dest != "help":
                assert action.metavar or action.dest, action


@pytest.mark.parametrize("name", sorted(_commands()[1]))
def test_every_command_has_an_example_and_is_in_the_readme(name):
    help_text = _commands()[1][name].format_help()
    assert "example" in help_text, f"ci-eval {name} --help has no example"
    assert f"ci-eval {name}" in (ROOT / "README.md").read_text(), f"README.md never mentions ci-eval {name}"


if __name__ == "__main__":
    DOC.write_text(render())
    print(f"wrote {DOC}")
