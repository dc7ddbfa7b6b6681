"""`ci-eval label`: judge pooled candidate chunks on a local page, saved into the gold set."""

from __future__ import annotations

HELP = """Serve a page on 127.0.0.1 (a random port, a token in the URL) that walks the questions
needing judgement and shows, for each, a pool of candidate chunks with their text: the union
of the top DEPTH results of the configured retriever and of every --pool run, minus what is
already judged, best rank first (TREC pooling). Grade with the keyboard: 0-3 (0 = judged
not relevant), ? can't tell (with a note), s skip, u unanswerable, e edit the question,
arrows move; select text in a chunk, then v and 1-3, to record it as span evidence (when
the chunk source gives each chunk's doc and start). Every decision is written through to
the gold set as you make it, with your name and the time in its provenance; stop at any
time and run it again to resume.

With a judge (--suggest-endpoint or --suggest-command) each chunk shows a suggested grade,
likely-relevant chunks first: Enter takes the suggestion as your grade, a digit gives your
own. The page shows the judge's agreement with you (Cohen's kappa, its 95% interval, the
confusion table), also kept in the gold set's provenance. A judge that fails stops
suggesting and says why; the page goes on without it. See docs/labelling.md.

examples:
  ci-eval label                                   # the config's retriever and gold set
  ci-eval label --pool head.json --pool base.json # what a PR's head and base retrieved
  ci-eval label --gold gold.json --pool run.trec --chunks chunks.jsonl
  ci-eval label --candidates mined.jsonl          # keep or bin new questions first
  ci-eval label --demo --gold demo-gold.json      # relabel the demo's questions from scratch
  ci-eval label --demo --demo-candidates --gold demo-gold.json   # and keep or bin new ones
  ci-eval label --suggest-endpoint http://localhost:11434/v1 --suggest-model llama3.1  # suggested grades
  ci-eval label --suggest-command "python judge.py"            # your own judge"""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("label", help="judge pooled candidate chunks on a local page, saved into the gold set",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", help="ci-eval.toml or pyproject.toml (default: found in .)")
    p.add_argument("--gold", metavar="FILE", help="the gold set to write (default: the config's gold_set)")
    p.add_argument("--pool", metavar="FILE", action="append", default=[],
                   help="a run artefact or TREC run file whose top results join the pool (repeatable)")
    p.add_argument("--no-retriever", dest="retriever", action="store_false",
                   help="pool only the --pool runs; do not run the configured retriever")
    p.add_argument("--depth", metavar="N", type=int, help="pool the top N of each run (default: the config's k, else 10)")
    p.add_argument("--chunks", metavar="SOURCE",
                   help='chunk texts: a JSONL file of {"id", "text"} (with "doc" and "start": spans of it '
                        'can be recorded) or module:function(ids) -> texts (default: the index manifest\'s '
                        '"text" map or chunk entries)')
    p.add_argument("--candidates", metavar="FILE",
                   help='candidate questions, {"question": ...} per line, to keep or bin before judging')
    p.add_argument("--judge", metavar="NAME", help="who is judging (default: git config user.name)")
    p.add_argument("--port", metavar="N", type=int, default=0, help="port on 127.0.0.1, 1 to 65535 (default: a free one); one in use is an error")
    p.add_argument("--no-browser", dest="browser", action="store_false", help="print the URL, do not open a browser")
    p.add_argument("--demo", action="store_true",
                   help="label the demo's questions over its corpus (needs --gold: created when missing)")
    p.add_argument("--demo-candidates", action="store_true",
                   help="with --demo: candidates mined from a shipped log and written by a stand-in "
                        "generator (questions from section headings), offline")
    judge = p.add_mutually_exclusive_group()
    judge.add_argument("--suggest-endpoint", metavar="URL",
                       help="suggest a grade for each chunk from an OpenAI-compatible API (its …/v1 base URL or "
                            "chat/completions URL)")
    judge.add_argument("--suggest-command", metavar="CMD",
                       help='suggest grades from a command: {"question_id", "question", "chunk", "text", '
                            '"max_grade"} a line on stdin, {"chunk", "grade"} a line on stdout, run once per question')
    p.add_argument("--suggest-model", metavar="NAME", help="the model to ask (required with --suggest-endpoint)")
    p.add_argument("--suggest-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="the environment variable holding the API key (default: %(default)s; unset: no key sent)")
    p.add_argument("--suggest-prompt", metavar="FILE",
                   help="the judge's prompt, with {question}, {text} and {max_grade} (default: the shipped one)")
    p.add_argument("--suggest-max-requests", type=int, default=500, metavar="N",
                   help="the most HTTP requests the judge makes, retries included (default: %(default)s)")
    p.add_argument("--suggest-timeout", type=float, default=60.0, metavar="S",
                   help="seconds one answer may take in all, from connecting to its last byte (a command: for "
                        "one question's chunks, times 10) "
                        "(default: %(default)s)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.errors import UsageError
    from ci_eval.label.app import Options, serve

    if args.depth is not None and args.depth < 1:
        raise UsageError("--depth must be at least 1")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0 (a free one) to 65535, got {args.port}")
    if args.demo and not args.gold:
        raise UsageError("--demo needs --gold FILE (the demo's own gold set is never overwritten)")
    if args.demo_candidates and not args.demo:
        raise UsageError("--demo-candidates goes with --demo")
    if args.suggest_endpoint and not args.suggest_model:
        raise UsageError("--suggest-endpoint needs --suggest-model (the name the server knows the model by)")
    if (args.suggest_model or args.suggest_prompt) and not args.suggest_endpoint:
        raise UsageError("--suggest-model and --suggest-prompt go with --suggest-endpoint (a command writes its own prompt)")
    if args.suggest_max_requests < 1 or args.suggest_timeout <= 0:
        raise UsageError("--suggest-max-requests must be at least 1 and --suggest-timeout positive")
    return serve(Options(config=args.config, gold=args.gold, pool=tuple(args.pool), retriever=args.retriever,
                         depth=args.depth, chunks=args.chunks, candidates=args.candidates, judge=args.judge,
                         port=args.port, browser=args.browser, demo=args.demo,
                         demo_candidates=args.demo_candidates, suggest_endpoint=args.suggest_endpoint,
                         suggest_command=args.suggest_command, suggest_model=args.suggest_model,
                         suggest_key_env=args.suggest_key_env, suggest_prompt=args.suggest_prompt,
                         suggest_max_requests=args.suggest_max_requests, suggest_timeout=args.suggest_timeout))
