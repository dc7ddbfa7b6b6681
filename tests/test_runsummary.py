from factories import artefact, spec

from ci_eval.core.runsummary import run_summary


def test_the_terminal_summary_says_when_top_k_results_were_never_judged():
    art = artefact([spec("q1", ["a"], ["a", "b"])], k=2)
    art["summary"]["judged_at_k"] = {"k": 2, "mean": 1 / 2}
    assert f"judged@2: {1 / 2:.3f} (some top-2 results were never judged" in run_summary(art)
    art["summary"]["judged_at_k"] = {"k": 2, "mean": 1.0}
    assert "judged@2" not in run_summary(art)
