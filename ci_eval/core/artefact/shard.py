"""Which questions one shard of a run holds, and what a part records about itself.

A question belongs to shard ``int(sha256(id)[:8 bytes], big-endian) mod N + 1``: a pure
function of its id, so adding or removing questions never moves the others between shards
(a shard's retrieval cache stays warm), and every machine agrees without talking.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ci_eval.errors import InputError

MAX_SHARDS = 256
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, source: str = "--shard") -> Shard:
    """``"2/8"`` -> Shard(2, 8), the way jest and playwright spell it."""
    match = _SPEC.match(text or "")
    if not match:
        raise InputError(f"expected I/N such as 2/8, got {text!r}", source)
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise InputError(f"the shard count must be 1 to {MAX_SHARDS}, got {count}", source)
    if not 1 <= index <= count:
        raise InputError(f"the shard index must be 1 to {count}, got {index}", source)
    return Shard(index, count)


def shard_of(question_id: str, count: int) -> int:
    """The 1-based shard a question id belongs to among ``count``."""
    digest = hashlib.sha256(question_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select(questions, shard: Shard) -> list[tuple[int, object]]:
    """(position in the gold set, question) of the questions in ``shard``, in gold-set order;
    possibly none: an empty shard is a valid, empty part."""
    return [(i, q) for i, q in enumerate(questions) if shard_of(q.id, shard.count) == shard.index]


def config_sha256(recorded: dict) -> str:
    """The hash parts of one run must share: the resolved config as the artefact records it."""
    text = json.dumps(recorded, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def shard_record(shard: Shard, positions: list[int], ids: list[str], *, gold_sha256: str,
                 config: dict, index_version: str | None) -> dict:
    """The artefact's ``shard`` key: enough for the merge to refuse parts of different runs
    and to put the questions back in gold-set order."""
    return {
        "index": shard.index,
        "count": shard.count,
        "gold_sha256": gold_sha256,
        "config_sha256": config_sha256(config),
        "index_version": index_version,
        "ids": list(ids),
        "positions": list(positions),
    }
