"""The rendered report, checked against golden files (``pytest --regen-golden`` rewrites
them; review the diff) and against the properties every report must have."""

from __future__ import annotations

import functools
import json
import math
import re

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at
from suite_paths import GOLDEN

from ci_eval.core.report.render import MARKER, BaselineInfo, marker
from ci_eval.core.report.render_sections import (
    UnchangedList,
    improvements,
    improvements_list,
    regressions,
    regressions_list,
    unchanged,
)
from ci_eval.report import build_report, policy_from

TEXTS = ["How do I rotate an API key?", "Which regions support private endpoints?",
         "What is the retention period for audit logs?", "How do I reset two-factor auth?",
         "Can I export billing data as CSV?"]


def _q(i: int, rank, **kw):
    kw.setdefault("text", f"{TEXTS[i % len(TEXTS)]} (case {i})")
    kw.setdefault("tags", [["how-to"], ["api"], ["billing", "how-to"], ["security"], []][i % 5])
    return spec(f"q-{i:03d}", ["kb/g"], at(rank, "kb/g"), **kw)


def _unanswerable(i: int, top: float):
    return spec(f"u-{i:03d}", ranking=["kb/x1", "kb/x2"], unanswerable=True, top=top,
                text=f"Is there a feature that does not exist #{i}?", tags=["unanswerable"])


def _set(ranks: list, extra=(), **kw):
    return artefact([_q(i, r) for i, r in enumerate(ranks)] + list(extra), **kw)


BASE_RANKS = [1, 1, 2, 1, 3, 1, 4, 2, 1, 1] * 4  # 40 questions, all hits at k=5
UNANS = [_unanswerable(1, 3.0), _unanswerable(2, 4.5), _unanswerable(3, 2.0)]
HISTORY = [{"sha": f"{i:040x}", "created_at": f"2026-11-{i + 1:02d}T02:00:00Z",
            "means": {"hit@5": 0.9 + 0.01 * (i % 4), "mrr": 0.7}} for i in range(8)]
EXACT = BaselineInfo(kind="exact", description="baseline: the push run of base commit "
                     "aaaaaaa on main (2 days old)", url="https://github.com/o/r/actions/runs/1")


def _with(ranks: dict[int, object]) -> list:
    out = list(BASE_RANKS)
    for i, r in ranks.items():
        out[i] = r
    return out


def case_no_baseline():
    head = _set(BASE_RANKS, UNANS)
    return None, head, {"min": {"hit@5": 0.8}}, BaselineInfo(
        kind="none", description="no baseline: no successful push run of this workflow on main "
        "was found; this is the first run or main was never evaluated")


def case_no_change():
    return _set(BASE_RANKS, UNANS), _set(BASE_RANKS, UNANS, history=HISTORY), \
        {"min": {"hit@5": 0.8}, "max_drop": {"hit@5": 0.05}}, EXACT


def case_significant_regression():
    head = _with({0: 7, 3: None, 8: 12, 10: None, 11: 9, 13: None, 18: 6, 21: None, 2: 4})
    return (_set(BASE_RANKS, UNANS),
            _set(head, UNANS, config={"retriever": {"type": "python", "target": "app:search",
                                                    "params": {"k1": 1.2, "b": 0.9}}}),
            {"min": {"hit@5": 0.9}, "max_drop": {"hit@5": 0.05, "mrr": 0.05},
             "max_new_misses": 2, "protected": ["q-000"]}, EXACT)


def case_within_noise():
    base = _with({5: 8})
    head = _with({0: 7, 3: None, 5: 2, 6: 3})
    return _set(base, UNANS), _set(head, UNANS), {"max_drop": {"hit@5": 0.02}}, EXACT


def case_stale_after_reingestion():
    base = _set(BASE_RANKS, UNANS, index_version="docs-2026-11-01")
    qs = [_q(i, r) for i, r in enumerate(BASE_RANKS)]
    for i in (1, 4, 9):  # re-ingestion renamed their chunks
        qs[i] = _q(i, None, stale=["kb/g"])
    head = artefact(qs + UNANS, index_version="docs-2026-12-01",
                    gold_index_version="docs-2026-11-01")
    return base, head, {"max_drop": {"hit@5": 0.0}, "regressions": "always", "max_stale": 5}, EXACT


