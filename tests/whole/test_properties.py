"""Property tests on every parser: whatever arrives, the result is a value or ci-eval's own
error (which the CLI turns into exit 2 and a one-line message), never another exception.
And what ci-eval writes into the runner's files and log cannot be read as something else."""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_paths import BAD_INPUTS_PROJECT

from ci_eval.core.answers import AnswersSpec
from ci_eval.core.artefact.artefact import validate_artefact
from ci_eval.core.artefact.results import ResultError, Retrieved, clean
from ci_eval.core.config import Config, parse_config
from ci_eval.core.gold.goldset import GoldSet, parse_gold_set
from ci_eval.core.gold.manifest import ChunkIndex
from ci_eval.errors import InputError
from ci_eval.github import env as actions_env
from ci_eval.inputs.answers import load_answers
from ci_eval.inputs.files import decode, parse_json, read_toml
from ci_eval.inputs.loaders import load_manifest
from ci_eval.retrieval import run_file
from ci_eval.trec import parse as trec

PROJECT = BAD_INPUTS_PROJECT
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**400)
    | st.floats()  # NaN and the infinities included
    | st.text(max_size=12)
)
json_like = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)
# Values a user is likely to get almost right: the interesting edge of a schema.
ids = st.sampled_from(["q1", "q2", "", "kb/a", "kb/b", " ", "\u200b", "q1"]) | st.text(max_size=6)
grades = st.integers(-2, 3) | st.sampled_from([1.0, 1.5, True, "1", None, 10**30, float("nan")])
gold_values = st.lists(ids, max_size=3) | st.dictionaries(ids, grades, max_size=3) | json_like


@st.composite
def questions(draw):
    q = {}
    for key, values in (
        ("id", ids | json_like),
        ("question", st.text(max_size=20) | json_like),
        ("gold", gold_values),
        ("unanswerable", st.booleans() | json_like),
        ("tags", st.lists(st.text(max_size=5), max_size=2) | json_like),
        ("notes", st.text(max_size=5)),
        ("colour", st.text(max_size=3)),
    ):
        if draw(st.integers(0, 9)) < (9 if key in ("id", "question", "gold") else 3):
            q[key] = draw(values)
    return q


gold_sets = st.fixed_dictionaries(
    {"schema_version": st.sampled_from([1, 1, 2, "1", None, True])},
    optional={
        "questions": st.lists(questions(), max_size=5) | json_like,
        "index_version": st.text(max_size=5) | json_like,
        "provenance": st.dictionaries(st.sampled_from(["built_by", "method", "x"]), json_like, max_size=2) | json_like,
    },
)

metric_names = st.sampled_from(
    ["hit@5", "recall@15", "mrr", "mrr@10", "map", "ndcg@0", "P_5", "success.3", "hits@5", "recall@", "", "@5"]
) | st.text(max_size=8)
numbers = st.integers(-5, 2000) | st.floats() | st.integers(10**20, 10**30) | json_like
retrievers = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["python", "command", "run-file", "http"]) | json_like,
        "target": st.sampled_from(["m:f", "m.f", "a.b:c", ""]) | json_like,
        "command": st.lists(st.text(max_size=5), max_size=2) | json_like,
        "path": st.sampled_from(["run.trec", "run.jsonl", "", "/abs/run"]) | json_like,
        "format": st.sampled_from(["trec", "jsonl", "csv"]),
        "batch": st.booleans() | json_like,
        "depth": numbers,
        "concurrency": numbers,
        "timeout": numbers,
        "total_timeout": numbers,
        "params": json_like,
        "env": st.dictionaries(st.text(max_size=4), st.text(max_size=4) | json_like, max_size=2),
    },
)
metric_tables = st.dictionaries(metric_names, numbers, max_size=3) | json_like
configs = st.fixed_dictionaries(
    {},
    optional={
        "gold_set": st.sampled_from(["gold.json", ""]) | json_like,
        "k": numbers,
        "metrics": st.lists(metric_names, max_size=3) | json_like,
        "relevance_level": numbers,
        "abstain_below": numbers,
        "answers": st.sampled_from(["answers.jsonl", ""]) | json_like,
        "retriever": retrievers | json_like,
        "index": st.fixed_dictionaries(
            {}, optional={"manifest": st.text(max_size=5), "callable": st.text(max_size=5), "version": json_like}
        ) | json_like,
        "gate": st.fixed_dictionaries(
            {},
            optional={
                "min": metric_tables,
                "max_drop": metric_tables,
                "tag_min": st.dictionaries(st.text(max_size=4), metric_tables, max_size=2) | json_like,
                "regressions": st.sampled_from(["significant", "always", "never"]),
                "protected": st.lists(st.text(max_size=3), max_size=2) | json_like,
                "max_new_misses": numbers,
            },
        ) | json_like,
        "report": json_like,
    },
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


BASE_ARTEFACT = json.loads((PROJECT / "base.json").read_text(encoding="utf-8"))
ARTEFACT_PATHS = list(_paths(BASE_ARTEFACT))[1:]


@st.composite
def damaged_artefacts(draw):
    """The valid base artefact with one to three values replaced or removed."""
    art = copy.deepcopy(BASE_ARTEFACT)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ARTEFACT_PATHS))
        parent = art
        try:
            for part in path[:-1]:
                parent = parent[part]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(json_like)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced this path's parent
    return art


