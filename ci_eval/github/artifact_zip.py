"""Reading a downloaded workflow-artifact zip as hostile input.

The baseline artefact may come from any run of the workflow, and the ``workflow_run``
poster reads a zip a fork's PR produced, so nothing in it is trusted: the zip must be
small, hold only the member names we expect (flat, no directories, no links), and every
member is decompressed with a byte counter so a header that lies about sizes gains nothing.

GitHub's upload-artifact action does the zipping on the way in; :func:`build_zip` exists
for tests and for the loopback GitHub stand-in.
"""

from __future__ import annotations

import io
import stat
import zipfile
import zlib

from ci_eval.errors import InputError
from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES

RUN_MEMBER = "ci-eval-run.json"
COMMENT_MEMBER = "comment.md"
PR_MEMBER = "pr.json"
# The branch's recent runs question by question (core/compare/recent_runs.py), when it fits
QUESTIONS_MEMBER = "ci-eval-questions.json"
MAX_QUESTIONS_BYTES = 8 * 1024 * 1024

# The run artefact is the largest member; its limit is the one the writer checks too
# (inputs/loaders.py, MAX_ARTEFACT_BYTES), so nothing written is ever skipped when read.
# JSON artefacts compress about sixfold; a zip at half the limit leaves room to spare.
MAX_MEMBER_BYTES = MAX_ARTEFACT_BYTES
MAX_TOTAL_BYTES = MAX_ARTEFACT_BYTES + 16 * 1024 * 1024  # with the comment, summary and charts
MAX_COMPRESSED_BYTES = MAX_ARTEFACT_BYTES // 2
_MAX_ENTRIES = 16
_CHUNK = 64 * 1024


def _unsafe_name_reason(name: str) -> str | None:
    if not name:
        return "an empty member name"
    if "\x00" in name:
        return "a NUL byte in a member name"
    if "\\" in name:
        return f"a backslash in member name {name!r}"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return f"an absolute member name {name!r}"
    if any(part in ("..", ".") for part in name.split("/")):
        return f"a path-traversal member name {name!r}"
    if "/" in name:
        return f"a member in a folder {name!r}"
    return None


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    mode = info.external_attr >> 16
    return info.create_system == 3 and stat.S_ISLNK(mode)


def read_artifact_zip(
    data: bytes,
    source: str,
    required: tuple[str, ...] = (RUN_MEMBER,),
    optional: tuple[str, ...] = (COMMENT_MEMBER, PR_MEMBER),
    max_compressed: int = MAX_COMPRESSED_BYTES,
    max_member: int = MAX_MEMBER_BYTES,
    max_total: int = MAX_TOTAL_BYTES,
) -> dict[str, bytes]:
    # long: every safety check of a hostile zip, in the order the archive is read, so a
    # reviewer sees in one place that none is skipped.
    """The members of an artifact zip, by name, after every safety check.

    ``source`` names the artifact in error messages (``artifact ci-eval (id 42)``). Raises
    :class:`InputError` for anything unexpected: too large (compressed, declared or actual
    size), not a zip, encrypted, a name that is not one of ``required`` + ``optional``, a
    duplicate, a folder, a link, or a required member missing.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("data must be bytes")
    if len(data) > max_compressed:
        raise InputError(
            f"the zip is {len(data)} bytes, over the {max_compressed}-byte limit", source
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise InputError(f"not a valid zip archive ({exc})", source) from None

    with archive:
        infos = archive.infolist()
        if len(infos) > _MAX_ENTRIES:
            raise InputError(
                f"the zip has {len(infos)} entries, expected at most {_MAX_ENTRIES}", source
            )
        allowed = set(required) | set(optional)
        seen: set[str] = set()
        declared_total = 0
        for info in infos:
            reason = _unsafe_name_reason(info.filename)
            if reason:
                raise InputError(f"refusing a zip with {reason}", source)
            if info.is_dir():
                raise InputError(f"refusing a zip with a folder entry {info.filename!r}", source)
            if _is_symlink(info):
                raise InputError(f"refusing a zip with a symbolic link {info.filename!r}", source)
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise InputError(
                    f"member {info.filename!r} uses compression method {info.compress_type}; "
                    "only stored and deflated members are read",
                    source,
                )
            if info.flag_bits & 0x1:
                raise InputError(f"refusing an encrypted member {info.filename!r}", source)
            if info.filename not in allowed:
                expected = ", ".join(sorted(allowed))
                raise InputError(
                    f"unexpected member {info.filename!r} (expected only: {expected})", source
                )
            if info.filename in seen:
                raise InputError(f"duplicate member {info.filename!r}", source)
            seen.add(info.filename)
            if info.file_size > max_member:
                raise InputError(
                    f"member {info.filename!r} declares {info.file_size} bytes, over the "
                    f"{max_member}-byte limit",
                    source,
                )
            declared_total += info.file_size
        if declared_total > max_total:
            raise InputError(
                f"members declare {declared_total} bytes in all, over the {max_total}-byte limit",
                source,
            )
        missing = [name for name in required if name not in seen]
        if missing:
            raise InputError(f"missing member {missing[0]!r}", source)

        members: dict[str, bytes] = {}
        total = 0
        for info in infos:
            members[info.filename] = _read_capped(
                archive, info, source, max_member, max_total - total
            )
            total += len(members[info.filename])
        return members


def _read_capped(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, max_member: int, budget: int
) -> bytes:
    cap = min(max_member, budget)
    out = bytearray()
    try:
        with archive.open(info) as handle:
            while True:
                chunk = handle.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > cap:
                    raise InputError(
                        f"member {info.filename!r} inflates past the {cap}-byte limit", source
                    )
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError) as exc:
        raise InputError(f"member {info.filename!r} is corrupt ({exc})", source) from None
    return bytes(out)


def build_zip(members: dict[str, bytes]) -> bytes:
    """A deflated zip of ``members`` in the given order (what upload-artifact produces)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, content)
    return buffer.getvalue()
