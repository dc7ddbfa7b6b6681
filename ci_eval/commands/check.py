"""`ci-eval check`: validate everything a run needs, short of calling the retriever."""

from __future__ import annotations

HELP = """Validate everything a run needs without calling the retriever: the config (every
value's type, gate metrics that are measured, floors and drops between 0 and 1, protected
ids and tag_min tags in the gold set), the gold set, the answers file, the index manifest,
the retriever itself (the python target imports, the command is found, the run file
parses; a langchain, llamaindex or haystack target is imported and built as `run` builds
it, a missing framework named with its pip install line, and params the object would not
receive refused). Lists gold ids missing from the index (stale), and acceptances that match
nothing any more: their question or chunk left the gold set, or (with --base, the base
branch's run artefact) the base no longer has the chunk where the accepted loss started,
because the change is merged. Suits a pre-commit hook.

The config is found as `run` finds it: ci-eval.toml, else [tool.ci-eval] in
pyproject.toml, in the current folder and then its parents up to the repository root.

examples:
  ci-eval check --config ci-eval.toml
  ci-eval check --base main-run.json
exit codes: 0 all good; 1 stale gold ids or acceptances that match nothing; 2 bad input
(each problem on its own line)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("check", help="validate config, gold set, index manifest and retriever (no retrieval)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE",
                   help="ci-eval.toml or pyproject.toml (default: found in . or its parents)")
    p.add_argument("--base", metavar="ARTEFACT",
                   help="the base branch's run artefact: name the acceptances whose loss it no longer starts from")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.preflight import check

    return check(args.config, base_path=args.base)
