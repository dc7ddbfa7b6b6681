"""A retrieval cache: a question already answered under the same retriever config and the
same index version is not asked again.

What a PR that changes only the gold set, the gate or the docs needs: the paid retriever is
called for new or reworded questions only. The key is sha256 over (question text, the
retriever's resolved config as the artefact records it, index version); anything else that
changes retrieval (the retriever's own code) must show in one of those, usually the index
version. One small JSON file per key, ``<dir>/<key[:2]>/<key>.json``, written atomically,
so a folder the CI caches between runs can be restored, grown and saved by parallel shards.

A failed answer is never stored. An entry that cannot be read, or that was written for
another question, counts as a miss and is written again: the cache is disposable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ci_eval.core.results import Retrieved
from ci_eval.errors import InputError
from ci_eval.retrieval.query import Query

ENTRY_VERSION = 1
_MAX_ENTRY_BYTES = 16 * 1024 * 1024


class RetrievalCache:
    def __init__(self, folder: str, retriever: dict, index_version: str | None, source: str = "cache"):
        if not index_version:
            # Without a version a re-indexed store would be answered from the old index.
            raise InputError("the retrieval cache needs an index version (a manifest with a "
                             "\"version\", or [index] version)", source)
        self.folder = Path(folder)
        self.index_version = index_version
        self._config = json.dumps(retriever, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        self.hits = 0
        self.misses = 0

    def key(self, question: str) -> str:
        material = json.dumps([question, self._config, self.index_version], ensure_ascii=False)
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, query: Query) -> Retrieved | None:
        from ci_eval.inputs.files import read_json

        path = self._path(self.key(query.question))
        if not path.is_file():
            return None
        try:
            entry, _ = read_json(path, "retrieval cache entry", _MAX_ENTRY_BYTES)
        except InputError:
            return None
        if not (isinstance(entry, dict) and entry.get("version") == ENTRY_VERSION
                and entry.get("question") == query.question
                and entry.get("index_version") == self.index_version
                and isinstance(entry.get("ids"), list) and isinstance(entry.get("scores"), list)
                and len(entry["ids"]) == len(entry["scores"])):
            return None
        # No retriever call was made, so no latency is recorded for it.
        return Retrieved(ids=tuple(entry["ids"]), scores=tuple(entry["scores"]),
                         warnings=tuple(entry.get("warnings") or ()))

    def put(self, query: Query, result: Retrieved) -> None:
        from ci_eval.inputs.files import atomic_write

        if result.failed:
            return
        entry = {"version": ENTRY_VERSION, "question": query.question, "index_version": self.index_version,
                 "ids": list(result.ids), "scores": list(result.scores), "warnings": list(result.warnings)}
        atomic_write(self._path(self.key(query.question)), json.dumps(entry, ensure_ascii=False) + "\n")

    def around(self, queries: Sequence[Query], run: Callable[[Sequence[Query]], Iterator]) -> Iterator:
        """The runner's stream for ``queries`` with cached answers put in place: ``run`` is
        called on the misses only (not at all when everything is cached); question order is kept."""
        cached = {q.id: self.get(q) for q in queries}
        misses = [q for q in queries if cached[q.id] is None]
        fresh = iter(run(misses)) if misses else iter(())
        for q in queries:
            hit = cached[q.id]
            if hit is not None:
                self.hits += 1
                yield q.id, hit
                continue
            qid, result = next(fresh)
            self.misses += 1
            self.put(q, result)
            yield qid, result

    def record(self) -> dict:
        """The artefact's ``cache`` key: how many questions came from the cache."""
        return {"hits": self.hits, "misses": self.misses}
