"""`ci-eval sweep` as a user runs it: a small project with its own retriever, every row's
value derived here by counting, the retrieval cache asking nothing twice, rows run as
shards and tabulated, and bad input or a failing row exiting as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import cli, write_config, write_gold, write_module
from run_files import read_run

N = 30
RETRIEVER = '''
from pathlib import Path

def gold_rank(mode, n):
    """Where question n's gold chunk sits (None: not returned)."""
    if mode == "base":
        return 1 if n % 2 == 0 else 3
    if mode == "better":
        return 1
    return 1 if n % 4 == 0 else None

def search(question, depth, mode="base", fail=False):
    with open(Path(__file__).with_name("calls.log"), "a") as log:
        log.write(f"{mode} {question}\\n")
    n = int(question.split()[-1])
    if fail and n == 3:
        raise RuntimeError("index offline")
    ids = [f"x{j}" for j in range(depth)]
    at = gold_rank(mode, n)
    if at is not None:
        ids.insert(at - 1, f"c{n}")
    return [(cid, 100.0 - j) for j, cid in enumerate(ids[:depth])]
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_gold(tmp_path, [{"id": f"a{i}", "question": f"answerable {i}", "gold": [f"c{i}"]} for i in range(1, N + 1)])
    write_module(tmp_path, "ranker", RETRIEVER)
    write_config(tmp_path, 'type = "python"\ntarget = "ranker:search"\ndepth = 6\n'
                           'params = { mode = "base", fail = false }\n',
                 extra='[index]\nversion = "v1"\n', k=2)
    return tmp_path


def _expected(mode: str, k: int = 2) -> dict:
    """recall@k and MRR by direct counting over the retriever's own rule."""
    import importlib.util

    spec = importlib.util.spec_from_loader("rule", loader=None)
    rule = importlib.util.module_from_spec(spec)
    exec(RETRIEVER, rule.__dict__)  # noqa: S102 - the test's own retriever text
    ranks = [rule.gold_rank(mode, n) for n in range(1, N + 1)]
    return {"recall@2" if k == 2 else f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / N,
            "mrr": sum(1 / r for r in ranks if r is not None) / N}


