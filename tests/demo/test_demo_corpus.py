"""Chunking of the pydoc topics: stable, unique ids; nothing empty; a version that moves."""

from __future__ import annotations

import re
import sys

from ci_eval.demo.corpus import Chunk, chunk_topics, index_version, load_chunks, slugify, version_of

TOPICS = {
    "zeta": (
        "Zeta things\n"
        "***********\n"
        "\n"
        "Intro text.\n"
        "\n"
        "Part one\n"
        "========\n"
        "\n"
        "Body one.\n"
        "\n"
        "Part one\n"
        "========\n"
        "\n"
        "Body again.\n"
    ),
    "alpha": (
        "Alpha\n"
        "*****\n"
        "\n"
        "A body.\n"
        "\n"
        "   indented text\n"
        "   -------------\n"
        "\n"
        "Empty heading\n"
        "-------------\n"
        "\n"
        "Sub\n"
        "~~~\n"
        "\n"
        "Sub body.\n"
        "\n"
        "======================\n"
        "\n"
        "After a bare rule.\n"
        "\n"
        "Too long a title\n"
        "---\n"
        "still the same section.\n"
    ),
    "pre": "Text before any heading.\n\nTitle\n=====\n\nTitled text.\n",
    "clash": "Foo\n***\n\none\n\nFoo\n===\n\ntwo\n\nFoo 2\n=====\n\nthree\n",
}


def test_sections_become_chunks_in_sorted_topic_then_document_order():
    chunks = chunk_topics(TOPICS)
    assert [c.id for c in chunks] == [
        "alpha#alpha",
        "alpha#sub",  # "Empty heading" has no body of its own and is dropped
        "clash#foo",
        "clash#foo-2",
        "clash#foo-2-2",  # "Foo 2" slugifies to "foo-2", already taken by the second "Foo"
        "pre#intro",
        "pre#title",
        "zeta#zeta-things",
        "zeta#part-one",
        "zeta#part-one-2",
    ]


def test_chunk_fields():
    by_id = {c.id: c for c in chunk_topics(TOPICS)}
    assert by_id["zeta#part-one-2"] == Chunk("zeta#part-one-2", "zeta", "Part one", "Body again.")
    assert by_id["pre#intro"].title == ""
    assert by_id["pre#intro"].text == "Text before any heading."
    # An indented underline, a rule under a blank line and an underline shorter than its
    # line are body text, not headings: they stay inside the section they appear in.
    alpha = by_id["alpha#alpha"].text
    assert "indented text" in alpha and "-------------" in alpha
    sub = by_id["alpha#sub"].text
    assert "After a bare rule." in sub and "Too long a title\n---" in sub


def test_ids_unique_and_texts_non_empty_on_made_up_topics():
    chunks = chunk_topics(TOPICS)
    assert len({c.id for c in chunks}) == len(chunks)
    assert all(c.text.strip() for c in chunks)


def test_ids_do_not_depend_on_dict_order():
    reordered = dict(reversed(list(TOPICS.items())))
    assert chunk_topics(reordered) == chunk_topics(TOPICS)


def test_slugify():
    assert slugify('The "with" statement') == "the-with-statement"
    assert slugify("__slots__") == "slots"
    assert slugify('Mapping Types — "dict"') == "mapping-types-dict"
    assert slugify("—") == "section"


def test_version_changes_with_any_text_and_with_python():
    base = version_of(chunk_topics(TOPICS), "3.11")
    assert re.fullmatch(r"pydoc-topics-3\.11-[0-9a-f]{12}", base)
    assert version_of(chunk_topics(dict(TOPICS)), "3.11") == base
    edited = dict(TOPICS, zeta=TOPICS["zeta"].replace("Body again.", "Body again!"))
    assert version_of(chunk_topics(edited), "3.11") != base
    renamed = dict(
        TOPICS,
        zeta=TOPICS["zeta"].replace("Part one\n========\n\nBody one", "Part 1\n======\n\nBody one"),
    )
    assert version_of(chunk_topics(renamed), "3.11") != base
    assert version_of(chunk_topics(TOPICS), "3.12").startswith("pydoc-topics-3.12-")


def test_version_separates_field_boundaries():
    # Same concatenated characters, different split between title and text.
    a = (Chunk("t#x", "t", "ab", "c"),)
    b = (Chunk("t#x", "t", "a", "bc"),)
    assert version_of(a, "3.11") != version_of(b, "3.11")


def test_running_interpreter_corpus():
    from pydoc_data.topics import topics

    chunks = load_chunks()
    assert chunks == chunk_topics(topics)  # deterministic across two chunkings
    ids = [c.id for c in chunks]
    assert len(set(ids)) == len(ids)
    assert all(c.text.strip() for c in chunks)
    assert all(c.id.startswith(c.topic + "#") for c in chunks)
    # Every topic key yields at least one chunk: each topic page has a titled body.
    assert {c.topic for c in chunks} == set(topics)
    major_minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert re.fullmatch(rf"pydoc-topics-{re.escape(major_minor)}-[0-9a-f]{{12}}", index_version())
