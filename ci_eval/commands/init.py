"""`ci-eval init`: start a project's config, gold set, example retriever and workflows."""

from __future__ import annotations

HELP = """Write ci-eval.toml, eval/gold.json (three example questions to replace), an example
retriever (eval/example_retriever.py over eval/example_chunks.json) and the two GitHub
workflows (.github/workflows/ci-eval.yml, and ci-eval-comment.yml for pull requests from
forks), then print the next steps. LangChain, LlamaIndex or Haystack declared in
pyproject.toml or requirements*.txt selects that retriever type; a promptfoo config, or
DeepEval or Ragas declared there, adds a commented [answers] section that reads its results
into the failure matrix (docs/answers.md). `ci-eval check` and
`ci-eval run` work on the result before any edit. Nothing is overwritten: an existing file
is an error naming it and nothing is written, unless --force.

examples:
  ci-eval init
  ci-eval init --dir services/search --framework haystack
exit codes: 0 written; 2 a file exists (without --force) or bad usage."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("init", help="write a starting config, gold set, example retriever and workflows",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", metavar="DIR", default=".", help="the project folder (default: %(default)s)")
    p.add_argument("--framework", default="auto", choices=["auto", "none", "langchain", "llamaindex", "haystack"],
                   help="retriever type of the example: auto detects it from the project's dependencies, "
                        "none is a plain Python function (default: %(default)s)")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from ci_eval.inputs.scaffold import init_project

    print(init_project(Path(args.dir), args.framework, args.force))
    return 0