def _calls(project: Path) -> list[str]:
    log = project / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_grid_prints_the_table_with_every_value_counted(project):
    done = cli("sweep", "--grid", "mode=base,better,worse", "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [r["label"] for r in data["rows"]] == ["mode=base", "mode=better", "mode=worse"]
    for r in data["rows"]:
        expected = _expected(r["label"].split("=")[1])
        assert r["means"] == pytest.approx(expected)
    base = _expected("base")
    for r in data["rows"][1:]:
        for m, t in r["against_row_1"].items():
            # one family: 2 steps and row 3's change from row 1, on 2 metrics
            assert t["delta"] == pytest.approx(r["means"][m] - base[m]) and t["family"] == 6
    worse, better = data["rows"][2], data["rows"][1]
    for m, t in worse["against_previous"].items():
        assert t["delta"] == pytest.approx(worse["means"][m] - better["means"][m])
    # better gains on every odd question and loses none, against both other rows
    assert data["best"] == {**data["best"], "top": 2, "separated": True}
    assert len(_calls(project)) == 3 * N
    assert (project / "ci-eval-sweep" / "sweep.svg").read_text().startswith("<svg")
    assert "row 3/3: mode=worse" in done.stderr


def test_running_the_sweep_again_asks_the_retriever_nothing(project):
    first = cli("sweep", "--grid", "mode=base,better", cwd=project)
    assert first.returncode == 0, first.stderr
    asked = len(_calls(project))
    again = cli("sweep", "--grid", "mode=base,better", cwd=project)
    assert again.returncode == 0, again.stderr
    assert len(_calls(project)) == asked == 2 * N
    assert again.stderr.count(f"{N} answered from the retrieval cache, 0 asked") == 2
    assert again.stdout == first.stdout


def test_a_row_that_only_rescoring_changes_is_answered_from_the_cache(project):
    done = cli("sweep", "--grid", "k=1,2", "--metrics", "mrr,map", "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert len(_calls(project)) == N  # the second row's k reads the first row's rankings
    rows = json.loads(done.stdout)["rows"]
    assert rows[0]["means"]["mrr"] == pytest.approx(_expected("base")["mrr"])


def test_rows_run_as_shards_merge_and_tabulate_to_the_same_table(project):
    whole = cli("sweep", "--grid", "mode=base,better,worse", "--format", "json", "--cache", "c1", cwd=project)
    assert whole.returncode == 0, whole.stderr
    grid = ("--grid", "mode=base,better,worse")
    listed = cli("sweep", *grid, "--list", cwd=project)
    assert listed.stdout.splitlines() == ["1\tmode=base", "2\tmode=better", "3\tmode=worse"]
    for row in (1, 3):
        done = cli("sweep", *grid, "--row", str(row), "--out", f"rows/row-{row}.json", cwd=project)
        assert done.returncode == 0, done.stderr
    for shard in (1, 2):
        done = cli("sweep", *grid, "--row", "2", "--shard", f"{shard}/2", "--out", f"parts/p{shard}.json",
                   cwd=project)
        assert done.returncode == 0, done.stderr
    merged = cli("merge", "parts/p1.json", "parts/p2.json", "--out", "rows/row-2.json", cwd=project)
    assert merged.returncode == 0, merged.stderr
    table = cli("sweep", "--from", "rows", "--format", "json", cwd=project)
    assert table.returncode == 0, table.stderr
    assert json.loads(table.stdout) == json.loads(whole.stdout)
    # the parts of one row are not a row each
    assert cli("sweep", "--from", "parts", cwd=project).returncode == 2
    # nor do parts of two different rows merge as one
    other = cli("sweep", *grid, "--row", "3", "--shard", "2/2", "--out", "parts/p3.json", cwd=project)
    assert other.returncode == 0
    mixed = cli("merge", "parts/p1.json", "parts/p3.json", "--out", "mixed.json", cwd=project)
    assert mixed.returncode == 2 and not (project / "mixed.json").exists()


def test_config_files_are_rows_named_by_their_files(project):
    text = (project / "ci-eval.toml").read_text()
    (project / "bm25.toml").write_text(text)
    (project / "tuned.toml").write_text(text.replace('mode = "base"', 'mode = "better"'))
    done = cli("sweep", "bm25.toml", "tuned.toml", "--metrics", "mrr", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "| 1   | bm25" in done.stdout and "**Best: row 2, tuned**" in done.stdout
    assert "recall@2" not in done.stdout.split("\n")[0]


def test_a_failing_row_prints_the_table_and_exits_4(project):
    done = cli("sweep", "--grid", "fail=false,true", "--format", "json", cwd=project)
    assert done.returncode == 4
    data = json.loads(done.stdout)
    # a failed question counts as measured and scores 0 (fail closed), as in every run
    assert data["questions"] == N and data["left_out"] == 0 and data["rows"][1]["failed"] == 1
    assert data["rows"][1]["means"]["mrr"] == pytest.approx(_expected("base")["mrr"] - (1 / 3) / N)
    assert "row 2 (fail=true): the retriever failed on 1 question(s)" in done.stderr


@pytest.mark.parametrize("args, says", [
    (["--grid", "mode"], "--grid: 'mode': expected KEY=VALUE"),
    (["--grid", "depth=6,lots"], "retriever.depth"),
    (["--grid", "mode=base", "--metrics", "recal@2"], "--metrics"),
    (["--grid", "mode=base", "--metrics", "ndcg@9"], "does not measure ndcg@9"),
    (["--grid", "mode=base", "--row", "4", "--out", "r.json"], "there is no row 4"),
    (["--grid", "mode=base", "--row", "1"], "--row N needs --out"),
    (["missing.toml", "ci-eval.toml"], "missing.toml"),
    (["ci-eval.toml", "--grid", "mode=base"], "not both"),
    ([], "give two or more config files"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(project, args, says):
    done = cli("sweep", *args, cwd=project)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in done.stderr
    assert not (project / "ci-eval-sweep").exists() and _calls(project) == []


def test_each_row_s_warnings_and_first_error_are_on_the_terminal_and_under_the_table(project):
    done = cli("sweep", "--grid", "fail=false,true", cwd=project)
    assert done.returncode == 4
    said = "retriever errors: 1 question(s); first: a3: retriever raised RuntimeError: index offline"
    assert f"ci-eval sweep: row 2: {said}" in done.stderr
    notes = done.stdout.split("Notes:", 1)[1]
    assert f"- row 2 (fail=true): {said}" in notes and "row 1" not in notes


def test_rows_are_labelled_by_the_config_s_label_or_by_label(project):
    text = (project / "ci-eval.toml").read_text()
    (project / "a.toml").write_text('label = "512-token chunks"\n' + text)
    (project / "b.toml").write_text('label = "chunks on headings"\n' + text.replace('mode = "base"', 'mode = "better"'))
    done = cli("sweep", "a.toml", "b.toml", "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert [r["label"] for r in json.loads(done.stdout)["rows"]] == ["512-token chunks", "chunks on headings"]
    named = cli("sweep", "--grid", "mode=base,better", "--label", "baseline", "tuned", "--list", cwd=project)
    assert named.stdout.splitlines() == ["1\tbaseline", "2\ttuned"]
    short = cli("sweep", "--grid", "mode=base,better", "--label", "baseline", cwd=project)
    assert short.returncode == 2 and "--label: gives 1 label(s) for 2 rows" in short.stderr


def test_the_ladder_s_marks_and_sentences_come_from_one_family(project):
    done = cli("sweep", "--grid", "mode=worse,base,better", cwd=project)
    assert done.returncode == 0, done.stderr
    # the family is stated once, and the sentence under the table points at it
    assert done.stdout.count("Holm's correction") == 1
    assert "one family of 6 paired tests" in done.stdout
    assert "**Best: row 3, mode=better**" in done.stdout and "the table's family" in done.stdout
    data = json.loads(cli("sweep", "--grid", "mode=worse,base,better", "--format", "json", cwd=project).stdout)
    tests = [t for r in data["rows"] for t in (*r["against_row_1"].values(), *r["against_previous"].values())]
    assert {t["family"] for t in tests} | {t["family"] for t in data["best"]["tests"].values()} == {6}
    # row 3 against row 1 in the cell is the test the best-row sentence read
    cell = data["rows"][2]["against_row_1"][data["best"]["metric"]]
    assert data["best"]["tests"]["1"]["p_adjusted"] == cell["p_adjusted"]
    assert data["best"]["tests"]["1"]["significant"] == cell["significant"]


WARMED = '''
import time
from pathlib import Path

BUILT = {}

def build(mode="base", fail=False):
    time.sleep(0.6)  # longer than the per-question timeout
    BUILT[mode] = True

def search(question, depth, mode="base", fail=False):
    if mode not in BUILT:
        raise RuntimeError("index not built")
    n = int(question.split()[-1])
    return [(f"c{n}", 2.0), ("x", 1.0)]
'''


def test_a_warm_up_hook_builds_the_index_outside_the_per_question_timeout(project):
    write_module(project, "warmed", WARMED)
    write_config(project, 'type = "python"\ntarget = "warmed:search"\nwarmup = "warmed:build"\ntimeout = 0.3\n'
                          'params = { mode = "base" }\n', extra='[index]\nversion = "v1"\n', k=2)
    done = cli("sweep", "--grid", "mode=base,other", "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert [r["means"]["mrr"] for r in json.loads(done.stdout)["rows"]] == [1.0, 1.0]


def test_configs_in_a_subfolder_import_the_project_s_package(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "runbook_rag").mkdir()
    (tmp_path / "runbook_rag" / "__init__.py").write_text("")
    write_module(tmp_path / "runbook_rag", "search", RETRIEVER)
    write_gold(tmp_path, [{"id": f"a{i}", "question": f"answerable {i}", "gold": [f"c{i}"]} for i in range(1, N + 1)])
    sweep_dir = tmp_path / "eval" / "sweep"
    sweep_dir.mkdir(parents=True)
    for name, mode in (("base", "base"), ("better", "better")):
        (sweep_dir / f"{name}.toml").write_text(
            f'gold_set = "../../gold.json"\nk = 2\n[index]\nversion = "v1"\n[retriever]\ntype = "python"\n'
            f'target = "runbook_rag.search:search"\ndepth = 6\nparams = {{ mode = "{mode}" }}\n')
    done = cli("sweep", "eval/sweep/base.toml", "eval/sweep/better.toml", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [r["means"]["mrr"] for r in json.loads(done.stdout)["rows"]] == pytest.approx(
        [_expected("base")["mrr"], _expected("better")["mrr"]])
    # a module that is nowhere: the message names where it was looked for
    (sweep_dir / "lost.toml").write_text((sweep_dir / "base.toml").read_text().replace("runbook_rag.search",
                                                                                        "runbook_rag.gone"))
    lost = cli("sweep", "eval/sweep/base.toml", "eval/sweep/lost.toml", cwd=tmp_path)
    assert lost.returncode == 2
    assert ("no module named 'runbook_rag.gone' (looked for in the config file's folder and the repository root, "
            "then the installed packages)") in lost.stderr


def test_an_edited_retriever_file_makes_the_cache_ask_again_and_say_why(project):
    first = cli("sweep", "--grid", "mode=base,better", cwd=project)
    assert first.returncode == 0, first.stderr
    assert len(_calls(project)) == 2 * N
    again = cli("sweep", "--grid", "mode=base,better", cwd=project)
    assert len(_calls(project)) == 2 * N and "asked again" not in again.stderr
    # the same config, another retriever: a comment is enough to be another file
    (project / "ranker.py").write_text((project / "ranker.py").read_text() + "\n# tuned\n")
    edited = cli("sweep", "--grid", "mode=base,better", cwd=project)
    assert edited.returncode == 0, edited.stderr
    assert len(_calls(project)) == 4 * N
    assert edited.stderr.count(f"ci-eval: retrieval cache: {N} asked again: the retriever's code changed since "
                               "its answers were cached (ranker.py)") == 2
    assert edited.stdout == first.stdout


STAGED = '''
from pathlib import Path

def search(question, depth, mode="base"):
    with open(Path(__file__).with_name("calls.log"), "a") as log:
        log.write(question + "\\n")
    n = int(question.split()[-1])
    pool = [[f"c{n}", 3.0]] + [[f"x{j}", 2.0 - j / 100] for j in range(9)]
    final = pool[1:3] + pool[:1] if n % 3 == 0 else pool[:3]  # every third gold chunk reranked down
    return {"stages": {"pool": pool}, "results": final}
'''


def test_answers_with_stages_come_back_from_the_cache(project):
    write_module(project, "staged", STAGED)
    write_config(project, 'type = "python"\ntarget = "staged:search"\nparams = { mode = "base" }\n',
                 extra='[index]\nversion = "v1"\n\n[[stages]]\nname = "pool"\ndepth = 10\n', k=2)
    first = cli("sweep", "--grid", "mode=base,other", "--dir", "one", cwd=project)
    assert first.returncode == 0, first.stderr
    assert len(_calls(project)) == 2 * N
    again = cli("sweep", "--grid", "mode=base,other", "--dir", "two", "--cache", "one/cache", cwd=project)
    assert again.returncode == 0, again.stderr
    assert len(_calls(project)) == 2 * N  # nothing asked the second time
    assert again.stderr.count(f"{N} answered from the retrieval cache, 0 asked") == 2
    for row in ("row-01.json", "row-02.json"):
        live, cached = read_run(project / "one" / row), read_run(project / "two" / row)
        assert cached["stages"] == live["stages"] and live["stages"]
        assert [q["ranking"] for q in cached["questions"]] == [q["ranking"] for q in live["questions"]]
