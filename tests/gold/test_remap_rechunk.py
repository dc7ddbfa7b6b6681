"""`ci-eval gold remap` after a re-ingestion that normalises the text and re-chunks it
smaller or larger, with a header on each chunk and overlapping windows: the old text is
found in the new document by its words, so the gold follows it without a person.

Every expected id set is counted in the test from word identities (the words are distinct
tokens), never pasted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ci_eval.cli import main

WORDS = [f"w{i}" for i in range(120)]
OLD_SIZE = 40


def raw(words: list[str]) -> tuple[str, list[int]]:
    """The old ingestion's text: lines of eight words, CRLF line ends."""
    text, offsets = "", []
    for i, w in enumerate(words):
        if i:
            text += "\r\n" if i % 8 == 0 else " "
        offsets.append(len(text))
        text += w
    return text, offsets


def normalised(words: list[str]) -> tuple[str, list[int]]:
    text, offsets = "", []
    for i, w in enumerate(words):
        if i:
            text += " "
        offsets.append(len(text))
        text += w
    return text, offsets


def windows(words, text, offsets, size, stride, header):
    out = []
    for n, a in enumerate(range(0, len(words), stride)):
        b = min(a + size, len(words))
        start, end = offsets[a], offsets[b - 1] + len(words[b - 1])
        body = text[start:end]
        out.append(((a, b), {"id": f"new-{n}", "doc": "guide", "start": start, "end": end,
                             "text": f"Guide, part {n + 1}\n{body}" if header else body}))
        if b == len(words):
            break
    return out


def write(path: Path, version: str, entries) -> None:
    path.write_text("\n".join([json.dumps({"version": version}), *map(json.dumps, entries)]) + "\n")


def expected(old: range, pieces, new_words: list[str]) -> list[str]:
    """The span rule counted in words: a new chunk holding half of the old words or made
    half of them."""
    olds = {WORDS[i] for i in old}
    out = []
    for (a, b), entry in pieces:
        shared = sum(w.rstrip("x") in olds for w in new_words[a:b])
        if shared and (2 * shared >= len(olds) or 2 * shared >= b - a):
            out.append(entry["id"])
    return out


# Half and double size; double size with a typo fixed in the middle of each old chunk too.
@pytest.mark.parametrize("size, stride, typos", [(20, 16, False), (80, 70, False), (80, 70, True)])
def test_a_normalised_rechunk_with_headers_is_remapped_without_a_person(tmp_path, capsys, monkeypatch,
                                                                         size, stride, typos):
    old_text, old_offsets = raw(WORDS)
    old = windows(WORDS, old_text, old_offsets, OLD_SIZE, OLD_SIZE, header=False)
    ids = [entry["id"].replace("new-", "guide#") for _, entry in old]
    write(tmp_path / "old.jsonl", "v1", [dict(entry, id=i) for (_, entry), i in zip(old, ids)])
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": [
        {"id": f"q{n}", "question": f"question {n}", "gold": {cid: n + 1}} for n, cid in enumerate(ids)]}))
    monkeypatch.chdir(tmp_path)
    assert main(["gold", "anchor", "--gold", "gold.json", "--manifest", "old.jsonl"]) == 0

    # typos fixed: a word in the middle of each old chunk mended in place (same word count)
    new_words = [w + "x" if typos and i % OLD_SIZE == OLD_SIZE // 2 else w for i, w in enumerate(WORDS)]
    new_text, new_offsets = normalised(new_words)
    new = windows(new_words, new_text, new_offsets, size, stride, header=True)
    write(tmp_path / "new.jsonl", "v2", [entry for _, entry in new])
    capsys.readouterr()
    assert main(["gold", "remap", "--gold", "gold.json", "--manifest", "new.jsonl", "--write"]) == 0
    out = capsys.readouterr().out
    gold = json.loads((tmp_path / "gold.json").read_text())
    for n, (span, _) in enumerate(old):
        want = expected(range(*span), new, new_words)
        assert gold["questions"][n]["gold"] == dict.fromkeys(want, n + 1)
    # every old chunk is reported under one kind of edit, all of them automatic
    line = next(ln for ln in out.splitlines() if ln.startswith("automatic by edit: "))
    counts = [re.fullmatch(r"(\w+) (\d+) of (\d+)", part).groups() for part in line[19:].split(", ")]
    assert all(auto == total for _, auto, total in counts) and sum(int(t) for *_, t in counts) == len(ids)
    assert ("split" in dict((k, a) for k, a, _ in counts)) == (size < OLD_SIZE)
