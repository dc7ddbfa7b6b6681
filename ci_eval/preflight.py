"""Everything a run needs, checked without calling the retriever: what `ci-eval check`
reports, and the config-level part of it that `run` and the action check first.

A problem is reported at its place in its file, all problems at once, exit 2.
"""

from __future__ import annotations

import os
import shutil

from ci_eval.errors import InputError, InputErrors


def _place(config, place: str) -> str:
    return ".".join([*config.prefix, place])


def command_problems(config) -> list[InputError]:
    """The command retriever's program exists: on PATH, or relative to the config file's
    folder when it has a slash (the command runs in that folder)."""
    r = config.retriever
    if r.type != "command" or not r.command:
        return []
    program = r.command[0]
    place = _place(config, "retriever.command[0]")
    if "/" in program:
        path = os.path.join(os.path.abspath(config.base_dir or "."), program)
        if not os.path.isfile(path):
            return [InputError(f"retriever command {program!r} not found (looked for {path})", config.source, place)]
        if not os.access(path, os.X_OK):
            return [InputError(f"retriever command {path!r} is not executable (chmod +x it)", config.source, place)]
        return []
    search = r.env.get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(program, path=search) is None:
        return [InputError(f"retriever command {program!r} is not on PATH", config.source, place)]
    return []


def config_problems(config, gold) -> list[InputError]:
    """What the config says about the other inputs: gate names in the gold set, the
    command on PATH. Cheap; run, the action and check all do it before retrieving."""
    from ci_eval.core.config import gold_problems

    tags = {t for q in gold.questions for t in q.tags}
    return gold_problems(config, [q.id for q in gold.questions], tags) + command_problems(config)


def resolved_gold(config, gold, manifest):
    """The gold set a run measures: its evidence, if any, resolved against the manifest
    into chunk judgements (core/gold/evidence.py). An evidence metric in ``metrics`` needs
    span gold to measure."""
    from ci_eval.core.gold.evidence import resolve
    from ci_eval.core.measure.names import resolve_metric

    on_evidence = [(i, m) for i, m in enumerate(config.metrics) if resolve_metric(m).on_evidence]
    if on_evidence and not any(q.evidence for q in gold.questions):
        i, name = on_evidence[0]
        raise InputError(f"{name} is measured on evidence named by document span or quote, and "
                         f"{config.gold_set} names none (docs/span-gold.md)", config.source, _place(config, f"metrics[{i}]"))
    return resolve(gold, manifest, config.gold_set).gold


def _collect(problems: list, step):
    """Run one check step; keep its problems and go on with the next (all at once)."""
    try:
        return step()
    except InputErrors as exc:
        problems.extend(exc.problems)
    except InputError as exc:
        problems.append(exc)
    return None


def _import_target(config) -> None:
    from ci_eval.inputs.pyimport import ImportFailed, import_target

    try:
        import_target(config.retriever.target, config.source, _place(config, "retriever.target"), config.base_dir)
    except ImportFailed as exc:
        raise exc.as_input_error() from None


_FRAMEWORKS = ("langchain", "llamaindex", "haystack")


def _framework_ready(config) -> None:
    """A framework target as `run` gets it before the first question: the package imported
    (a missing one named with its pip line), the target imported and built by its factory,
    its type checked, the depth and params fitted to it. Only no question is asked."""
    import importlib

    from ci_eval.errors import RetrieverError
    from ci_eval.retrieval.registry import RUNNER_MODULES

    try:
        importlib.import_module(RUNNER_MODULES[config.retriever.type]).prepare(config)
    except InputError:
        raise
    except RetrieverError as exc:  # the factory failed: nothing could be retrieved
        raise InputError(str(exc), config.source, _place(config, "retriever.target")) from None


def _retriever_ready(config) -> None:
    r = config.retriever
    if r.type == "python":
        _import_target(config)
    elif r.type in _FRAMEWORKS:
        _framework_ready(config)
    elif r.type == "run-file":
        from ci_eval.retrieval.run_file import read_run_file

        read_run_file(r.path, r.format, r.path)


def check(config_path, say=print, base_path: str | None = None) -> int:
    """`ci-eval check`: 0 all good, 1 stale gold ids or acceptances that match nothing,
    raises InputErrors (exit 2). ``base_path``: the base branch's run artefact, against
    which the acceptances are checked too."""
    from ci_eval.core.gold.origin import with_origin_tags
    from ci_eval.inputs.answers import load_answers
    from ci_eval.inputs.loaders import load_config, load_gold_set, load_manifest

    config = load_config(config_path)
    problems: list[InputError] = []
    loaded = _collect(problems, lambda: load_gold_set(config.gold_set))
    gold = with_origin_tags(loaded[0]) if loaded else None  # as `run` tags it: tag_min may name an origin
    if gold is not None:
        problems += config_problems(config, gold)
    else:
        problems += command_problems(config)
    _collect(problems, lambda: _retriever_ready(config))
    manifest = _collect(problems, lambda: load_manifest(config))
    if gold is not None and not problems:
        gold = _collect(problems, lambda: resolved_gold(config, gold, manifest))
    joined = None
    if config.answers and gold is not None:
        joined = _collect(problems, lambda: load_answers(config.answers, gold.questions, config.base_dir,
                                                         config.source))
    accepted = _collect(problems, lambda: _read_accepted(config))
    if problems:
        raise InputErrors(problems)
    if joined:
        _report_answers(joined[1], say)
    code = _report(config, gold, manifest, say)
    return max(code, _report_accepted(accepted, gold, base_path, say))


def _read_accepted(config):
    from ci_eval.inputs.acceptances import read_acceptances

    return read_acceptances(config.accepted_path)


