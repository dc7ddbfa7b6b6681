import pytest

from ci_eval.core.config import parse_config
from ci_eval.errors import InputErrors
from ci_eval.inputs.loaders import find_config, load_config


def minimal(**extra):
    return {"gold_set": "gold.json", "k": 5, "retriever": {"type": "python", "target": "m:f"}, **extra}


def test_defaults_and_resolution():
    c = parse_config(minimal(), "eval/ci-eval.toml", "eval")
    assert c.gold_set == "eval/gold.json"
    # metrics default to k and 3k
    assert c.metrics[:5] == ("hit@5", "recall@5", "precision@5", "ndcg@5", "mrr")
    assert "hit@15" in c.metrics and "ndcg@15" in c.metrics
    assert c.retriever.depth == 15  # 3k, so "just past k" can be told from "gone"
    assert c.relevance_level == 1 and c.abstain_below is None


def test_hits_at_k_and_3k_are_always_measured():
    c = parse_config(minimal(metrics=["mrr"]), "c.toml")
    assert c.metrics == ("mrr", "hit@5", "hit@15")


def test_trec_names_are_aliases_in_metrics_and_gate():
    c = parse_config(minimal(metrics=["success_5", "P.5"], gate={"min": {"success_5": 0.8}}), "c.toml")
    assert c.metrics[:2] == ("hit@5", "precision@5")
    assert c.gate["min"] == {"hit@5": 0.8}


def test_every_error_at_once_with_paths():
    bad = {
        "gold_set": 3,
        "k": 0,
        "retriever": {"type": "command"},
        "gate": {"min": {"hit@5": "high", "bogus@3": 0.5}},
        "colour": "red",
    }
    with pytest.raises(InputErrors) as info:
        parse_config(bad, "ci-eval.toml")
    lines = info.value.lines()
    assert 'ci-eval.toml:gate.min.hit@5: expected a number, got "high"' in lines
    assert any(l.startswith("ci-eval.toml:gate.min.bogus@3:") for l in lines)
    assert any(l.startswith("ci-eval.toml:gold_set: expected a string") for l in lines)
    assert any(l.startswith("ci-eval.toml:k:") for l in lines)
    assert any("unknown key 'colour'" in l for l in lines)
    assert any('retriever type "command" needs "command"' in l for l in lines)


def test_pyproject_table_and_paths_point_into_it(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ci-eval]\ngold_set = "g.json"\nk = "five"\n'
        '[tool.ci-eval.retriever]\ntype = "python"\ntarget = "m:f"\n'
    )
    monkeypatch.chdir(tmp_path)
    assert find_config().name == "pyproject.toml"
    with pytest.raises(InputErrors) as info:
        load_config()
    assert info.value.lines() == ['pyproject.toml:tool.ci-eval.k: expected a whole number, got "five"']


def test_no_config_found(tmp_path, monkeypatch):
    from ci_eval.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="no configuration found"):
        find_config()


def test_invalid_toml_names_line(tmp_path):
    from ci_eval.errors import InputError

    p = tmp_path / "ci-eval.toml"
    p.write_text('gold_set = "g.json"\nk = \n')
    with pytest.raises(InputError) as info:
        load_config(p)
    assert str(info.value).startswith(f"{p}:line 2") and "invalid TOML" in str(info.value)


@pytest.mark.parametrize("value", [10**400, -(10**400), 7])
def test_a_gate_value_too_large_for_a_float_is_out_of_range_not_a_crash(value):
    with pytest.raises(InputErrors) as caught:
        parse_config(minimal(gate={"min": {"hit@5": value}}), "c.toml")
    (problem,) = [str(p) for p in caught.value.problems]
    assert "gate.min.hit@5" in problem and "out of range" in problem
    if abs(value) > 100:
        assert f"an integer of {len(str(abs(value)))} digits" in problem


@pytest.mark.parametrize("stages, floors, shows", [
    ([{"name": ["pool"], "depth": 3}], {"pool": "high"}, 'gate.stage_min.pool: expected a number, got "high"'),
    ([{"name": "pool", "depth": 3}], {"pool": 1.5}, "gate.stage_min.pool: a recall floor is a share between 0 and 1"),
])
def test_a_stage_floor_of_the_wrong_kind_is_a_problem_at_its_place_never_a_crash(stages, floors, shows):
    data = {"gold_set": "g.json", "k": 2, "retriever": {"type": "command", "command": ["x"]},
            "stages": stages, "gate": {"stage_min": floors}}
    with pytest.raises(InputErrors) as caught:
        parse_config(data, "ci-eval.toml")
    assert any(shows in str(p) for p in caught.value.problems)


def test_the_stages_are_chained_with_the_final_list_before_the_packer():
    data = {"gold_set": "g.json", "k": 3, "retriever": {"type": "command", "command": ["x"]},
            "index": {"manifest": "m.json"},
            "stages": [{"name": "pool", "depth": 50}, {"name": "packed", "chars": 900}]}
    config = parse_config(data, "ci-eval.toml")
    assert [(s.name, s.depth, s.chars) for s in config.stages] == [
        ("pool", 50, None), ("results", 3, None), ("packed", None, 900)]
    assert config.as_recorded()["stages"] == [{"name": "pool", "depth": 50}, {"name": "results", "depth": 3},
                                              {"name": "packed", "chars": 900}]
