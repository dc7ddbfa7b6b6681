"""One bound for a chunk id everywhere: what the readers accept, the schemas accept."""

from __future__ import annotations

import json
from importlib import resources

from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.core.limits import MAX_ID_BYTES
from ci_eval.trec import parse


def string_limits(node, out):
    if isinstance(node, dict):
        if node.get("type") == "string" and "maxLength" in node or "maxLength" in node and "type" not in node:
            out.append(node["maxLength"])
        for value in node.values():
            string_limits(value, out)
    elif isinstance(node, list):
        for value in node:
            string_limits(value, out)
    return out


def test_the_run_file_reader_and_every_schema_share_the_bound():
    assert parse._LONGEST_FIELD == MAX_ID_BYTES
    goldset = json.loads(resources.files("ci_eval.schemas").joinpath("goldset.schema.json").read_text("utf-8"))
    assert goldset["$defs"]["chunk_id"]["maxLength"] == MAX_ID_BYTES
    for name in ("goldset", "artefact", "artefact-v2"):
        schema = json.loads(resources.files("ci_eval.schemas").joinpath(f"{name}.schema.json").read_text("utf-8"))
        # The old chunk-id cap (1,000 characters) is gone from every schema.
        assert 1000 not in string_limits(schema, []), name


def test_a_gold_set_takes_an_id_of_the_longest_a_reader_takes():
    long_id = "doc/" + "\u00e9" * ((MAX_ID_BYTES - 4) // 2)
    assert len(long_id.encode("utf-8")) == MAX_ID_BYTES
    for gold, grade in (([long_id], 1), ({long_id: 2}, 2)):
        doc = {"schema_version": 2, "questions": [{"id": "q1", "question": "what?", "gold": gold}],
               "anchors": {long_id: {"doc": "d", "start": 0, "end": 3}}}
        parsed = parse_gold_set(doc, "gold.json")
        assert parsed.questions[0].gold == ((long_id, grade),) and long_id in parsed.anchors


def _schema(name: str) -> dict:
    return json.loads(resources.files("ci_eval.schemas").joinpath(f"{name}.schema.json").read_text("utf-8"))


def test_the_gold_set_and_the_artefact_schemas_say_the_shared_limits():
    from ci_eval.core.limits import (
        MAX_JUDGED,
        MAX_QUESTION_CHARS,
        MAX_QUESTION_ID_CHARS,
        MAX_TAG_CHARS,
        MAX_TAGS,
        MAX_TAGS_PER_QUESTION,
    )

    question = _schema("goldset")["$defs"]["question"]["properties"]
    assert (question["id"]["maxLength"], question["question"]["maxLength"]) == (MAX_QUESTION_ID_CHARS,
                                                                              MAX_QUESTION_CHARS)
    assert question["tags"]["maxItems"] == MAX_TAGS_PER_QUESTION
    assert question["tags"]["items"]["maxLength"] == MAX_TAG_CHARS
    assert [b.get("maxItems", b.get("maxProperties")) for b in question["gold"]["oneOf"]] == [MAX_JUDGED] * 2
    v1 = _schema("artefact")
    row = v1["$defs"]["question"]["properties"]
    assert (row["id"]["maxLength"], row["question"]["maxLength"]) == (MAX_QUESTION_ID_CHARS, MAX_QUESTION_CHARS)
    assert (row["tags"]["maxItems"], row["tags"]["items"]["maxLength"]) == (MAX_TAGS_PER_QUESTION, MAX_TAG_CHARS)
    assert row["gold"]["maxProperties"] == MAX_JUDGED
    assert v1["properties"]["summary"]["properties"]["by_tag"]["maxProperties"] == MAX_TAGS
    v2 = _schema("artefact-v2")
    fields = v2["$defs"]["question"]["prefixItems"]
    assert (fields[0]["maxLength"], fields[1]["maxLength"]) == (MAX_QUESTION_ID_CHARS, MAX_QUESTION_CHARS)
    assert (fields[2]["maxItems"], fields[2]["items"]["maxLength"]) == (MAX_TAGS_PER_QUESTION, MAX_TAG_CHARS)
    assert fields[5]["maxItems"] == MAX_JUDGED
    assert v2["properties"]["summary"]["properties"]["by_tag"]["maxProperties"] == MAX_TAGS
