"""One demo run: the embedded corpus, BM25 and gold set through the real pipeline."""

from __future__ import annotations


def demo_config_path(label: str) -> str:
    from importlib import resources

    return str(resources.files("ci_eval.demo").joinpath(f"{label}.toml"))


def demo_artefact(label: str, *, history=None, show_progress=True) -> dict:
    """One demo run. Answer correctness comes from a deterministic stand-in judge (the
    artefact says so in its config), so the failure matrix has data to show."""
    from ci_eval.core.evaluation import abstains
    from ci_eval.demo.answerer import answer_correct
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    config = load_config(demo_config_path(label))
    artefact = run_evaluation(
        load_inputs(config),
        git={"sha": None, "ref": f"demo/{label}", "dirty": None},
        history=history,
        show_progress=show_progress,
    )
    k = artefact["k"]
    for q in artefact["questions"]:
        if q["unanswerable"]:
            # The right answer to an unanswerable question is "I could not find this".
            q["answer_correct"] = abstains(q["top_score"], artefact["abstain_below"])
        elif q["status"] in ("ok", "error"):
            found = q["first_gold_rank"] is not None and q["first_gold_rank"] <= k
            q["answer_correct"] = answer_correct(q["id"], found, label)
    artefact["config"]["answers"] = "stand-in judge (ci_eval.demo.answerer), not a real model"
    if label == "head":
        from ci_eval.core.remap import remap_summary

        plan = demo_remap()
        if plan.mappings:
            artefact["index"]["remap"] = remap_summary(plan)
    return artefact


def demo_remap():
    """What `ci-eval gold remap` does for the head's stale ids, the gold set anchored on
    the base index. The demo anchors at run time rather than shipping anchors, because the
    corpus's text (and so every hash and span) follows the Python in use."""
    from ci_eval.core.anchors import update_anchors
    from ci_eval.core.remap import plan_remap
    from ci_eval.inputs.loaders import load_config, load_gold_set, load_manifest

    base, head = load_config(demo_config_path("base")), load_config(demo_config_path("head"))
    gold, _ = load_gold_set(base.gold_set)
    anchors = update_anchors(gold.questions, {}, load_manifest(base)).anchors
    return plan_remap(gold, anchors, load_manifest(head))
