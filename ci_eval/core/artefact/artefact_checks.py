"""What a schema-valid artefact must also mean before it is compared or rendered.

A base artefact, and in the ``workflow_run`` poster the head artefact too, may come from a
fork: its author controls every byte. The JSON Schema checks shapes; these checks hold the
rest to what ci-eval itself writes, so nothing a renderer shows is text the author chose
freely and no number can be one ci-eval would never compute:

- every metric name (the ``metrics`` list and the keys of every ``means``) is one ci-eval
  computes, in its canonical spelling (``hit@5``, never ``@acme/team`` or ``[x](url)``);
- every metric value is a mean or a per-question value of a metric in [0, 1];
- question ids are unique;
- the counts agree with the questions (``summary.overall.count``, each tag's count,
  ``summary.errors``, ``gold_set.questions``), unless the artefact is one shard's part.

Grades are bounded by the schema itself (the gold set's bounds); see artefact.schema.json.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress

from ci_eval.core.artefact.question_result import in_means
from ci_eval.core.artefact.question_row import FIELD
from ci_eval.core.limits import MAX_TAGS
from ci_eval.core.textfmt import integer_size
from ci_eval.core.validate import json_path
from ci_eval.errors import InputError

# Every family ci-eval computes (hit, recall, precision, ndcg, mrr, map) is a mean of
# per-question values in [0, 1].
METRIC_RANGE = (0.0, 1.0)
# How many problems one refused artefact reports: enough to fix it, never a flood.
MAX_PROBLEMS = 20


def _clip(text: object, limit: int = 40) -> str:
    """An untrusted id quoted in an error line: repr'd (so control characters show as
    escapes) and short."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def metric_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a metric name in an artefact, or None when it is one. The
    name itself is never repeated: it may be a mention or markup meant for a log or a
    comment, and the JSON path already says where it is."""
    from ci_eval.core.measure.names import resolve_metric

    if not isinstance(name, str):
        return "a metric name must be a string"
    try:
        canonical = resolve_metric(name).name
    except InputError:
        return "not a metric ci-eval computes"
    if canonical != name:
        return f"not how ci-eval writes a metric name (it writes {canonical!r})"
    return None


class _Problems:
    def __init__(self, source: str, counts: bool):
        self.source = source
        self.counts = counts  # whether the counts must agree with the questions
        self.found: list[InputError] = []
        # Every row names the same few metrics: each name is resolved once, not once a row.
        self.name_problems: dict[str, str | None] = {}

    def name_problem(self, name: str) -> str | None:
        if name not in self.name_problems:
            self.name_problems[name] = metric_name_problem(name)
        return self.name_problems[name]

    def add(self, message: str, *path) -> None:
        self.found.append(InputError(message, self.source, json_path(path)))


def _check_means(means: object, problems: _Problems, *path) -> None:
    if not isinstance(means, dict):
        return
    lo, hi = METRIC_RANGE
    for position, (name, value) in enumerate(means.items()):
        why = problems.name_problem(name)
        if why:
            # The name is the problem: the path names its position, not the name.
            problems.add(f"metric key {position + 1}: {why}", *path)
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not lo <= value <= hi:
            problems.add(f"{value!r} is out of range: {name} lies in [{lo:g}, {hi:g}]", *path, name)


def _check_metric_list(data: dict, problems: _Problems) -> None:
    metrics = data.get("metrics")
    if not isinstance(metrics, list):
        return
    seen: set = set()
    for i, name in enumerate(metrics):
        why = metric_name_problem(name)
        if why:
            problems.add(why, "metrics", i)
        elif name in seen:
            problems.add(f"{name!r} is listed twice", "metrics", i)
        seen.add(name)


def _report_repeat(qid, i: int, counts: Counter, reported: set, problems: _Problems) -> None:
    """A question id given more than once, reported at its first place only."""
    if counts[qid] > 1 and qid not in reported:
        reported.add(qid)
        problems.add(f"question id {_clip(qid)} appears {counts[qid]} times", "questions", i, "id")


def _check_ids(ids: list, problems: _Problems) -> None:
    counts = Counter(ids)
    if len(counts) == len(ids):
        return
    reported: set = set()
    for i, qid in enumerate(ids):
        _report_repeat(qid, i, counts, reported, problems)


def _check_questions(questions: list, problems: _Problems) -> None:
    counts = Counter(q.get("id") for q in questions if isinstance(q, dict))
    reported: set = set()
    for i, q in enumerate(questions):
        if not isinstance(q, dict):
            continue
        _report_repeat(q.get("id"), i, counts, reported, problems)
        ranking = q.get("ranking") or []
        _check_sizes(q.get("top_score"), q.get("latency_ms"), (entry.get("score") for entry in ranking if isinstance(entry, dict)),
                     problems, "questions", i)
        _check_means(q.get("metrics"), problems, "questions", i, "metrics")


def _check_pairs(pairs: list, problems: _Problems, *path) -> None:
    """A version 2 gold or ranking list names each chunk once: the pairs stand for an object
    (version 1's gold) or a de-duplicated ranking, where a repeated id is refused."""
    if len(pairs) < 2:
        return
    seen: set = set()
    for j, pair in enumerate(pairs):
        if pair[0] in seen:
            problems.add(f"the chunk id {_clip(pair[0])} appears twice", *path, j)
            return
        seen.add(pair[0])


def _too_large(value: object) -> bool:
    """An integer beyond a double's range: JSON allows it, but a score is held as a double."""
    return type(value) is int and not -_DOUBLE_MAX <= value <= _DOUBLE_MAX


_DOUBLE_MAX = int(float.fromhex("0x1.fffffffffffffp+1023"))  # the largest double


def _too_large_text(value: int, what: str) -> str:
    return f"{integer_size(value)} is too large for a {what} (at most about 1.8e308)"


def _check_sizes(top: object, latency: object, scores, problems: _Problems, *path) -> None:
    """The numbers a reader holds as doubles fit one (``scores``: the ranking's, in order)."""
    for key, value in (("top_score", top), ("latency_ms", latency)):
        if _too_large(value):
            problems.add(_too_large_text(value, "number"), *path, key)
    for j, score in enumerate(scores):
        if _too_large(score):
            problems.add(_too_large_text(score, "score"), *path, "ranking", j)
            return


def check_row(row: list, i: int, metrics: list, problems: _Problems) -> None:
    """What one schema-valid version 2 row must also mean."""
    ranking = row[FIELD["ranking"]]
    _check_sizes(row[FIELD["top_score"]], row[FIELD["latency_ms"]], (pair[1] for pair in ranking),
                 problems, "questions", i)
    values = row[FIELD["metrics"]]
    if values and len(values) != len(metrics):
        problems.add(f"holds {len(values)} metric values but the artefact names {len(metrics)} metrics",
                     "questions", i, "metrics")
    else:
        lo, hi = METRIC_RANGE
        for name, value in zip(metrics, values):
            if value is not None and not lo <= value <= hi:
                problems.add(f"{value!r} is out of range: {name} lies in [{lo:g}, {hi:g}]",
                             "questions", i, "metrics", name)
    _check_pairs(row[FIELD["gold"]], problems, "questions", i, "gold")
    _check_pairs(row[FIELD["ranking"]], problems, "questions", i, "ranking")


def row_means(values: list, gold_ids, ranking_ids, metrics: int) -> bool:
    """Whether ``check_row`` finds nothing in a schema-valid row (given its metric values and
    the chunk ids of its gold and ranking pairs): the read's fast path asks this, and leaves a
    row it says no to for ``check_row`` to word."""
    if values:
        if len(values) != metrics:
            return False
        present = [v for v in values if v is not None] if None in values else values
        if present and not (METRIC_RANGE[0] <= min(present) and max(present) <= METRIC_RANGE[1]):
            return False
    return len(set(gold_ids)) == len(gold_ids) and len(set(ranking_ids)) == len(ranking_ids)


def row_view(row: list, level: float = 1) -> dict:
    """What the whole-artefact checks read of a version 2 row (``level``: the artefact's
    relevance level): its id, status, tags, whether it is unanswerable, and how many of its
    gold chunks a stage record may count (``_relevant``)."""
    stale = row[FIELD["stale"]]
    return {"id": row[FIELD["id"]], "status": row[FIELD["status"]], "tags": row[FIELD["tags"]],
            "unanswerable": row[FIELD["unanswerable"]],
            "relevant": sum(1 for cid, grade in row[FIELD["gold"]] if grade >= level and cid not in stale)}


def _relevant(view: dict, level: float) -> int:
    """How many relevant gold chunks a question's stage record counts: those at or above the
    relevance level still in the index (what the run's stage collector was given), none for
    a question the retriever failed on or an unanswerable one (no record is made for them)."""
    if view.get("status") == "error" or view.get("unanswerable") is True:
        return 0
    if "relevant" in view:  # a version 2 row_view
        return view["relevant"]
    gold, stale = view.get("gold"), view.get("stale") or ()
    if isinstance(gold, dict):
        return sum(1 for cid, grade in gold.items() if isinstance(grade, (int, float)) and grade >= level
                   and cid not in stale)
    return 0


def _check_count(problems: _Problems, stated: object, actual: int, what: str, *path) -> None:
    if problems.counts and isinstance(stated, int) and not isinstance(stated, bool) and stated != actual:
        problems.add(f"says {stated} but the artefact holds {actual} {what}", *path)


class _Counts:
    """What the summary's counts are held to: how many questions, how many answered or
    failed (the summary's means and counts are over those, errors scoring 0), how many of
    those carry each tag, how many failed."""

    def __init__(self, questions: int, measured: int, tagged: Counter, errors: int, relevant=None, tags: int = 0):
        self.questions, self.measured, self.tagged, self.errors = questions, measured, tagged, errors
        # () -> {question id: relevant gold a stage record may count}, asked only when the
        # artefact has stage or call records; None when the reader did not read the gold
        # and staleness that says it (the records are then not held to the questions)
        self.relevant = relevant
        self.tags = tags  # distinct tags over every question, measured or not

    @classmethod
    def of_views(cls, questions: list, level: float = 1) -> _Counts:
        """From each question's {"id", "status", "tags", "unanswerable"} (``row_view``, or a
        version 1 object)."""
        measured = [q for q in questions
                    if isinstance(q, dict) and in_means(q.get("status"), q.get("unanswerable") is True)]
        tagged = Counter(t for q in measured for t in (q.get("tags") or ()) if isinstance(t, str))
        errors = sum(1 for q in questions if isinstance(q, dict) and q.get("status") == "error")
        every = {t for q in questions if isinstance(q, dict) for t in (q.get("tags") or ()) if isinstance(t, str)}
        return cls(len(questions), len(measured), tagged, errors,
                   lambda: {q.get("id"): _relevant(q, level) for q in questions if isinstance(q, dict)}, len(every))

    @classmethod
    def of_columns(cls, columns) -> _Counts:
        """From a QuestionColumns: its status codes and tag lists counted, not a question at
        a time."""
        codes = Counter(columns.status)
        names = columns.status_names
        measured_codes = {code for code, name in enumerate(names) if in_means(name, False)}
        # in_means by code: a measured status of an answerable question
        counted = [code in measured_codes and not u for code, u in zip(columns.status, columns.unanswerable)]
        lists = Counter(compress(columns.tags, counted))
        tagged: Counter = Counter()
        for where, n in lists.items():
            for tag in columns.tag_lists[where]:
                tagged[tag] += n
        errors = codes[names.index("error")] if "error" in names else 0
        return cls(len(columns), sum(counted), tagged, errors, lambda: _relevant_of_columns(columns),
                   len(set().union(*columns.tag_lists)))


def _relevant_of_columns(columns) -> dict:
    """``_relevant`` of every question read into columns: its gold pairs the reader ranked
    (at or above the level, not stale), none for a failure or an unanswerable question."""
    error = columns.status_names.index("error") if "error" in columns.status_names else -1
    return {qid: 0 if status == error or unanswerable else n
            for qid, status, unanswerable, n in zip(columns.ids, columns.status, columns.unanswerable,
                                                    columns.relevant_counts())}


def _check_summary(data: dict, counts: _Counts, problems: _Problems) -> None:
    summary = data.get("summary")
    if not isinstance(summary, dict):
        return
    overall = summary.get("overall")
    if isinstance(overall, dict):
        _check_count(problems, overall.get("count"), counts.measured, "answered or failed questions",
                     "summary", "overall", "count")
        _check_means(overall.get("means"), problems, "summary", "overall", "means")
    by_tag = summary.get("by_tag")
    if isinstance(by_tag, dict):
        for position, (tag, group) in enumerate(by_tag.items()):
            if not isinstance(group, dict):
                continue
            # A tag is untrusted text: the path names its position, never the tag itself.
            place = ("summary", "by_tag", f"[tag {position + 1}]")
            _check_count(problems, group.get("count"), counts.tagged.get(tag, 0),
                         "answered or failed questions with this tag", *place, "count")
            _check_means(group.get("means"), problems, *place, "means")
    _check_count(problems, summary.get("errors"), counts.errors, "questions with an error", "summary", "errors")


def new_problems(data: dict, source: str) -> _Problems:
    # A part of a sharded run holds some of the gold set's questions, and `ci-eval merge`
    # checks the parts against each other and recomputes the summary: its counts are not held
    # to its questions here (its names and values are).
    return _Problems(source, counts="shard" not in data)


def header_problems(data: dict, problems: _Problems) -> None:
    """The checks made before the question rows: the metric names."""
    _check_metric_list(data, problems)


def _check_records(data: dict, counts: _Counts, problems: _Problems) -> None:
    """The stage and call records (the ``stages`` and ``calls`` keys) against the artefact's
    own questions: a record is for a question of this run that had relevant gold to find and
    was answered, and a stage record counts exactly that question's relevant gold. Records
    for questions the run does not hold would change the comment's stage table (each
    stage's recall, "N of M") by questions that were never asked."""
    blocks = [(key, data.get(key)) for key in ("stages", "calls")]
    blocks = [(key, block.get("questions")) for key, block in blocks if isinstance(block, dict)]
    blocks = [(key, records) for key, records in blocks if isinstance(records, dict) and records]
    if not blocks or counts.relevant is None:
        return
    relevant = counts.relevant()
    for key, records in blocks:
        for qid, record in records.items():
            held = relevant.get(qid)
            if held is None:
                problems.add("a record for a question this run does not hold", key, "questions", qid)
            elif held == 0:
                problems.add("a record for a question with no relevant gold to find, or one the retriever "
                             "failed on or was not asked", key, "questions", qid)
            elif not isinstance(record, dict):
                continue
            elif key == "stages" and record.get("gold") != held:
                problems.add(f"counts {record.get('gold')!r} relevant gold chunks; the question has {held}",
                             key, "questions", qid)
            elif key == "calls" and any(isinstance(r, list) and len(r) > held for r in record.get("ranks") or ()):
                problems.add(f"a call ranks more gold chunks than the question's {held} relevant ones",
                             key, "questions", qid)
            if len(problems.found) >= MAX_PROBLEMS:
                return


def _check_stages(data: dict, problems: _Problems) -> None:
    """Each stage record gives one entry a stage of the chain, ranks in order within the
    stage's depth; stage names are distinct (the comment names them)."""
    stages = data.get("stages")
    if not isinstance(stages, dict):
        return
    chain = stages.get("chain") or []
    names = [s.get("name") for s in chain]
    if len(set(names)) != len(names):
        problems.add("stage names repeat", "stages", "chain")
    for qid, record in (stages.get("questions") or {}).items():
        ranks, added = record.get("ranks") or [], record.get("added")
        if len(ranks) != len(chain) or (added is not None and len(added) != len(chain)):
            problems.add(f"{len(chain)} stages in the chain, not {len(ranks)}", "stages", "questions", qid)
            continue
        for spec, found in zip(chain, ranks):
            depth = spec.get("depth")
            if found is not None and (found != sorted(set(found)) or (depth and found and found[-1] > depth)
                                      or len(found) > record.get("gold", 0)):
                problems.add(f"ranks of stage {_clip(spec.get('name'))} are not ranks ci-eval writes",
                             "stages", "questions", qid)
                break


def whole_problems(data: dict, views: list[dict], problems: _Problems) -> None:
    """The checks across questions (given as ``row_view``s or version 1 objects): counts
    agreeing with the questions, the history's means."""
    from ci_eval.core.artefact.artefact import relevance_level

    _whole_checks(data, _Counts.of_views(views, relevance_level(data)), problems)


def column_problems(data: dict, columns, problems: _Problems) -> None:
    """``whole_problems`` of the questions read into ``columns`` (core/artefact/question_columns.py)."""
    _whole_checks(data, _Counts.of_columns(columns), problems)


def shape_problems(data: dict, questions: int, tags: int, problems: _Problems) -> None:
    """``column_problems`` for a reader of a few fields of each row (`ci-eval history`,
    inputs/history_file.py), given how many questions and distinct tags the rows hold: the
    tags held to their limit, every means' names and range (the summary's, the history's)
    and the stage chain are checked; the counts the artefact states (the summary's,
    ``gold_set.questions``) are not held to the rows, as a shard part's are not, nor the stage
    and call records to the questions' gold: that reader reads neither the statuses nor the
    staleness they are counted by."""
    problems.counts = False  # these problems are this one artefact's: no other check reads them
    _whole_checks(data, _Counts(questions, 0, Counter(), 0, relevant=None, tags=tags), problems)


def _whole_checks(data: dict, counts: _Counts, problems: _Problems) -> None:
    # Before anything reads a tag: the comparison's per-tag work is bounded by the count,
    # and a gold set with more is refused at `check` (core/limits.py), so no run writes one.
    if counts.tags > MAX_TAGS:
        problems.add(f"names {counts.tags:,} distinct tags, over the limit of {MAX_TAGS:,}", "questions")
    _check_summary(data, counts, problems)
    _check_stages(data, problems)
    _check_records(data, counts, problems)
    gold_set = data.get("gold_set")
    if isinstance(gold_set, dict):
        _check_count(problems, gold_set.get("questions"), counts.questions, "questions",
                     "gold_set", "questions")
    for i, entry in enumerate(data.get("history") or []):
        if isinstance(entry, dict):
            _check_means(entry.get("means"), problems, "history", i, "means")


def artefact_problems(data: dict, source: str) -> list[InputError]:
    """Every meaning problem of a schema-valid artefact (at most ``MAX_PROBLEMS``)."""
    problems = new_problems(data, source)
    questions = data.get("questions") if isinstance(data.get("questions"), list) else []
    header_problems(data, problems)
    if data.get("schema_version") == 2:
        metrics = data.get("metrics") or []
        for i, row in enumerate(questions):
            check_row(row, i, metrics, problems)
        from ci_eval.core.artefact.artefact import relevance_level

        level = relevance_level(data)
        views = [row_view(row, level) for row in questions]
        _check_ids([v["id"] for v in views], problems)
    else:
        views = questions
        _check_questions(questions, problems)
    whole_problems(data, views, problems)
    return problems.found[:MAX_PROBLEMS]
