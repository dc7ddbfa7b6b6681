"""`ci-eval label` from options to a served page: load the gold set and the runs, pool,
fetch the texts, serve until interrupted."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from ci_eval.errors import InputError
from ci_eval.label.session import Session, all_questions, initial_pools, now_utc
from ci_eval.label.sources import (
    candidate_origins,
    rankings_from_file,
    read_candidates,
    retriever_rankings,
    text_lookup,
)
from ci_eval.label.store import GoldStore

DEMO_TEXTS = "ci_eval.demo.retriever:texts"


@dataclass(frozen=True)
class Options:
    config: str | None = None
    gold: str | None = None
    pool: tuple[str, ...] = ()
    retriever: bool = True
    depth: int | None = None
    chunks: str | None = None
    candidates: str | None = None
    judge: str | None = None
    port: int = 0
    browser: bool = True
    demo: bool = False
    demo_candidates: bool = False
    suggest_endpoint: str | None = None
    suggest_command: str | None = None
    suggest_model: str | None = None
    suggest_key_env: str = "OPENAI_API_KEY"
    suggest_prompt: str | None = None
    suggest_max_requests: int = 500
    suggest_timeout: float = 60.0


def _config(opts: Options):
    from ci_eval.inputs.loaders import find_config, load_config

    if opts.demo:
        from ci_eval.demo.run import demo_config_path

        return load_config(demo_config_path("base"))
    if opts.config:
        return load_config(opts.config)
    try:
        return load_config(find_config())
    except InputError:
        if opts.gold:  # a gold set, --pool runs and --chunks need no config
            return None
        raise


def _judge(opts: Options) -> str:
    from ci_eval.inputs.gitinfo import git_user_name

    name = (opts.judge or git_user_name() or "").strip()
    if not name:
        raise InputError("no judge name: set git's user.name or give --judge NAME", "--judge")
    return name


def _demo_start(judge: str) -> dict:
    """The demo's questions with no judgement at all: labelling them again from scratch."""
    from importlib import resources

    from ci_eval.inputs.files import parse_json

    source = resources.files("ci_eval.demo").joinpath("gold.json")
    demo = parse_json(source.read_text(encoding="utf-8"), "demo gold set")
    pending = [{"id": q["id"], "question": q["question"], "gold": {}, **({"tags": q["tags"]} if q.get("tags") else {})}
               for q in demo["questions"]]
    return {"schema_version": 1, "index_version": demo.get("index_version"),
            "provenance": {"built_by": judge, "built_at": now_utc()[:10],
                           "method": "ci-eval label over the demo's pydoc topics corpus", "pending": pending},
            "questions": []}


def _demo_placed(lookup):
    """The demo's texts (a section's title, a blank line, its text) placed in their pydoc
    topics, as the demo's manifest places the sections, so spans can be selected in them."""
    from ci_eval.demo.corpus import load_chunks
    from ci_eval.demo.reingest import manifest_entries, reingested_chunks
    from ci_eval.label.sources import MAX_TEXT, Place

    chunks = (*load_chunks(), *reingested_chunks())
    entries = {e["id"]: e for e in manifest_entries(load_chunks()) + manifest_entries(reingested_chunks())}
    heads = {c.id: len(c.title) + 2 for c in chunks}

    def placed(ids):
        got = lookup(ids)
        for cid in got:
            entry, at = entries.get(cid), heads.get(cid)
            if entry is not None and "start" in entry and at is not None:
                length = entry["end"] - entry["start"]
                if at + length > MAX_TEXT:  # the shown text is clipped
                    length = max(0, MAX_TEXT - 1 - at)
                got.places[cid] = Place(entry["doc"], entry["start"], length, at)
        return got

    return placed


