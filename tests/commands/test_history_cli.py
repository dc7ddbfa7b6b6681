"""`ci-eval history` as a user runs it: a real process over a folder of real artefacts, 30
runs of a branch with one question breaking at run 17 and one flapping."""

from __future__ import annotations

import csv
import io
import json

import pytest
from history_files import sha_of, write_runs
from projects import cli

RUNS, BREAKS = 30, 17  # 1-based run numbers, as the report counts them
PLANS = {
    "q-steady": [1] * RUNS,
    "q-breaks": [2] * (BREAKS - 1) + [None] * (RUNS - BREAKS + 1),
    "q-flaps": [None if r % 3 == 1 else 3 for r in range(RUNS)],
    "q-late": [12] * RUNS,  # retrieved, always below k
}
TAGS = {"q-steady": ["a"], "q-breaks": ["a"], "q-flaps": ["b"], "q-late": ["b"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    write_runs(folder, PLANS, tags=TAGS)
    return folder


def test_markdown_names_the_break_and_its_commit_and_the_flap(runs, tmp_path):
    done = cli("history", str(runs), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    failing = text.split("### Failing now")[1].split("###")[0]
    breaks = next(line for line in failing.splitlines() if "`q-breaks`" in line)
    assert f"run {BREAKS} (`{sha_of(BREAKS - 1)[:7]}`)" in breaks
    assert "q-flaps" not in failing  # its last run retrieved it
    flapping = text.split("### Flapping")[1].split("###")[0]
    flaps = next(line for line in flapping.splitlines() if "`q-flaps`" in line)
    assert f"{sum(r is None for r in PLANS['q-flaps'])} of {RUNS}" in flaps
    assert "q-breaks" not in flapping
    assert done.stderr.count("ci-eval: history: read run") == RUNS


def test_json_holds_every_question_and_run(runs, tmp_path):
    done = cli("history", str(runs), "--format", "json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    data = json.loads(done.stdout)
    assert [run["sha"] for run in data["runs"]] == [sha_of(r) for r in range(RUNS)]
    questions = {q["id"]: q for q in data["questions"]}
    assert questions["q-breaks"]["broken_by"] == {"run": BREAKS, "sha": sha_of(BREAKS - 1)}
    assert questions["q-flaps"]["flapping"] and questions["q-flaps"]["broken_by"] is None
    assert questions["q-late"]["first_gold_rank"] == PLANS["q-late"]
    assert questions["q-late"]["hit"] == [False] * RUNS
    assert questions["q-breaks"]["metrics"]["mrr"][:2] == [0.5, 0.5]
    hits_b = [sum(PLANS[q][r] is not None and PLANS[q][r] <= 5 for q in ("q-flaps", "q-late")) / 2
              for r in range(RUNS)]
    assert [p["mean"] for p in data["tags"]["b"]["hit@5"]] == pytest.approx(hits_b)


def test_csv_is_one_line_per_question_and_run(runs, tmp_path):
    done = cli("history", str(runs), "--format", "csv", "--quiet", cwd=tmp_path)
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert len(rows) == 1 + RUNS * len(PLANS)
    late = [row for row in rows if row[0] == "q-late"]
    assert {row[5] for row in late} == {"12"}


def test_the_pictures_are_written_when_asked(runs, tmp_path):
    done = cli("history", str(runs), "--quiet", "--svg-out", "heat.svg", "--trend-svg-out", "trend.svg",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    heat = (tmp_path / "heat.svg").read_text()
    assert heat.startswith("<svg") and heat.count("<rect") >= RUNS * len(PLANS)
    assert f"broken at run {BREAKS}" in heat
    assert "<polyline" in (tmp_path / "trend.svg").read_text()


def test_bad_input_is_one_line_exit_2_and_nothing_written(runs, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.json").write_text('{"schema_version": 2')
    done = cli("history", str(bad), "--svg-out", "heat.svg", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "run.json" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "heat.svg").exists()
    done = cli("history", str(runs), "--last", "0", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1


# --- what is not this project's run is skipped, one line each, and never merged

def _plain_runs(folder, runs: int = RUNS) -> None:
    write_runs(folder, {"q-steady": [1] * runs, "q-breaks": [2] * (runs - 5) + [None] * 5})


def _foreign(folder, name: str, ids: list[str], gold_path: str | None = None) -> None:
    """One run artefact of another project, made after every run of the folder."""
    from factories import ranked_with_gold_at, spec
    from v2_files import write_v2

    path = folder / name
    write_v2(path, [spec(q, gold=["g"], ranking=ranked_with_gold_at(1)) for q in ids],
             sha="f" * 40, created_at="2027-01-01T00:00:00Z")
    if gold_path is not None:
        text = path.read_text()
        assert text.count('"path":"eval/gold.json"') == 1
        path.write_text(text.replace('"path":"eval/gold.json"', f'"path":{json.dumps(gold_path)}'))


def _header_counts(markdown: str) -> str:
    return markdown.splitlines()[0]


@pytest.mark.parametrize("gold_path, ids, why", [
    ("other-app/gold.json", ["q-steady", "q-breaks", "x1"], "another project's run: its gold set is 'other-app/gold.json'"),
    (None, [f"x{i}" for i in range(83)], "another project's run: it shares no question with the other runs"),
])
def test_a_run_of_another_project_is_skipped_with_one_line_naming_it(tmp_path, gold_path, ids, why):
    folder = tmp_path / "runs"
    folder.mkdir()
    _plain_runs(folder)
    _foreign(folder, "zz-other.json", ids, gold_path)
    done = cli("history", str(folder), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _header_counts(done.stdout) == f"## Retrieval history: {RUNS} runs, 2 questions"
    warning, = done.stderr.splitlines()
    assert warning.startswith(f"ci-eval: warning: history: skipping {folder / 'zz-other.json'}: {why}")
    data = json.loads(cli("history", str(folder), "--quiet", "--format", "json", cwd=tmp_path).stdout)
    assert len(data["runs"]) == RUNS and "zz-other.json" not in {run["file"] for run in data["runs"]}
    assert {q["id"] for q in data["questions"]} == {"q-steady", "q-breaks"}


def test_a_stray_json_file_is_skipped_with_one_line(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    _plain_runs(folder)
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": f"q{i}", "question": "?", "gold": ["c"]} for i in range(20)]}))
    done = cli("history", str(folder), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"ci-eval: warning: history: skipping {folder / 'gold.json'}: "
                                        "not a run artefact"]
    assert _header_counts(done.stdout) == f"## Retrieval history: {RUNS} runs, 2 questions"


def test_only_stray_files_is_one_line_exit_2(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "package.json").write_text('{"name": "app"}')
    done = cli("history", str(folder), "--quiet", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == f"ci-eval: error: {folder}: holds no run artefacts (*.json)"
    assert len(done.stderr.splitlines()) == 2  # the skip, then the refusal


# --- worst first: a break that stays comes before a flap, however many misses the flap has

def test_the_longest_broken_question_comes_before_a_flapping_one(tmp_path):
    runs = 30
    plans = {
        "q-flaps": [None if r % 2 else 1 for r in range(runs)],  # 15 misses, failing now
        "q-broken-7": [1] * (runs - 7) + [None] * 7,
        "q-broken-3": [1] * (runs - 3) + [None] * 3,
        "q-never": [None] * runs,
        "q-fine": [1] * runs,
    }
    folder = tmp_path / "runs"
    folder.mkdir()
    write_runs(folder, plans)
    data = json.loads(cli("history", str(folder), "--quiet", "--format", "json", cwd=tmp_path).stdout)
    order = [q["id"] for q in data["questions"]]
    assert order == ["q-broken-7", "q-broken-3", "q-never", "q-flaps", "q-fine"]
    flaps = data["questions"][order.index("q-flaps")]
    assert flaps["flapping"] and flaps["misses"] == runs // 2 > 7
    text = cli("history", str(folder), "--quiet", cwd=tmp_path).stdout
    failing = text.split("### Failing now")[1].split("###")[0]
    listed = [line.split("`")[1] for line in failing.splitlines() if line.startswith("| `")]
    assert listed == ["q-broken-7", "q-broken-3", "q-never", "q-flaps"]


def test_a_change_only_when_the_config_was_toggled_is_not_flapping(tmp_path):
    runs = 12
    configs = [{"retriever": {"type": "python", "target": "app.search:search", "params": {"rerank": r % 2 == 1}}}
               for r in range(runs)]
    plans = {"q-toggled": [None if r % 2 else 1 for r in range(runs)], "q-steady": [1] * runs}
    folder = tmp_path / "runs"
    folder.mkdir()
    write_runs(folder, plans, configs=configs)
    data = json.loads(cli("history", str(folder), "--quiet", "--format", "json", cwd=tmp_path).stdout)
    toggled = next(q for q in data["questions"] if q["id"] == "q-toggled")
    assert toggled["changes"] == 0 and not toggled["flapping"]


def test_a_run_whose_retriever_failed_is_left_out_not_read_as_misses(tmp_path):
    """A failed run (core/artefact/run_failure.py) answered nothing: read as misses, a steady
    question would seem to flap each time the retriever was down."""
    from factories import spec
    from history_files import created_at
    from v2_files import write_v2

    folder = tmp_path / "runs"
    folder.mkdir()
    plans = {"q-a": [1] * 5, "q-b": [2] * 5}
    paths = write_runs(folder, plans)
    failed = (1, 3)  # runs 2 and 4: the retriever failed on every question
    for r in failed:
        write_v2(paths[r], [spec(qid, gold=["g"], error="retriever raised ConnectionError: the index went away")
                            for qid in plans], sha=sha_of(r), created_at=created_at(r))

    done = cli("history", str(folder), "--format", "json", "--quiet", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    warnings = done.stderr.splitlines()
    assert warnings == [f"ci-eval: warning: history: {paths[r]}: its run failed, so its rows are left out: "
                        f"the retriever failed on {len(plans)} question(s)" for r in failed]
    questions = {q["id"]: q for q in json.loads(done.stdout)["questions"]}
    for qid, ranks in plans.items():
        assert not questions[qid]["flapping"] and questions[qid]["broken_by"] is None
        # the failed runs hold no state: the question was not asked there
        assert [h for r, h in enumerate(questions[qid]["hit"]) if r not in failed] == [True] * (len(ranks) - 2)
        assert [questions[qid]["hit"][r] for r in failed] == [None, None]