def _report_accepted(accepted, gold, base_path: str | None, say) -> int:
    """The acceptance file's entries that can no longer match a loss (1), if any."""
    from ci_eval.core.compare.acceptance import matching_nothing

    if accepted is None or not accepted.entries:
        return 0
    base = None
    if base_path is not None:
        from ci_eval.core.artefact.question_columns import ById
        from ci_eval.inputs.artefact_file import read_run

        base = ById(read_run(base_path).questions)
    stale = matching_nothing(accepted.entries, {q.id: [g for g, _ in q.gold] for q in gold.questions}, base)
    for a, why in stale:
        say(f"{accepted.source}: acceptance of {a.question!r} matches nothing: {why}")
    if stale:
        say(f"{len(stale)} of {len(accepted.entries)} acceptance(s) match nothing: remove them from {accepted.source}")
        return 1
    against = " against the base" if base is not None else ""
    say(f"{accepted.source}: ok ({len(accepted.entries)} acceptance(s), each still names a gold chunk{against})")
    return 0


def _report_answers(record: dict, say) -> None:
    """The end-to-end verdicts: where from, how many questions they cover, what did not join."""
    from ci_eval.core.answers import summary_lines

    for line in summary_lines(record):
        say(line)


def _report(config, gold, manifest, say) -> int:
    answerable = sum(not q.unanswerable for q in gold.questions)
    say(f"{config.source}: ok ({config.retriever.type} retriever, k={config.k}, "
        f"depth={config.retriever.depth}, {len(config.metrics)} metrics)")
    say(f"{config.gold_set}: ok ({len(gold.questions)} questions, {answerable} answerable, "
        f"{len(gold.questions) - answerable} unanswerable)")
    if manifest is None:
        say("index: no manifest configured, so stale gold ids cannot be checked")
        return 0
    from ci_eval.core.gold.anchors import drifted_ids, live_index_ids

    drifted = drifted_ids(gold.questions, gold.anchors, manifest)
    live = live_index_ids(manifest, drifted)
    stale = [(q.id, q.stale_ids(live)) for q in gold.questions]
    stale = [(qid, ids) for qid, ids in stale if ids]
    say(f"{manifest.source}: ok (index {manifest.version or 'unversioned'}, {len(manifest.ids)} ids)")
    span_gold = any(q.evidence for q in gold.questions)  # resolved against any index: no drift, no anchors
    if gold.index_version and manifest.version and gold.index_version != manifest.version and not span_gold:
        say(f"index drift: the gold set was built against {gold.index_version!r}, "
            f"the index is {manifest.version!r}")
    if not span_gold:
        _report_anchors(gold, manifest, config.gold_set, say)
    _report_stale(gold, stale, drifted, config.gold_set, say, span_gold)
    if stale:
        from ci_eval.core.gold.remap import plan_remap, remap_hint, remap_summary

        distinct = len({g for _, ids in stale for g in ids})
        say(f"{distinct} distinct stale gold id(s) in {len(stale)} question(s)")
        # what a run would record as the index's remap, and the hint its summary gives
        plan = plan_remap(gold, gold.anchors, manifest) if gold.anchors else None
        hint = remap_hint(remap_summary(plan)) if plan is not None and plan.mappings else ""
        if hint:
            say(hint.replace("`", "'"))
        return 1
    say("no stale gold ids")
    return 0


# Questions whose stale ids check lists one by one; past them, a count (a re-chunk can make
# thousands of ids stale at once, and the one useful line must not scroll away)
SHOWN_STALE = 5


def _report_stale(gold, stale: list, drifted: frozenset, gold_path: str, say, span_gold: bool = False) -> None:
    """The first few questions' stale gold ids, the drifted ones (still in the index, other
    text) named apart, then how many more; without anchors, that drift cannot be seen and
    how to make it seen (not for span gold, which names no chunk to anchor)."""
    if not gold.anchors and not span_gold:
        say(f"{gold_path}: no anchors, so a gold id that still exists but names other text "
            "(drifted) cannot be seen: run 'ci-eval gold anchor' to record the text each id names")
    for qid, ids in stale[:SHOWN_STALE]:
        missing, moved = [i for i in ids if i not in drifted], [i for i in ids if i in drifted]
        shown = missing[:SHOWN_STALE]
        more = f" and {len(missing) - len(shown)} more" if len(missing) > len(shown) else ""
        parts = ([f"stale gold id(s): {', '.join(shown)}{more}"] if missing else []) + (
            ["drifted gold id(s) (in the index, but their text no longer matches the anchor): "
             f"{', '.join(moved[:SHOWN_STALE])}"] if moved else [])
        say(f"{gold_path}: question {qid!r}: {'; '.join(parts)}")
    if len(stale) > SHOWN_STALE:
        rest = stale[SHOWN_STALE:]
        say(f"{gold_path}: and {len(rest)} more question(s) with stale gold "
            f"({sum(len(ids) for _, ids in rest)} id(s))")
    if drifted:
        say(f"{len(drifted)} gold id(s) drifted: kept out of the comparison like missing ones")


def _report_anchors(gold, manifest, gold_path: str, say) -> None:
    """Say when `ci-eval gold anchor` would add or refresh anchors (check writes nothing)."""
    from ci_eval.core.gold.anchors import update_anchors

    if not gold.anchors:
        return
    up = update_anchors(gold.questions, gold.anchors, manifest)
    if up.added or up.refreshed:
        say(f"{gold_path}: {len(up.added)} gold id(s) without an anchor, {len(up.refreshed)} anchor(s) "
            "out of date: run 'ci-eval gold anchor' to record them")