def case_goldset_edit():
    base_qs = [_q(i, r) for i, r in enumerate(BASE_RANKS[:20])]
    head_qs = [_q(i, r) for i, r in enumerate(BASE_RANKS[:18])]  # q-018, q-019 removed
    head_qs[3] = spec("q-003", ["kb/g", "kb/h"], at(1, "kb/g"), text=TEXTS[3])  # relabelled
    head_qs += [_q(i, 2) for i in (40, 41, 42)]  # added
    return (artefact(base_qs, gold_sha="1" * 64), artefact(head_qs, gold_sha="2" * 64),
            {"min": {"hit@5": 0.8}}, EXACT)


def case_failure_matrix():
    def qs(ranks, correct):
        return [_q(i, r, answer_correct=c) for i, (r, c) in enumerate(zip(ranks, correct))]
    base_r = [1, 1, 2, 1, 9, None, 1, 3, 1, 2]
    base_c = [True, True, True, False, False, True, True, True, False, True]
    head_r = [1, 8, 2, 1, 2, None, None, 3, 1, 2]
    head_c = [True, False, False, False, True, True, True, True, True, None]  # q-009 not covered
    base, head = artefact(qs(base_r, base_c)), artefact(qs(head_r, head_c))

    def source(commit, matched, missing, unmatched):
        return {"type": "promptfoo", "path": "eval/promptfoo-results.json", "commit": commit, "changed": False,
                "counts_as_correct": "a pass", "repeats": "all", "rows": matched + unmatched[0], "matched": matched,
                "questions": 10, "missing": {"count": len(missing), "first": missing[0] if missing else None},
                "unmatched": {"count": unmatched[0], "first": unmatched[1]},
                "ambiguous": {"count": 0, "first": None}, "no_verdict": {"count": 0, "first": None},
                "repeated": {"questions": 0, "disagreeing": 0}}
    base["answers"] = source("b" * 40, 10, [], (0, None))
    head["answers"] = source("c" * 40, 9, ["q-009"], (1, "results.results[10]: id 'q-100' is not in the gold set"))
    return base, head, {}, EXACT


def case_no_gap():
    unans = [_unanswerable(i, top) for i, top in enumerate([9.0, 7.5, 4.0, 10.0])]
    base = _set(BASE_RANKS[:12], unans[:3])
    head = artefact([_q(i, r, top=s) for i, (r, s) in
                     enumerate(zip(BASE_RANKS[:12], [12, 11, 8, 9.5, 6, 14, 15, 3, 12, 11, 10, 9]))]
                    + unans, abstain_below=5.0)
    return base, head, {}, EXACT


def case_big_5000():
    n = 5000
    base_r = [1 + (i * 7) % 6 if i % 9 else None for i in range(n)]
    head_r = [r if i % 5 else (None if i % 2 else (r or 0) % 15 + 1) for i, r in enumerate(base_r)]
    mk = lambda ranks: artefact([_q(i, r, answer_correct=bool(i % 3))
                                 for i, r in enumerate(ranks)] + UNANS)
    gate = {"min": {"hit@5": 0.95}, "max_drop": {"hit@5": 0.01}, "max_new_misses": 10,
            "protected": [f"q-{i:03d}" for i in range(0, 200, 5)]}
    return mk(base_r), mk(head_r), gate, EXACT