def _suggester(opts: Options):
    """The judge that suggests grades, or None. Its options are checked here, before the
    page opens; what it answers later can fail without stopping anyone labelling."""
    if not opts.suggest_endpoint and not opts.suggest_command:
        return None
    from ci_eval.gold.generators import ChatEndpoint
    from ci_eval.label.suggest import CommandJudge, EndpointJudge, Suggester, default_prompt

    if opts.suggest_command:
        return Suggester(CommandJudge(opts.suggest_command, timeout=opts.suggest_timeout * 10))
    if opts.suggest_prompt:
        from ci_eval.inputs.files import decode, read_bytes

        template = decode(read_bytes(opts.suggest_prompt, "prompt"), opts.suggest_prompt)
        for mark in ("{question}", "{text}"):
            if mark not in template:
                raise InputError(f"the prompt has no {mark}", opts.suggest_prompt)
    else:
        template = default_prompt()
    endpoint = ChatEndpoint(opts.suggest_endpoint, opts.suggest_model or "", os.environ.get(opts.suggest_key_env) or None,
                            timeout=opts.suggest_timeout)
    return Suggester(EndpointJudge(endpoint, template, opts.suggest_max_requests))


def build_session(opts: Options) -> Session:
    config = _config(opts)
    judge = _judge(opts)
    suggester = _suggester(opts)
    gold_path = opts.gold or (config.gold_set if config else None)
    if gold_path is None:
        raise InputError("no gold set: give --gold FILE or a config with gold_set", "--gold")
    store = GoldStore(gold_path)
    if opts.demo:
        store.create(_demo_start(judge))
    doc = store.read()
    runs = [rankings_from_file(p) for p in opts.pool]
    retrieve = None
    if config is not None and opts.retriever:
        asked = [(q["id"], q["question"]) for q in all_questions(doc) if not q.get("unanswerable")]
        rankings, failures = retriever_rankings(config, asked)
        if failures:
            print(f"ci-eval label: the retriever failed on {len(failures)} question(s); their pools come "
                  "from --pool only", file=sys.stderr)
        runs.insert(0, rankings)
        retrieve = lambda qid, text: retriever_rankings(config, [(qid, text)])[0].get(qid, [])  # noqa: E731
    if not runs:
        raise InputError("nothing to pool: give --pool FILE or a config with a retriever", "--pool")
    depth = opts.depth or (config.k if config else 10)
    pools = initial_pools(doc, runs, depth)
    lookup = text_lookup(DEMO_TEXTS if opts.demo and not opts.chunks else opts.chunks, config)
    if opts.demo and not opts.chunks:
        lookup = _demo_placed(lookup)
    texts = lookup(sorted({c for p in pools.values() for c in p}))
    candidates = read_candidates(opts.candidates) if opts.candidates else []
    origins = candidate_origins(opts.candidates) if opts.candidates else {}
    if opts.demo_candidates:
        from ci_eval.demo.candidates import demo_candidates

        candidates = demo_candidates([q.get("question", "") for q in all_questions(doc)]) + candidates
    session = Session(store, pools, texts, judge=judge, candidates=candidates, origins=origins, depth=depth,
                      retrieve=retrieve, fetch_texts=lookup, suggester=suggester)
    session.start_suggestions()
    return session


def _has_display() -> bool:
    """Without a display, Python's webbrowser may start a text browser in this terminal."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(opts: Options) -> int:
    from ci_eval.label.server import LabelServer

    # The port first: a port in use is said at once, not after the retriever has run.
    try:
        server = LabelServer(None, port=opts.port)
    except OSError as exc:  # in use, or not ours to bind
        raise InputError(f"cannot listen on 127.0.0.1:{opts.port}: {exc.strerror or exc}", "--port") from None
    try:
        server.session = session = build_session(opts)
    except BaseException:
        server.server_close()
        raise
    progress = session.state()["progress"]
    print(f"ci-eval label: {progress['to_judge']} chunk(s) to judge; open {server.url}", flush=True)
    print("ci-eval label: every decision is saved as you make it; Ctrl-C stops", file=sys.stderr, flush=True)
    if session.suggester is not None:
        print(f"ci-eval label: grades suggested by {session.suggester.identity} (Enter takes one, a digit "
              "gives your own)", file=sys.stderr, flush=True)
    if opts.browser and _has_display():
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("ci-eval label: stopped; everything judged is in the gold set", file=sys.stderr)
    finally:
        server.server_close()
    return 0
