"""One labelling session: the pools fixed when it starts (so a chunk judged a minute ago
stays on the page with its grade), the chunk texts, the candidate questions, and every
decision applied through the store."""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Callable, Mapping, Sequence

from ci_eval.core.gold.agreement import agreement, record_suggestion, suggestion_pairs
from ci_eval.core.gold.candidates import apply_bin, apply_keep, apply_undecide, review
from ci_eval.core.gold.judgement import (
    Conflict,
    Stamp,
    apply_edit,
    apply_grade,
    apply_span,
    apply_unanswerable,
    judged_ids,
)
from ci_eval.core.gold.labelpage import delta, page_state, parse_request, questions_by_id
from ci_eval.core.gold.pooling import pool, pool_question
from ci_eval.errors import InputError
from ci_eval.label.store import GoldStore
from ci_eval.label.suggest import Item, Suggester


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def all_questions(doc: dict) -> list[dict]:
    return list(doc.get("questions", [])) + list(doc.get("provenance", {}).get("pending", []))


def _looked_at(doc: dict, q: dict) -> set[str]:
    """Judged chunks and chunks someone could not tell about: neither is offered again."""
    records = doc.get("provenance", {}).get("judgements", {}).get(q["id"], {}).get("chunks", {})
    return judged_ids(q) | set(records)


def initial_pools(doc: dict, runs: Sequence[Mapping[str, Sequence[str]]], depth: int) -> dict[str, tuple[str, ...]]:
    """Questions with something left to judge, in file order (pending ones last), each with
    its pool. Unanswerable questions need nothing; a pending question stays even with an
    empty pool, so it can be marked unanswerable or edited."""
    pending = {q["id"] for q in doc.get("provenance", {}).get("pending", [])}
    wanted = [q for q in all_questions(doc) if not q.get("unanswerable")]
    pools = pool(runs, [q["id"] for q in wanted], depth, {q["id"]: _looked_at(doc, q) for q in wanted})
    return {qid: p for qid, p in pools.items() if p or qid in pending}