def case_hostile():
    evil = [
        "<script>alert('x')</script> | col | ::set-output name=x::1 fixes #12, o/r#5 and gh-7",
        "@org/team please look\n## injected heading\n::add-mask::s3cret \u202elave\u2066 x\u2069",
        "[click](javascript:alert(1)) ![img](https://evil.example/p.png) <!-- hide",
        "```\ncode fence``` and **bold** and https://evil.example/?a=1&b=2",
        "| a | b |\n|---|---|\n| <details open> | x |",
        "</details></summary><h1>loud</h1> &amp; &#x3C;script&#x3E;",
    ]
    chunk = "kb/<i>g</i>|`x`"
    qs = lambda ranks: [spec(f"<b>id{i}</b>|x", [chunk], at(r, chunk), text=t,
                             tags=["@team", "a|b", "<i>t</i>"])
                        for i, (t, r) in enumerate(zip(evil, ranks))]
    base = artefact(qs([1, 1, 2, 1, 1, 3]),
                    config={"retriever": {"params": {"x": "<img src=x>"}}})
    head = artefact(qs([None, 7, 2, 1, 1, 3]),
                    config={"retriever": {"params": {"x": "::set-output @org|`a`"}}})
    return base, head, {"protected": ["<b>id0</b>|x"]}, BaselineInfo(
        kind="fallback", description="fallback baseline: <img src=x> @org/team ::warning::x")


def _stages(ranks: dict[int, list]) -> dict:
    """A run's stage records: pool@50 -> rerank@5 -> results@5 -> packed (2,000 characters);
    ``ranks``: question -> the gold's ranks per stage, every other question held throughout."""
    chain = [{"name": "pool", "depth": 50}, {"name": "rerank", "depth": 5}, {"name": "results", "depth": 5},
             {"name": "packed", "chars": 2000}]
    records = {f"q-{i:03d}": {"gold": 1, "ranks": ranks.get(i, [[3], [1], [1], [1]])} for i in range(10)}
    records["q-003"]["added"] = [0, 2, 0, 0] if 3 in ranks else [0, 0, 0, 0]
    return {"chain": chain, "questions": records}


def case_stages():
    base_r = [1] * 10
    head_r = [None, None, 2, 1, 1, 1, 1, 1, 1, 1]
    head = artefact([_q(i, r) for i, r in enumerate(head_r)])
    # q-000 never in the pool, q-001 reranked out, q-002 cut by the packer, q-003's reranker
    # brought ids the pool did not have
    head["stages"] = _stages({0: [[], [], [], []], 1: [[4], [], [], []], 2: [[9], [2], [2], []],
                              3: [[2], [1], [1], [1]]})
    head["calls"] = {"budget": 20, "questions": {
        "q-004": {"sizes": [10, 5], "ranks": [[], [1]], "found_at": 2, "final_hit": False},
        "q-005": {"sizes": [10], "ranks": [[3]], "found_at": 1, "final_hit": True}}}
    base = artefact([_q(i, r) for i, r in enumerate(base_r)])
    base["stages"] = _stages({})
    return base, head, {"stage_min": {"pool": 0.95}}, EXACT


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def _fresh(name: str):
    base, head, gate, info = CASES[name]()
    return build_report(base, head, policy_from(gate), info)


@functools.cache
def _report(name: str):
    return _fresh(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, regen_golden):
    md = _report(name).markdown
    path = GOLDEN / f"{name}.md"
    if regen_golden:
        path.write_text(md, encoding="utf-8")
    assert path.is_file(), f"missing {path.name}: run pytest --regen-golden and review it"
    assert md == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_report_opens_with_marker_verdict_and_baseline(name):
    lines = _report(name).markdown.splitlines()
    assert lines[0] == MARKER
    assert lines[1].startswith("### ") and lines[1][4] in "✅❌⚠"
    assert lines[2].startswith("**Baseline:**")
    assert len(_report(name).markdown) < 65_536


@pytest.mark.parametrize("name", sorted(CASES))
def test_rendering_is_deterministic(name):
    a, b = _report(name), _fresh(name)
    assert (a.markdown, a.full_markdown, a.json, a.svg) == (b.markdown, b.full_markdown, b.json, b.svg)


