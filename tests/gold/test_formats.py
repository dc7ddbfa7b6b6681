"""The readers of `ci-eval gold import` on hostile and exact inputs, through the real CLI."""

from __future__ import annotations

from gold_cli import gold, refused


def test_unclosed_topic_tags_are_refused_in_linear_time(tmp_path):
    # 40,000 unclosed <top> took 65 s with the block pattern (quadratic): 400,000 would take
    # hours. A linear scan does them in well under a second, so the bound is generous.
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "topics.sgml").write_text("<top><num>1\n" * 400_000)
    result = gold("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json",
                  cwd=tmp_path, timeout=60)
    assert refused(result) == ["topics.sgml:line 2: <top> before the previous topic's </top>"]
    assert not (tmp_path / "gold.json").exists()


def test_many_fields_in_one_topic_are_read_in_linear_time(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "topics.sgml").write_text("<top><num>1<title>wings<desc>" + "<nu" * 300_000 + "x</top>")
    result = gold("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json",
                  cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gold.json").is_file()


def test_a_closing_tag_without_its_opening_is_named_at_its_line(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "topics.sgml").write_text("<top><num>1<title>wings</top>\n\n</top>\n")
    result = gold("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json", cwd=tmp_path)
    assert refused(result) == ["topics.sgml:line 3: </top> without its <top>"]