class Session:
    def __init__(self, store: GoldStore, pools: dict[str, tuple[str, ...]], texts: dict[str, str], *,
                 judge: str, candidates: Sequence[str] = (), origins: dict[str, dict] | None = None,
                 depth: int = 5,
                 retrieve: Callable[[str, str], list[str]] | None = None,
                 fetch_texts: Callable[[list[str]], dict[str, str]] | None = None,
                 clock: Callable[[], str] = now_utc, suggester: Suggester | None = None):
        self.store, self.pools, self.texts = store, dict(pools), dict(texts)
        self.judge, self.candidates, self.depth = judge, list(candidates), depth
        self.origins = dict(origins or {})  # candidate id -> where it came from
        self.retrieve, self.fetch_texts, self.clock = retrieve, fetch_texts, clock
        self.suggester = suggester
        # Where each chunk's text sits in its document (for spans), or why that is unknown.
        self.places: dict[str, dict | str] = {}
        self._take_places(texts)
        self._lock = threading.Lock()

    def _take_places(self, texts) -> None:
        for cid, place in getattr(texts, "places", {}).items():
            self.places[cid] = place if isinstance(place, str) else place.as_dict()

    def start_suggestions(self) -> None:
        """Hand every pooled chunk with text to the judge, question by question in walking
        order (the page's first question is answered first)."""
        if self.suggester is None:
            return
        by_id = questions_by_id(self.store.read())
        with self._lock:
            pools = dict(self.pools)
        for qid, pooled in pools.items():
            if qid in by_id:
                self._suggest(qid, by_id[qid][0].get("question", ""), pooled)

    def _suggest(self, qid: str, question: str, pooled) -> None:
        if self.suggester is not None:
            self.suggester.ask([Item(qid, question, c, self.texts[c]) for c in pooled if self.texts.get(c)])

    def _suggest_block(self, doc: dict, status: dict | None = None, *, graded: bool = False) -> dict | None:
        """The judge's status and its agreement with the person, for the page: counted from
        the file's records, or, right after a grade, as that grade recorded it (the same
        count, made a moment ago under the file's lock)."""
        if self.suggester is None:
            return None
        status = self.suggester.status() if status is None else status
        recorded = (doc.get("provenance") or {}).get("suggestions")
        if graded and isinstance(recorded, dict) and recorded.get("judge") == self.suggester.identity \
                and isinstance(recorded.get("agreement"), dict):
            measured = recorded["agreement"]
        else:
            measured = agreement(suggestion_pairs(doc)).as_dict()
        return {**status, "agreement": measured}

    def suggestions(self, since: int) -> dict:
        """What the judge answered after ``since`` (the page polls while it is asking)."""
        if self.suggester is None:
            return {"state": "off", "suggestions": [], "version": 0}
        return self.suggester.since(since)

    def state(self, doc: dict | None = None) -> dict:
        doc = self.store.read() if doc is None else doc
        with self._lock:
            pools = dict(self.pools)
        known, status = self.suggester.snapshot() if self.suggester is not None else (None, None)
        return page_state(doc, pools, self.texts, review(self.candidates, doc), self.judge,
                          suggested=known, suggest=self._suggest_block(doc, status), places=self.places or None)

    def handle(self, kind: str, body) -> dict:
        """Apply one decision from the page; the answer is what it changed (``delta``), never
        the whole set: the page fetched that once. A conflict carries the same delta, so the
        page shows what the other decision left."""
        req = parse_request(kind, body)
        stamp = Stamp(self.judge, self.clock())
        if "question" in req and req["question"] not in self.pools:
            raise InputError(f"question {req['question']!r} is not in this session", "request", "question")
        if kind in ("grade", "span") and req["chunk"] not in self.pools[req["question"]]:
            raise InputError(f"chunk {req['chunk']!r} is not in the pool of {req['question']!r}", "request", "chunk")
        if "candidate" in req:
            return self._decide_candidate(kind, req["candidate"], stamp)
        qid = req["question"]
        try:
            if kind == "grade":
                doc = self.store.update(lambda d: self._graded(
                    apply_grade(d, qid, req["chunk"], req["grade"], stamp, seen=req["seen"], note=req["note"]),
                    qid, req["chunk"]))
            elif kind == "span":
                place = self._document_span(req)
                doc = self.store.update(lambda d: apply_span(d, qid, place, req["grade"], stamp, chunk=req["chunk"]))
            elif kind == "unanswerable":
                doc = self.store.update(lambda d: apply_unanswerable(d, qid, req["value"], stamp))
            else:
                doc = self.store.update(lambda d: apply_edit(d, qid, req["text"], stamp, seen=req["seen"]))
        except Conflict as exc:
            exc.delta = self._delta(self.store.read(), [qid])
            raise
        return self._delta(doc, [qid], graded=kind == "grade")

    def _document_span(self, req: dict) -> tuple[str, int, int]:
        """The page's selection (offsets in the chunk's shown text) as a document span."""
        chunk = req["chunk"]
        place = self.places.get(chunk)
        if not isinstance(place, dict):
            reason = place or "the chunk source does not say where this chunk sits in its document"
            raise InputError(f"no span can be recorded in {chunk!r}: {reason}", "request", "chunk")
        lo, hi = place["at"], place["at"] + place["length"]
        if not lo <= req["start"] < req["end"] <= hi:
            raise InputError(f"the selection {req['start']}..{req['end']} is not inside the chunk's document "
                             f"text ({lo}..{hi})", "request", "start")
        return place["doc"], place["start"] + req["start"] - lo, place["start"] + req["end"] - lo

    def _graded(self, doc: dict, qid: str, chunk: str) -> dict:
        """With a judge: its suggestion for the chunk kept beside the person's grade, and the
        agreement so far in the provenance (the grade itself is the person's key)."""
        if self.suggester is None:
            return doc
        return record_suggestion(doc, qid, chunk, self.suggester.get(qid, chunk), self.suggester.identity)

    def _delta(self, doc: dict, changed: list[str], *, graded: bool = False, **kw) -> dict:
        with self._lock:
            pools = dict(self.pools)
        if self.suggester is not None:
            ask = self.suggester.get  # the changed questions' suggestions only: the answer stays small
            kw["suggested"] = {(q, c): g for q in changed for c in pools.get(q, ()) if (g := ask(q, c)) is not None}
        # Only a grade changes the agreement; other answers carry the judge's status alone.
        suggest = self._suggest_block(doc, graded=True) if graded else (
            self.suggester.status() if self.suggester is not None else None)
        return delta(doc, pools, changed, suggest=suggest, places=self.places or None, **kw)

    def _decide_candidate(self, kind: str, cid: str, stamp: Stamp) -> dict:
        found = [c for c in review(self.candidates, self.store.read()) if c.id == cid]
        if not found:
            raise InputError(f"no candidate {cid!r} in this session", "request", "candidate")
        text = found[0].question
        if kind == "bin":
            doc = self.store.update(lambda d: apply_bin(d, text, stamp))
            return self._delta(doc, [], candidates=self._candidate(doc, cid))
        if kind == "undecide":
            doc = self.store.update(lambda d: apply_undecide(d, cid))
            with self._lock:
                kept = self.pools.pop(cid, None) is not None
            return self._delta(doc, [cid] if kept else [], candidates=self._candidate(doc, cid))
        doc = self.store.update(lambda d: apply_keep(d, text, stamp, self.origins.get(cid)))
        self._pool_new_question(cid, text)
        return self._delta(doc, [cid], texts=self.texts, candidates=self._candidate(doc, cid))

    def _candidate(self, doc: dict, cid: str) -> list:
        return [c for c in review(self.candidates, doc) if c.id == cid]

    def _pool_new_question(self, qid: str, text: str) -> None:
        """A kept question has no rankings yet: ask the retriever, then fetch the new texts."""
        ranking = self.retrieve(qid, text) if self.retrieve else []
        pooled = pool_question([ranking], self.depth)
        missing = [c for c in pooled if c not in self.texts]
        fetched = self.fetch_texts(missing) if self.fetch_texts and missing else {}
        with self._lock:
            self.texts.update(fetched)
            self._take_places(fetched)
            self.pools.setdefault(qid, pooled)
        self._suggest(qid, text, pooled)