def test_regression_verdict_names_metric_significance_and_where():
    r = _report("significant_regression")
    verdict = r.markdown.splitlines()[1]
    assert not r.passed
    lost = 8  # case_significant_regression: 8 of 40 questions lose their hit, 1 moves down
    # what happened first, named; then the promised metric's change; then the broken floor
    assert verdict.startswith(f"### ❌ {lost} questions lost their gold chunk at k=5: `q-003`, ")
    assert f"hit@5 fell 1.000 → {(40 - lost) / 40:.3f} ({-lost / 40:+.3f}; " in verdict
    assert "on 40 questions, more than chance explains, so it should carry over" in verdict
    assert f"Gate failed: hit@5 is {(40 - lost) / 40:.3f}, below the floor 0.900" in verdict


def test_no_baseline_is_said_plainly():
    r = _report("no_baseline")
    assert "No baseline" in r.markdown.splitlines()[1]
    assert r.markdown.splitlines()[2].startswith("**Baseline:** none: no successful push run")


def test_within_noise_passes_but_the_headline_says_what_was_lost_and_gained():
    r = _report("within_noise")
    verdict = r.markdown.splitlines()[1]
    assert r.passed and "within noise" in r.markdown  # the table still says it
    # case_within_noise: q-000 and q-003 leave the top 5, q-005 enters it
    assert verdict.startswith("### ⚠️ Gate passed, but 2 questions lost their gold chunk at k=5: "
                              "`q-003` (security), `q-000` (how-to); 1 gained: `q-005`")
    assert "No significant change" not in verdict and "within noise" not in verdict


def test_stale_gold_is_reported_not_regressed():
    r = _report("stale_after_reingestion")
    assert r.passed
    assert "#### Stale gold" in r.markdown and "#### Regressions" not in r.markdown


def test_big_diff_fits_the_budget_and_the_full_report_does_not_need_to():
    r = _report("big_5000")
    assert len(r.markdown) <= 65_000
    assert "more regressions" in r.markdown
    assert len(r.full_markdown) > len(r.markdown)
    assert r.full_markdown.count("\n| `q-") > r.markdown.count("\n| `q-")


# Each list the budget counts rather than renders: how it is built, written in full, and
# which of the diff's questions it lists.
COUNTED = {"regressions": (regressions_list, regressions, lambda d: d.regressions),
           "improvements": (improvements_list, improvements, lambda d: d.improvements),
           "unchanged": (UnchangedList, unchanged, lambda d: d.unchanged)}