def near_json_text(values=json_like):
    """JSON text, sometimes cut short or with a byte of noise, and JSON's own oddities."""
    dumped = values.map(lambda v: json.dumps(v, allow_nan=True))
    return (
        dumped
        | st.tuples(dumped, st.integers(0, 200)).map(lambda t: t[0][: t[1]])
        | st.tuples(dumped, st.integers(0, 200), st.sampled_from(['"', "}", ",", "NaN", "\\ud800", "1e999"]))
        .map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1]:])
        | st.text(max_size=40)
    )


def raw_bytes():
    return st.binary(max_size=120) | near_json_text().map(lambda t: t.encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


# --------------------------------------------------------------------------- core parsers


@FUZZ
@given(st.one_of(gold_sets, json_like))
def test_gold_set_parser_returns_a_gold_set_or_input_errors(data):
    try:
        result = parse_gold_set(data, "gold.json")
    except InputError as exc:
        assert exc.source == "gold.json"
        assert "\n" not in str(exc)
    else:
        assert isinstance(result, GoldSet)
        assert len({q.id for q in result.questions}) == len(result.questions)


@FUZZ
@given(st.one_of(configs, json_like))
def test_config_parser_returns_a_config_or_input_errors(data):
    try:
        result = parse_config(data, "ci-eval.toml", "project")
    except InputError as exc:
        assert exc.source == "ci-eval.toml"
    else:
        assert isinstance(result, Config)
        result.as_recorded()
        # Whatever was accepted can be recorded in the artefact, which is strict JSON.
        json.dumps(result.as_recorded(), allow_nan=False)


@FUZZ
@given(st.one_of(damaged_artefacts(), json_like))
def test_artefact_validation_returns_the_artefact_or_input_errors(data):
    try:
        result = validate_artefact(data, "base.json")
    except InputError as exc:
        assert exc.source == "base.json"
    else:
        assert result is data


@FUZZ
@given(
    st.lists(st.tuples(ids | json_like, st.floats() | st.integers() | st.integers(10**308, 10**400) | json_like), max_size=6)
    | st.lists(st.fixed_dictionaries({"id": ids, "score": st.floats() | json_like}), max_size=4)
    | json_like,
    st.integers(1, 5),
)
def test_clean_returns_a_ranking_or_a_result_error(raw, depth):
    try:
        result = clean(raw, depth)
    except ResultError:
        return
    assert isinstance(result, Retrieved)
    assert len(result.ids) == len(set(result.ids)) <= depth
    assert all(s == s and abs(s) != float("inf") for s in result.scores)
    # What is kept can be written to the artefact (strict JSON, UTF-8).
    json.dumps([result.ids, result.scores], allow_nan=False, ensure_ascii=False).encode("utf-8")


plain_ids = st.sampled_from(["a", "b", "c", "d", "\ud800", "", "é"])
plain_scores = st.sampled_from([2.0, 1.0, 0.5, 0.0, -0.0, -1.0, float("nan"), float("inf"), 1])


@FUZZ
@given(st.lists(st.tuples(plain_ids, plain_scores) | st.lists(plain_ids, min_size=2, max_size=2), max_size=6),
       st.integers(1, 5), st.none() | st.just(frozenset("abc")))
def test_cleans_straight_line_path_gives_what_the_general_one_gives(raw, depth, known):
    """``clean`` takes a shortcut for plain, ordered pairs: it must never differ from the
    general path, result or error."""
    from ci_eval.core.artefact import results

    def outcome(fn):
        try:
            return fn(raw, depth, 1.0, known)
        except ResultError as exc:
            return str(exc)

    cleaned = outcome(results.clean)
    assert cleaned == outcome(results._clean)
    if isinstance(cleaned, Retrieved) and cleaned.pairs is not None:  # the retriever's own tuples, cut to depth
        assert cleaned.pairs == tuple(zip(cleaned.ids, cleaned.scores))
        assert all(type(pair) is tuple for pair in cleaned.pairs)


gold_questions = st.fixed_dictionaries(
    {"id": st.text("ab", max_size=3), "question": st.text("xy", max_size=2),
     "gold": st.lists(st.text("gh", max_size=2), max_size=2)
     | st.dictionaries(st.text("gh", max_size=2), st.integers(-1001, 1001) | st.booleans() | st.floats(0, 2), max_size=2)
     | json_like},
    optional={"tags": st.lists(st.text("t", max_size=2), max_size=2) | json_like, "unanswerable": st.booleans() | json_like,
              "notes": st.text(max_size=2) | json_like, "other": json_like})


@FUZZ
@given(gold_questions | json_like)
def test_the_gold_sets_straight_line_question_check_never_passes_what_the_schema_refuses(question):
    from jsonschema import Draft202012Validator

    from ci_eval.core.gold.goldset import _question_valid
    from ci_eval.schemas import load

    schema = load("goldset")
    one = Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/question"})
    if _question_valid(question):
        assert one.is_valid(question)


# --------------------------------------------------------------------------- file readers


@FUZZ
@given(near_json_text())
def test_parse_json_returns_a_value_or_an_input_error(text):
    try:
        value = parse_json(text, "f.json")
    except InputError as exc:
        assert exc.source == "f.json"
    else:
        # Accepted JSON holds only what strict JSON and UTF-8 can carry back out.
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")


@FUZZ
@given(raw_bytes())
def test_decode_then_parse_json_never_fails_otherwise(raw):
    try:
        parse_json(decode(raw, "f.json"), "f.json")
    except InputError:
        pass


toml_text = st.lists(
    st.sampled_from(
        ['k = 5', 'k = "5"', "k = nan", "x = inf", "[retriever]", "[[a]]", 'a = { b = 1 }', "k = " + "9" * 5000,
         'p = """', "= 3", 'n = 1979-05-27T07:32:00Z', "k = 0x_1", "\ufeff", '"\\ud800" = 1', "[tool.ci-eval]"]
    )
    | st.text(max_size=15),
    max_size=6,
).map("\n".join)


@FUZZ
@given(toml_text.map(lambda t: t.encode("utf-8", "surrogatepass")) | st.binary(max_size=60))
def test_read_toml_returns_a_table_or_an_input_error(scratch, raw):
    path = _write(scratch, "c.toml", raw)
    try:
        data = read_toml(path, "config file")
    except InputError as exc:
        assert exc.source == path
    else:
        assert isinstance(data, dict)


def _jsonl(values):
    return st.lists(near_json_text(values), max_size=4).map("\n".join).map(lambda t: t.encode("utf-8", "surrogatepass"))


answer_rows = st.fixed_dictionaries({"id": ids, "correct": st.booleans() | json_like}) | json_like


class _Question:
    def __init__(self, qid: str):
        self.id, self.question = qid, f"question {qid}"


@FUZZ
@given(_jsonl(answer_rows) | st.binary(max_size=60))
def test_load_answers_returns_answers_or_input_errors(scratch, raw):
    path = _write(scratch, "answers.jsonl", raw)
    try:
        answers, _ = load_answers(AnswersSpec("jsonl", path), [_Question("q1"), _Question("q2")])
    except InputError as exc:
        assert exc.source == path or all(p.source == path for p in getattr(exc, "problems", []))
    else:
        assert set(answers) <= {"q1", "q2"} and all(isinstance(v, bool) for v in answers.values())


class _ManifestConfig:
    source = "ci-eval.toml"
    manifest_callable = None
    index_version = "kb-1"

    def __init__(self, manifest):
        self.manifest = manifest


manifests = st.fixed_dictionaries({}, optional={"version": st.text(max_size=4) | json_like, "ids": st.lists(ids, max_size=3) | json_like})


@FUZZ
@given(near_json_text(manifests | json_like).map(lambda t: t.encode("utf-8", "surrogatepass")) | st.binary(max_size=60))
def test_load_manifest_returns_a_manifest_or_an_input_error(scratch, raw):
    path = _write(scratch, "index.json", raw)
    try:
        manifest = load_manifest(_ManifestConfig(path))
    except InputError as exc:
        assert exc.source == path
    else:
        assert isinstance(manifest, ChunkIndex) and all(isinstance(i, str) for i in manifest.ids)


run_rows = st.fixed_dictionaries(
    {"id": ids, "results": st.lists(st.fixed_dictionaries({"id": ids, "score": st.floats() | json_like}), max_size=3) | json_like}
) | json_like


@FUZZ
@given(_jsonl(run_rows) | st.binary(max_size=60))
def test_jsonl_run_file_reader_returns_a_run_or_an_input_error(scratch, raw):
    path = _write(scratch, "run.jsonl", raw)
    try:
        run = run_file.read_run_file(path, "jsonl", path)
    except InputError as exc:
        assert exc.source == path
        return
    # Every entry the reader accepted is one the ranking accepts too.
    for results in run.values():
        clean(results, 10)


trec_words = st.sampled_from(["q1", "q2", "Q0", "0", "1", "-1", "2.5", "nan", "inf", "1e999", "x", "kb/a", "kb/b", "#"])
trec_lines = st.lists(
    st.lists(trec_words | st.text(alphabet=st.characters(codec="utf-8"), max_size=4), min_size=0, max_size=7).map(
        lambda words: " ".join(words)
    ),
    max_size=6,
)


def _trec_bytes():
    return trec_lines.map(lambda lines: "\n".join(lines).encode("utf-8")) | st.binary(max_size=80)


@FUZZ
@given(_trec_bytes())
def test_trec_qrels_parser_returns_qrels_or_an_input_error(raw):
    try:
        qrels = trec.parse_qrels(raw, "qrels.txt")
    except InputError as exc:
        assert exc.source == "qrels.txt"
    else:
        qrels.as_dict()


@FUZZ
@given(_trec_bytes())
def test_trec_run_parser_returns_a_run_or_an_input_error(raw):
    try:
        run = trec.parse_run(raw, "run.trec")
    except InputError as exc:
        assert exc.source == "run.trec"
    else:
        for pairs in run.as_pairs().values():
            assert all(score == score and abs(score) != float("inf") for _, score in pairs)


def _run_outcome(raw: bytes):
    try:
        run = trec.parse_run(raw, "run.trec")
    except InputError as exc:
        return str(exc)
    return run.as_pairs()


@FUZZ
@given(_trec_bytes())
def test_trec_run_parser_gives_the_same_with_the_general_splitter_and_small_blocks(raw):
    expected = _run_outcome(raw)
    with mock.patch.object(trec, "_split_plain", lambda *args: None):
        assert _run_outcome(raw) == expected
    with mock.patch.object(trec, "_BLOCK", 8), mock.patch.object(trec, "_ROWS", 2):
        assert _run_outcome(raw) == expected


decimal_tokens = st.from_regex(r"\A[-+]?[0-9]{0,21}(\.[0-9]{0,21})?\Z", fullmatch=True) | st.floats(
    allow_nan=False, allow_infinity=False).map(repr)


@FUZZ
@given(st.lists(decimal_tokens, min_size=1, max_size=20))
def test_trec_scores_are_the_doubles_strtod_gives(tokens):
    text = "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens)).encode()
    try:
        expected = [float(t) for t in tokens]
    except ValueError:
        expected = None
    try:
        pairs = trec.parse_run(text, "run.trec").as_pairs()
    except InputError as exc:
        assert expected is None or not all(abs(x) < float("inf") for x in expected), exc
        return
    assert expected is not None
    assert [s.hex() for _, s in pairs["q"]] == [x.hex() for x in expected]


@FUZZ
@given(_trec_bytes())
def test_trec_run_file_through_the_runner_returns_a_run_or_an_input_error(scratch, raw):
    path = _write(scratch, "run.trec", raw)
    try:
        run_file.read_run_file(path, "trec", path)
    except InputError as exc:
        assert exc.source == path


# --------------------------------------------------------------------------- the Actions environment

pr_payloads = st.fixed_dictionaries(
    {},
    optional={
        "pull_request": st.fixed_dictionaries(
            {},
            optional={
                "number": st.integers() | json_like,
                "base": st.fixed_dictionaries({}, optional={"sha": st.text(max_size=5) | json_like, "ref": json_like}),
                "head": st.fixed_dictionaries(
                    {}, optional={"sha": json_like, "repo": st.fixed_dictionaries({}, optional={"full_name": json_like}) | json_like}
                ),
            },
        )
        | json_like,
        "workflow_run": st.fixed_dictionaries({}, optional={"id": st.integers() | json_like, "head_sha": json_like}) | json_like,
        "repository": json_like,
    },
)


@FUZZ
@given(
    near_json_text(pr_payloads | json_like).map(lambda t: t.encode("utf-8", "surrogatepass")) | st.binary(max_size=60),
    st.sampled_from(["pull_request", "pull_request_target", "workflow_run", "push", "schedule"]),
)
def test_read_event_returns_an_event_or_an_input_error(scratch, raw, name):
    path = _write(scratch, "event.json", raw)
    env = {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": path, "GITHUB_REPOSITORY": "acme/kb", "GITHUB_SHA": "2" * 40}
    try:
        event = actions_env.read_event(env)
    except InputError as exc:
        assert exc.source == path
    else:
        assert event.name == name
        if name.startswith("pull_request"):
            assert isinstance(event.pr_number, int) and isinstance(event.base_sha, str)


def parse_github_output(text: str) -> dict[str, str]:
    """What the runner reads from GITHUB_OUTPUT: ``name=value`` lines and ``name<<DELIM``
    blocks, lines split on "\\n" and joined back with it."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        eq, heredoc = line.find("="), line.find("<<")
        if eq >= 0 and (heredoc < 0 or eq < heredoc):
            outputs[line[:eq]] = line[eq + 1:]
            i += 1
            continue
        assert heredoc > 0, f"not an output line: {line!r}"
        name, delimiter = line[:heredoc], line[heredoc + 2:]
        body = []
        i += 1
        while lines[i] != delimiter:  # an unterminated block is an IndexError: a failure
            body.append(lines[i])
            i += 1
        outputs[name] = "\n".join(body)
        i += 1
    return outputs


output_names = st.sampled_from(["gate", "summary", "artefact", "comment-url", "hit-at-5"])
output_values = st.text() | st.lists(
    st.sampled_from(["gate<<EOF", "EOF", "ci_eval_", "passed", "failed", "=", "<<", "\r", "\n", "ghadelimiter_1"]),
    max_size=8,
).map("".join)


@FUZZ
@given(st.dictionaries(output_names, output_values, min_size=1, max_size=4))
def test_outputs_cannot_forge_other_outputs(scratch, outputs):
    path = scratch / "github_output"
    path.write_text("earlier=kept\n", encoding="utf-8")
    actions_env.write_outputs(str(path), outputs)
    # Read as the runner does (File.ReadAllText): no newline translation, "\r" stays.
    parsed = parse_github_output(path.read_bytes().decode("utf-8"))
    assert parsed == {"earlier": "kept", **outputs}


def test_an_output_value_holding_the_first_delimiter_gets_another(tmp_path):
    path = tmp_path / "github_output"
    forged = f"x\nci_eval_{'0' * 32}\nverdict=passed"
    with mock.patch.object(actions_env.secrets, "token_hex", side_effect=["0" * 32, "1" * 32]):
        actions_env.write_outputs(str(path), {"gate": forged})
    assert parse_github_output(path.read_bytes().decode("utf-8")) == {"gate": forged}


# The runner reads the log line by line the way .NET's ReadLine does ("\r\n", "\r" or "\n"
# end a line) and trims leading white space before looking for "::".
RUNNER_LINES = re.compile(r"\r\n|\r|\n")

log_text = st.text() | st.lists(
    st.sampled_from(["::set-output name=x::1", "::stop-commands::t", "::", ":", " ", "\t", "\u3000", "\r", "\n", "\r\n", "x", "\u200b"]),
    max_size=8,
).map("".join)


@FUZZ
@given(log_text)
def test_a_logged_line_never_starts_a_workflow_command(text):
    logged = actions_env.safe_log(text)
    for line in RUNNER_LINES.split(logged):
        assert not line.lstrip().startswith("::"), repr(line)
    # Only zero-width spaces are added: the text reads the same.
    assert logged.replace("\u200b", "") == text.replace("\u200b", "")


# --------------------------------------------------------------------------- hostile artefacts

# What an artefact may carry as a metric name once it is accepted: ci-eval's canonical
# spellings and nothing else, so no name can be a mention, a link or HTML in a comment.
CANONICAL_METRIC = re.compile(r"(?:hit|recall|precision|ndcg)@[1-9][0-9]*|mrr(?:@[1-9][0-9]*)?|map")
HOSTILE_NAMES = ("@acme/security-team", "[login](https://evil.example/p)", "<img src=x>")
metric_names = (
    st.sampled_from([*HOSTILE_NAMES, "hit@2", "HIT@2", "success_2", "P.2", "hit@02", "mrr@10", "map", "hit@2 ",
                     "hit@2\n@everyone", "ndcg@0", "recall@-1", "hit@²"])
    | st.text(max_size=16)
    | st.from_regex(CANONICAL_METRIC, fullmatch=True)
)
metric_values = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=0, max_value=1)
    | st.integers(-3, 3)
    | st.sampled_from([-2.0, -0.0, 1.0000001, 5e-324, 10**400])
)


def _through_the_loader(artefact: dict):
    from ci_eval.inputs.artefact_file import run_from_bytes

    raw = json.dumps(artefact, sort_keys=True).encode("utf-8", "surrogatepass")
    return run_from_bytes(raw, "base.json")


def _render(base: dict) -> str:
    from ci_eval.report import build_report, policy_from

    return build_report(base, BASE_ARTEFACT, policy_from({})).markdown


@FUZZ
@given(metric_names, st.sampled_from(["list", "overall", "tag", "question", "history"]))
def test_an_accepted_artefact_names_only_canonical_metrics(name, where):
    art = copy.deepcopy(BASE_ARTEFACT)
    value = 0.5
    if where == "list":
        art["metrics"] = [*art["metrics"], name]
    elif where == "overall":
        art["summary"]["overall"]["means"][name] = value
    elif where == "tag":
        next(iter(art["summary"]["by_tag"].values()))["means"][name] = value
    elif where == "question":
        art["questions"][0]["metrics"][name] = value
    else:
        art["history"] = [{"sha": None, "created_at": None, "index_version": None, "means": {name: value}}]
    try:
        accepted = _through_the_loader(art)
    except InputError as exc:
        assert exc.source == "base.json" and "\n" not in str(exc)
        # A refused name is not repeated in the error line: it may be a mention or markup.
        if name in HOSTILE_NAMES:
            assert name not in str(exc)
    else:
        assert CANONICAL_METRIC.fullmatch(name), name
        _render(accepted)


@FUZZ
@given(metric_values, st.sampled_from(["overall", "question", "grade"]))
def test_an_accepted_artefacts_values_are_in_range_and_render(value, where):
    art = copy.deepcopy(BASE_ARTEFACT)
    if where == "overall":
        art["summary"]["overall"]["means"]["hit@2"] = value
    elif where == "question":
        art["questions"][1]["metrics"]["recall@6"] = value
    else:
        art["questions"][0]["gold"] = {"kb/account#reset": value}
    try:
        accepted = _through_the_loader(art)
    except InputError as exc:
        assert exc.source == "base.json" and "\n" not in str(exc)
    else:
        if where == "grade":
            assert -1000 <= value <= 1000 and float(value).is_integer()
        else:
            assert 0 <= value <= 1
        _render(accepted)  # never an OverflowError, whatever was accepted
