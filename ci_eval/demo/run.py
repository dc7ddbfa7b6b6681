"""One demo run: the embedded corpus, BM25 and gold set through the real pipeline."""

from __future__ import annotations


def demo_config_path(label: str) -> str:
    from importlib import resources

    return str(resources.files("ci_eval.demo").joinpath(f"{label}.toml"))


def demo_artefact(label: str, out, *, history=None, show_progress=True, git=None):
    """One demo run, streamed to ``out`` (an inputs.artefact_out.RunWritten back). Answer
    correctness comes from a deterministic stand-in judge (the artefact says so in its
    config), so the failure matrix has data to show."""
    from ci_eval.core.artefact.artefact import MEASURED
    from ci_eval.core.artefact.evaluation import abstains
    from ci_eval.demo.answerer import answer_correct
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    config = load_config(demo_config_path(label))
    k, cutoff = config.k, config.abstain_below
    inputs = load_inputs(config)
    config_questions = inputs.gold.questions

    def judge(scored, values):
        if scored.question.unanswerable:
            # The right answer to an unanswerable question is "I could not find this".
            top = scored.retrieved.scores[0] if scored.retrieved.scores else None
            return abstains(top, cutoff)
        if scored.status in MEASURED:
            found = values.get(f"hit@{k}", 0.0) >= 1.0  # as measured, not recomputed
            return answer_correct(scored.question.id, found, label)
        return None

    def amend(head: dict) -> None:
        from ci_eval.core.artefact.artefact import note_in_head

        note_in_head(head, "config", answers="stand-in judge (ci_eval.demo.answerer), not a real model")
        # The matrix's source line says so too: the demo has no end-to-end eval to read.
        n = len(config_questions)
        head["answers"] = {"type": "stand-in", "path": None, "counts_as_correct": "the stand-in's verdict",
                           "rows": n, "matched": n, "questions": n, "missing": {"count": 0, "first": None}}
        if label == "head":
            from ci_eval.core.gold.remap import remap_summary

            plan = demo_remap()
            if plan.mappings:
                note_in_head(head, "index", remap=remap_summary(plan))

    return run_evaluation(
        inputs, out,
        git=git or {"sha": None, "ref": f"demo/{label}", "dirty": None},
        history=history, show_progress=show_progress, judge=judge, amend=amend,
    )


def builtin_base():
    """The demo's baseline run, read back as a stored one would be (the action's fallback
    when no baseline is stored). It streams to a temporary folder, removed after."""
    import tempfile
    from pathlib import Path

    from ci_eval.inputs.artefact_file import read_run

    with tempfile.TemporaryDirectory(prefix="ci-eval-demo-") as tmp:
        path = Path(tmp) / "base.json"
        demo_artefact("base", path, show_progress=False)
        return read_run(path)


def demo_remap():
    """What `ci-eval gold remap` does for the head's stale ids, the gold set anchored on
    the base index. The demo anchors at run time rather than shipping anchors, because the
    corpus's text (and so every hash and span) follows the Python in use."""
    from ci_eval.core.gold.anchors import update_anchors
    from ci_eval.core.gold.remap import plan_remap
    from ci_eval.inputs.loaders import load_config, load_gold_set, load_manifest

    base, head = load_config(demo_config_path("base")), load_config(demo_config_path("head"))
    gold, _ = load_gold_set(base.gold_set)
    anchors = update_anchors(gold.questions, {}, load_manifest(base)).anchors
    return plan_remap(gold, anchors, load_manifest(head))