def _limits(size: int) -> list[int]:
    return sorted({0, 1, 2, 10, 97, size // 2, max(size - 1, 0), size, size + 5})


@pytest.mark.parametrize("kind", sorted(COUNTED))
@pytest.mark.parametrize("name", ["big_5000", "significant_regression", "hostile"])
def test_a_counted_list_s_length_is_its_text_s(name, kind):
    build, write, listed_of = COUNTED[kind]
    ctx = _report(name).context
    length = build(ctx).length
    for limit in _limits(len(listed_of(ctx.diff))):
        assert length(limit) == len(write(ctx, limit)), limit


@pytest.mark.parametrize("kind", sorted(COUNTED))
@pytest.mark.parametrize("name", ["big_5000", "significant_regression", "hostile"])
def test_a_counted_list_writes_what_it_counted_and_says_when_it_is_over(name, kind):
    build, write, listed_of = COUNTED[kind]
    ctx = _report(name).context
    listed = build(ctx)
    for limit in _limits(len(listed_of(ctx.diff))):
        text = write(ctx, limit)
        for room in (len(text) - 1, len(text), 5_000, 65_000):
            got = listed.length(limit, room)
            assert got == len(text) or (got > room and len(text) > room), (limit, room)
        assert listed.render(limit) == text
    assert listed.render(None) == write(ctx, None)


def test_the_counted_lists_have_questions_to_count():
    # the two tests above would pass on empty lists: each kind is long in one case at least
    for kind, (_, _, listed_of) in COUNTED.items():
        assert max(len(listed_of(_report(n).context.diff)) for n in ("big_5000", "hostile")) > 50, kind


def _outside_code(md: str) -> str:
    """The text GitHub interprets: code spans (any fence length) removed."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md)


def test_hostile_text_is_inert():
    r = _report("hostile")
    for md in (_outside_code(r.markdown), _outside_code(r.full_markdown)):
        assert "<script" not in md and "<img" not in md and "<b>" not in md and "<!-- hide" not in md
        assert md.count("<!--") == 1  # only the marker
        assert not any(line.lstrip().startswith("::") for line in md.splitlines())
        assert "@org" not in md and "@team" not in md
        assert "](javascript" not in md.replace("\\]", "")
        assert "https://evil" not in md
        assert "\n## injected" not in md
        # no issue reference GitHub would link (and cross-post to another repository)
        assert not re.search(r"(?i)(#|\bgh-)\d", md)
    # a bidirectional control would reorder what a reader sees, in code spans too
    assert not re.search("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", r.full_markdown)
    assert "o/r#\u200d5" in r.full_markdown  # the text is kept, only defused
    # every table row has the header's number of cells
    for block in r.markdown.split("\n\n"):
        rows = [x for x in block.splitlines() if x.startswith("|")]
        if rows:
            widths = {len(x.replace("\\|", "").split("|")) for x in rows}
            assert len(widths) == 1, block


def test_json_report_is_complete_and_parses():
    data = json.loads(_report("significant_regression").json)
    assert data["passed"] is False
    assert {f["rule"] for f in data["gate"]["failures"]} >= {"max_drop", "max_new_misses"}
    assert data["regressions"][0]["kind"] in ("lost", "error")


def test_marker_suffix_gives_each_gold_set_its_own_comment():
    base, head, gate, info = CASES["no_change"]()
    r = build_report(base, head, policy_from(gate), info, marker_suffix="docs gold")
    assert r.markdown.splitlines()[0] == marker("docs gold") == "<!-- ci-eval:report:docs-gold -->"
    assert r.marker == marker("docs gold")


def test_svg_is_escaped_and_deterministic():
    base, head, gate, info = CASES["no_gap"]()
    svg = build_report(base, head, policy_from(gate), info).svg
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "cannot tell when it has nothing" in svg


def test_without_an_index_manifest_the_report_says_stale_gold_was_not_checked():
    head = _set(BASE_RANKS)
    checked = build_report(None, head, policy_from({}), None).full_markdown
    assert "Not checked: no index manifest" not in checked
    head["index"] = {"version": None, "ids": None, "checked": False}
    unchecked = build_report(None, head, policy_from({}), None).full_markdown
    assert "#### Stale gold\n\nNot checked: no index manifest is configured" in unchecked


def test_a_hostile_metric_name_in_an_artefact_is_inert():
    evil = "<img src=x>|@org"
    base, head, gate, info = CASES["within_noise"]()
    for art, value in ((base, 0.5), (head, 0.25)):
        art["metrics"].append(evil)
        for q in art["questions"]:
            if q["metrics"]:
                q["metrics"][evil] = value
    r = build_report(base, head, policy_from(gate), info)
    md = _outside_code(r.full_markdown)
    assert "<img" not in md and "@org" not in md and "&lt;img src=x&gt;\\|@\u200dorg" in md
    for block in r.full_markdown.split("\n\n"):
        rows = [x for x in block.splitlines() if x.startswith("|")]
        if rows:
            assert len({len(x.replace("\\|", "").split("|")) for x in rows}) == 1, block


def test_unjudged_results_the_head_brought_are_counted_and_their_regressions_marked():
    # q-1 and q-2 lose their gold to chunks nobody judged; q-3 loses it to a chunk judged 0.
    base = artefact([spec("q-1", ["g"], ["g", "a", "b"]), spec("q-2", ["g"], ["g", "a", "b"]),
                     spec("q-3", {"g": 1, "n": 0}, ["g", "a", "b"])], k=3)
    head = artefact([spec("q-1", ["g"], ["u1", "a", "b", "g"]), spec("q-2", ["g"], ["u2", "u3", "b", "g"]),
                     spec("q-3", {"g": 1, "n": 0}, ["n", "a", "b", "g"])], k=3)
    report = build_report(base, head, policy_from({}))
    text = report.full_markdown
    # New and unjudged in the top 3: u1 (q-1), u2 and u3 (q-2): 3 results in 2 questions.
    assert "3 results in 2 questions were never judged: the head brought them into the top 3" in text
    # the artefact is not named here, so it is described, never given a name it may not have
    assert "`ci-eval label --pool` on the head's run artefact" in text and "head.json" not in text
    named = build_report(base, head, policy_from({}), head_path="runs/pr-12.json").full_markdown
    assert "Judge them with `ci-eval label --pool runs/pr-12.json`." in named
    # judged@3: base g (1 of 3) in each question; head q-3 has n judged (1 of 3), others 0.
    assert f"judged@3 {(0 + 0 + 1 / 3) / 3:.3f} (base {1 / 3:.3f})" in text
    rows = {line.split("`")[1]: line for line in text.splitlines() if line.startswith("| `q-")}
    assert "unjudged, may not be a regression" in rows["q-1"] and "unjudged, may not be a regression" in rows["q-2"]
    assert "unjudged" not in rows["q-3"]
    assert json.loads(report.json)["judged"]["unjudged_regressions"] == ["q-1", "q-2"]


def test_nothing_is_said_when_every_new_result_was_judged():
    base = artefact([spec("q-1", {"g": 1, "n": 0}, ["g", "n"])], k=2)
    head = artefact([spec("q-1", {"g": 1, "n": 0}, ["n", "g"])], k=2)
    assert "never judged" not in build_report(base, head, policy_from({})).full_markdown


@pytest.mark.parametrize("budget", [3_000, 20_000, 65_000])
def test_a_section_known_to_be_over_budget_is_cut_as_if_rendered_in_full(budget, monkeypatch):
    from ci_eval.core.report import render_sections
    from ci_eval.core.report.render import render_markdown

    ctx = _report("big_5000").context
    packed = render_markdown(ctx, budget)
    monkeypatch.setattr(render_sections, "question_table_at_least", lambda questions: 0)
    assert render_markdown(ctx, budget) == packed
    assert len(packed) <= budget


@pytest.mark.parametrize("budget", [3_000, 20_000, 65_000])
def test_the_sections_cut_before_one_known_over_budget_are_cut_as_if_rendered_in_full(budget, monkeypatch):
    from ci_eval.core.report import budget as packing
    from ci_eval.core.report.render import render_markdown

    ctx = _report("big_5000").context
    packed = render_markdown(ctx, budget)
    rendered = []
    real = packing._fit

    def fit(s, room):
        rendered.append(s.key)
        return real(s, room)

    # only the sections known over budget are left unrendered: the others in full first
    monkeypatch.setattr(packing, "_pending", lambda sections, order, budget: {
        s.key for s in sections if budget is not None and s.at_least > budget and s.key in order})
    monkeypatch.setattr(packing, "_fit", fit)
    assert render_markdown(ctx, budget) == packed
    assert "unchanged" in rendered  # the first cut, whatever the budget


def test_the_shortest_table_row_is_a_lower_bound():
    from ci_eval.core.report.markdown import table, table_at_least

    headers = ["question", "first gold rank", "what happened", "tags"]
    empty, longer = ["", "", "", ""], ["`q1` a question", "3 → 12", "left the top 5", "faq"]
    # a row of empty cells is exactly the shortest row line; every other row is longer
    assert table_at_least(headers, 1) == len(table(headers, [empty]).splitlines()[-1])
    assert all(len(line) >= table_at_least(headers, 1)
               for line in table(headers, [empty, longer]).splitlines()[2:])


# -- the job summary, within GitHub's limit for one step's summary -----------------------

ARTIFACT_NOTE = "summary.md in this run's `ci-eval` artifact"


def _summary(report, limit: int) -> str:
    from ci_eval.core.report.render import render_summary

    return render_summary(report.context, "ci-eval", limit)


def test_a_summary_within_the_limit_is_the_full_report():
    r = _report("big_5000")
    size = len(r.full_markdown.encode())
    assert _summary(r, size) == r.full_markdown
    assert r.job_summary("ci-eval") == r.full_markdown  # far under GitHub's 1 MiB


@pytest.mark.parametrize("over", [1, 1_000, 100_000])
def test_a_summary_over_the_limit_is_cut_to_it_and_says_where_the_rest_is(over):
    r = _report("big_5000")
    limit = len(r.full_markdown.encode()) - over
    text = _summary(r, limit)
    assert len(text.encode()) <= limit
    assert text.startswith(r.full_markdown.split("\n\n", 1)[0])  # marker, verdict, baseline
    assert text.endswith(f"bytes for one step; {ARTIFACT_NOTE} holds the whole report.\n")
    assert "the job summary" not in text
    pointers = [line for line in text.splitlines() if "(see " in line or "(listed in " in line]
    assert all(ARTIFACT_NOTE in line for line in pointers)
    if over >= 100_000:  # whole lists cut: their lines say where the rest is
        assert len(pointers) >= 2


def _wide_report():
    """Every question's text four bytes a character: a budget counted in characters is a
    quarter of what fits in bytes."""
    wide = "𝄞🎵𝄢" * 20
    base = artefact([_q(i, 1 + i % 4, text=f"{wide} {i}") for i in range(600)])
    head = artefact([_q(i, 1 + (i * 3) % 7, text=f"{wide} {i}") for i in range(600)])
    return build_report(base, head, policy_from({}), EXACT)


@pytest.mark.parametrize("limit", [20_000, 60_000, 150_000])
def test_text_outside_ascii_is_cut_by_its_bytes_and_still_fills_the_room(limit):
    r = _wide_report()
    full = r.full_markdown
    assert len(full.encode()) > max(limit, 1.5 * len(full))  # cut, and far wider in bytes
    text = _summary(r, limit)
    assert len(text.encode()) <= limit
    # a cut made once by characters would leave about three quarters of the room empty
    assert len(text.encode()) > 0.8 * limit
    assert text.endswith(f"{ARTIFACT_NOTE} holds the whole report.\n")
    # cut by sections, each whole, not by its bytes at a line end
    assert text.count("<details>") == text.count("</details>") > 0


def test_a_limit_below_the_report_s_fixed_parts_cuts_them_at_a_line_end():
    r = _wide_report()
    text = _summary(r, 1_500)
    assert len(text.encode()) <= 1_500
    assert text.startswith(r.full_markdown.split("\n", 1)[0] + "\n")  # the marker line whole
    assert text.endswith(f"{ARTIFACT_NOTE} holds the whole report.\n")


def test_a_raw_significant_change_lost_to_holm_says_so_beside_its_own_interval():
    # 6 of 40 lose their gold: p = erfc(sqrt(3)) = 0.014 on each metric's own score test
    # (McNemar's statistic 6 / sqrt(6)), but Holm over the ten metrics adjusts the smallest
    # to 10 * 0.014 > 0.05
    base = artefact([spec(f"q{i:02d}", ["g"], at(1)) for i in range(40)])
    head = artefact([spec(f"q{i:02d}", ["g"], at(None if i < 6 else 1)) for i in range(40)])
    text = build_report(base, head, policy_from({}), EXACT).markdown
    row = next(line for line in text.splitlines() if line.startswith("| hit@5 "))
    assert f"p={math.erfc(math.sqrt(3)):.3f}" in row and "within noise after Holm" in row and "▼" not in row
    assert "Marks: Holm over the 10 metrics" in text


def test_a_long_chunk_id_is_shown_whole_in_the_regressions():
    long_id = "man1/git-rebase.1#options-interactive-exec-cmd-and-autosquash"  # 61 characters
    base = artefact([spec(f"q-{n}", [long_id if n == 0 else f"g{n}"], [long_id if n == 0 else f"g{n}", "a", "b"])
                     for n in range(8)], k=3)
    head = artefact([spec("q-0", [long_id], ["a", "b", "c", long_id])]
                    + [spec(f"q-{n}", [f"g{n}"], [f"g{n}", "a", "b"]) for n in range(1, 8)], k=3)
    text = build_report(base, head, policy_from({})).full_markdown
    row = next(line for line in text.splitlines() if line.startswith("| `q-0`"))
    assert f"`{long_id}`" in row
