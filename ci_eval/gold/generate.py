"""``ci-eval gold generate``: sample chunks, ask the generator (cached), screen, write."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from ci_eval.core.gold.generation import (
    PROPOSED_GRADE,
    Generated,
    Malformed,
    Source,
    parse_questions,
    prompt,
    sample_sources,
    screen,
)
from ci_eval.core.gold.origin import generated_origin, prompt_version
from ci_eval.errors import InputError
from ci_eval.gold.generators import Budget, BudgetSpent, Cache, ChatEndpoint, CommandGenerator
from ci_eval.inputs.files import atomic_write


@dataclass(frozen=True)
class Outcome:
    asked: int  # chunks sent to the generator this run
    cached: int  # chunks whose questions came from the cache
    requests: int
    stopped: bool  # the request budget ran out
    generated: list[Generated]

    def dropped(self) -> Counter:
        return Counter(g.dropped for g in self.generated if g.dropped)


def sources_of(index) -> list[Source]:
    """Chunks with text; a chunk without a document counts as its own document."""
    return [Source(c.id, c.doc or c.id, c.text) for c in index.chunks.values() if c.text and c.text.strip()]


def _from_endpoint(gen: ChatEndpoint, chosen, template, per_chunk, cache, budget, tick):
    answers: dict[str, list[str]] = {}
    asked = cached = 0
    stopped = False
    for source in chosen:
        text = prompt(template, source, per_chunk)
        key = Cache.key(gen.identity, text)
        hit = cache.get(key)
        if hit is None:
            try:
                content = gen.ask(text, budget)
            except BudgetSpent:
                stopped = True
                break
            try:
                hit = parse_questions(content)[:per_chunk]
            except Malformed as exc:
                raise InputError(f"the model's answer for chunk {source.id!r} is malformed: {exc} "
                                 "(answers so far are cached)", gen.url) from None
            cache.put(key, hit)
            asked += 1
        else:
            cached += 1
        answers[source.id] = hit
        tick()
    return answers, asked, cached, stopped


def _from_command(gen: CommandGenerator, chosen, per_chunk, cache, tick):
    keys = {s.id: Cache.key(gen.identity, json.dumps([s.id, s.text, per_chunk])) for s in chosen}
    answers = {s.id: cache.get(keys[s.id]) for s in chosen if cache.get(keys[s.id]) is not None}
    todo = [s for s in chosen if s.id not in answers]
    if todo:
        written = gen.run(todo, per_chunk)
        for s in todo:
            answers[s.id] = written.get(s.id, [])[:per_chunk]
            cache.put(keys[s.id], answers[s.id])
    for _ in chosen:
        tick()
    return answers, len(todo), len(chosen) - len(todo)


def generate(index, generator, template: str, out: str, *, cache_path: str | None, count: int,
             per_chunk: int, seed: int, known, threshold: float, max_requests: int,
             tick=lambda: None) -> Outcome:
    sources = sources_of(index)
    if not sources:
        raise InputError('no chunk has text to write questions from: give entries a "text"', index.source)
    chosen = sample_sources(sources, count, seed)
    cache = Cache(cache_path)
    budget = Budget(max_requests)
    stopped = False
    if isinstance(generator, ChatEndpoint):
        answers, asked, cached, stopped = _from_endpoint(generator, chosen, template, per_chunk, cache, budget, tick)
    else:
        answers, asked, cached = _from_command(generator, chosen, per_chunk, cache, tick)
    by_id = {s.id: s for s in chosen}
    items = [(q, by_id[cid]) for cid in (s.id for s in chosen) if cid in answers for q in answers[cid]]
    screened = screen(items, known, threshold)
    # a command writes its own prompt: only an endpoint's is ours to name
    model, prompt = ((generator.model, prompt_version(template)) if isinstance(generator, ChatEndpoint)
                     else (generator.identity, None))
    rows = [{"question": g.question, "source": g.source, "proposed": {g.source: PROPOSED_GRADE},
             "generated_by": generator.identity,
             "origin": generated_origin(model, prompt, g.source)} for g in screened if g.dropped is None]
    atomic_write(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return Outcome(asked, cached, budget.used, stopped, screened)
