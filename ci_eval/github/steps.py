"""The steps of `ci-eval action`. The GitHub port, the environment and the clock are passed
in: tests drive these functions with a loopback GitHub and real files, nothing is patched."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path

from ci_eval.core.artefact.artefact import Artefact, read_artefact
from ci_eval.core.compare.baseline import BaselineKind
from ci_eval.core.compare.recent_runs import RecentRuns, extend, gold_prints, read_recent
from ci_eval.core.textfmt import plural
from ci_eval.errors import EXIT_OK, GitHubError, InputError
from ci_eval.github.artifact_zip import (
    COMMENT_MEMBER,
    MAX_QUESTIONS_BYTES,
    PR_MEMBER,
    QUESTIONS_MEMBER,
    RUN_MEMBER,
    read_artifact_zip,
)
from ci_eval.github.env import (
    ActionInputs,
    Event,
    annotation,
    append_summary,
    find_question_lines,
    write_outputs,
)
from ci_eval.github.job import MAX_ARTIFACT_ZIP, job_git, log

# What the action's own artifact may hold besides the run artefact.
BUNDLE_MEMBERS = (COMMENT_MEMBER, PR_MEMBER, QUESTIONS_MEMBER, "summary.md", "scores.svg", "trend.svg")
# How many candidate runs to try before saying "no baseline": each costs two requests.
MAX_BASELINE_TRIES = 10
# One page of the runs listing; older base commits are asked for by SHA.
MAX_RUNS_LISTED = 100


@dataclass(frozen=True)
class Baseline:
    artefact: Artefact | None
    kind: BaselineKind
    description: str
    run_url: str | None = None
    # The stored artefact's bytes: read again when the head asks for more top results per
    # question than the base kept (judged@k at the head's k)
    raw: bytes | None = field(default=None, repr=False)
    # The branch's recent runs question by question, as the stored artifact kept them
    recent: RecentRuns | None = field(default=None, repr=False)

    def at_k(self, k: int) -> Artefact | None:
        """The base keeping at least ``k`` top results a question."""
        if self.artefact is None or self.raw is None or self.artefact.depth >= k:
            return self.artefact
        from ci_eval.inputs.artefact_file import run_from_bytes

        return run_from_bytes(self.raw, self.description, top=k)


def workflow_file(workflow_ref: str | None) -> str | None:
    """``owner/repo/.github/workflows/ci.yml@refs/heads/main`` -> ``ci.yml``: the baseline
    must come from this same workflow, not any workflow that uploads an artifact."""
    if not workflow_ref:
        return None
    path = workflow_ref.split("@", 1)[0]
    return path.rsplit("/", 1)[-1] or None


def _branch_and_commit(event: Event) -> tuple[str | None, str | None]:
    """Where the baseline lives: a PR's base branch and commit; for a push, the pushed branch
    and commit (an earlier run of the same commit, else the branch's newest run)."""
    if event.name == "push":
        ref = event.ref or ""
        return (ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else None), event.sha
    return event.base_ref, event.base_sha


def find_baseline(port, event: Event, workflow: str, artifact_name: str, now: datetime) -> Baseline:
    """The baseline artefact for ``event`` among the push runs of ``workflow`` (a job that
    does not know its workflow never gets here: core/plan.py refuses it)."""
    from ci_eval.core.compare.baseline import choose_artifact, choose_baseline
    from ci_eval.github.api import ArtifactGone
    from ci_eval.inputs.artefact_file import run_from_bytes

    branch, sha = _branch_and_commit(event)
    if not branch or not sha:
        return Baseline(None, "none", f"no baseline: the {event.name} event names no branch to look on")
    runs = list(islice(port.workflow_runs(workflow, branch, event="push", status="success"), MAX_RUNS_LISTED))
    if len(runs) == MAX_RUNS_LISTED and not any(r.head_sha == sha for r in runs):
        # The branch moved on more than a page of runs since the PR branched off: ask for the
        # base commit's run by SHA rather than settle for a fallback.
        listed = {r.id for r in runs}
        exact = port.workflow_runs(workflow, branch, event="push", status="success", head_sha=sha)
        runs += [r for r in islice(exact, MAX_BASELINE_TRIES) if r.id not in listed]
    skipped: list[int] = []
    for _ in range(MAX_BASELINE_TRIES):
        choice = choose_baseline(runs, sha, event.repository, branch, now, skipped)
        if choice.kind == "none":
            return Baseline(None, "none", choice.reason)
        run = choice.run
        source = f"run {run.id}"
        try:
            artifact = choose_artifact(port.run_artifacts(run.id), artifact_name)
            if artifact is None:
                skipped.append(run.id)
                continue
            source = f"artifact {artifact_name} (id {artifact.id}) of run {run.id}"
            if artifact.size_in_bytes > MAX_ARTIFACT_ZIP:
                raise InputError(f"the zip is {artifact.size_in_bytes} bytes, over the "
                                 f"{MAX_ARTIFACT_ZIP}-byte limit", source)
            raw = port.download_artifact(artifact.id, MAX_ARTIFACT_ZIP)
            members = read_artifact_zip(raw, source, optional=BUNDLE_MEMBERS)
            raw = members.pop(RUN_MEMBER)
            base = run_from_bytes(raw, source)
        except ArtifactGone:
            skipped.append(run.id)
            continue
        except InputError as exc:
            # A corrupt, oversized or hostile baseline is said plainly and not used; the next
            # run is tried.
            log(f"ci-eval: warning: skipping the baseline from run {run.id}: {exc}")
            skipped.append(run.id)
            continue
        return Baseline(base, choice.kind, choice.reason, run.html_url, raw,
                        _stored_recent(members.get(QUESTIONS_MEMBER), source))
    return Baseline(None, "none", f"no baseline: the last {MAX_BASELINE_TRIES} candidate runs had no usable artefact")


def _stored_recent(raw: bytes | None, source: str) -> RecentRuns | None:
    """The stored artifact's per-question window; one that cannot be read is said and left
    out (the comparison does not need it: only the notes beside regressions do)."""
    if raw is None:
        return None
    try:
        return read_recent(json.loads(raw))
    except (ValueError, RecursionError) as exc:  # RecentError and bad JSON alike
        log(f"ci-eval: warning: {QUESTIONS_MEMBER} of {source} is not used: {exc}")
        return None


def write_recent(out_dir: Path, previous: RecentRuns | None, head: Artefact, gold_before: dict | None = None) -> None:
    """This run added to its branch's window, written beside the artefact for the next run
    (a window over ``MAX_QUESTIONS_BYTES`` is not kept, and said). ``gold_before``: the
    previous run's gold, to mark the questions whose gold changed (recent_runs.gold_prints)."""
    from ci_eval.inputs.files import atomic_write

    recent = extend(previous, head, gold_before)
    text = json.dumps(recent.as_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
    if len(text.encode("utf-8", "surrogatepass")) > MAX_QUESTIONS_BYTES:
        log(f"ci-eval: warning: the per-question history of {len(recent.states):,} questions is over "
            f"{MAX_QUESTIONS_BYTES:,} bytes: not kept, so comments do not say how questions did on the branch")
        return
    atomic_write(out_dir / QUESTIONS_MEMBER, text)


def publish_comment(port, number: int, body: str, inputs: ActionInputs, changed: bool, marker: str) -> str | None:
    """Upsert the one sticky comment; returns its URL (None when nothing was posted)."""
    from ci_eval.core.sticky import plan_comment

    comments = port.list_comments(number)
    plan = plan_comment(comments, marker, inputs.author, body, inputs.comment, changed)
    url = None
    if plan.update_id is not None:
        url = port.update_comment(plan.update_id, body).html_url
    elif plan.create:
        url = port.create_comment(number, body).html_url
    elif plan.keep_id is not None:
        url = next((c.html_url for c in comments if c.id == plan.keep_id), None)
    for comment_id in plan.delete_ids:
        port.delete_comment(comment_id)
    return url


def matrix_output(matrix) -> str:
    """The ``failure-matrix`` output: head's four cells, the questions without a verdict and
    the verdicts' source type as compact JSON (``fromJSON`` in a later step); empty when the
    run has no verdicts."""
    import json

    if matrix is None or not matrix.available:
        return ""
    return json.dumps({**dict(matrix.head.counts), "unknown": matrix.head.unknown}, separators=(",", ":"))


def outputs_for(head: Artefact | dict, verdict: str, artefact_path: str, comment_url: str | None,
                matrix=None) -> dict:
    head = read_artefact(head)
    means = dict(head.summary.overall.means)
    k = head.header.k
    out = {
        "verdict": verdict,
        "artefact": artefact_path,
        "comment-url": comment_url or "",
        "questions": str(head.summary.overall.count),
        "stale-ids": str(head.summary.stale_ids),
        "failure-matrix": matrix_output(matrix),
    }
    # Output names are fixed in action.yml, so they name k rather than its value.
    names = {"hit-at-k": f"hit@{k}", "recall-at-k": f"recall@{k}", "mrr": "mrr",
             "ndcg-at-k": f"ndcg@{k}", "hit-at-3k": f"hit@{3 * k}"}
    for output, metric in names.items():
        if metric in means:
            out[output] = f"{means[metric]:.4f}"
    return out


# GitHub shows this many warning annotations a step, and drops the rest unsaid.
_WARNINGS_SHOWN = 10


def _stale_message(stale: tuple[str, ...], drifted: frozenset) -> str:
    missing = [i for i in stale if i not in drifted]
    moved = [i for i in stale if i in drifted]
    parts = ([f"stale gold id(s) not in the current index: {', '.join(missing)}"] if missing else []) + (
        [f"drifted gold id(s), in the index but naming other text than their anchor: {', '.join(moved)}"]
        if moved else [])
    return "; ".join(parts)


def stale_annotations(head: Artefact | dict, gold_path: str | None) -> list[str]:
    head = read_artefact(head)
    stale = [q for q in head.questions if q.stale]
    if not stale:
        return []
    lines = {}
    if gold_path and Path(gold_path).is_file():
        lines = find_question_lines(Path(gold_path).read_text("utf-8", "replace"), [q.id for q in stale])
    out = []
    from ci_eval.core.gold.remap import remap_targets

    remapped = remap_targets(head.header.remap)
    # Past ten: nine, and a tenth that counts the others and says where they are listed.
    shown = stale if len(stale) <= _WARNINGS_SHOWN else stale[: _WARNINGS_SHOWN - 1]
    for q in shown:
        message = _stale_message(q.stale, head.header.drifted)
        found = [f"{old} -> {', '.join(remapped[old][0])} ({remapped[old][1]})"
                 for old in q.stale if old in remapped]
        if found:
            message += f"; remap (`ci-eval gold remap --write`): {'; '.join(found)}"
        out.append(annotation("warning", message, gold_path, lines.get(q.id), f"ci-eval: {q.id}"))
    if len(stale) > len(shown):
        out.append(annotation(
            "warning", f"{plural(len(stale) - len(shown), 'more question')} with stale gold ids, "
            "listed in the job summary's Stale gold section", gold_path, None, "ci-eval: stale gold"))
    return out


def write_bundle(out_dir: Path, report, pr: dict | None) -> None:
    """The workflow artifact's contents besides the artefact (a later PR's baseline,
    already streamed to ``out_dir``): for the fork poster the comment and the PR it
    belongs to, and the full report and the charts."""
    from ci_eval.inputs.files import atomic_write

    atomic_write(out_dir / COMMENT_MEMBER, report.markdown)
    atomic_write(out_dir / "summary.md", report.full_markdown)
    atomic_write(out_dir / "scores.svg", report.svg)
    atomic_write(out_dir / "trend.svg", report.trend_svg)
    if pr is not None:
        atomic_write(out_dir / PR_MEMBER, json.dumps(pr, sort_keys=True) + "\n")


class _Background:
    """One call on a daemon thread; ``result()`` waits for it and re-raises its error. A
    daemon, so an evaluation that fails never waits for GitHub before exiting."""

    def __init__(self, fn):
        self._value = self._error = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name="ci-eval-baseline")
        self._thread.start()

    def _run(self, fn) -> None:
        try:
            self._value = fn()
        except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread by result()
            self._error = exc

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def run_mode(inputs: ActionInputs, event: Event, env, port_factory, plan) -> int:
    """Evaluate, compare with the baseline, publish. The gate's exit code comes last."""

    workflow = workflow_file(env.get("GITHUB_WORKFLOW_REF"))
    port = port_factory() if plan.find_baseline or plan.carry_history else None
    # GitHub's round trips (runs, artifacts, the zip) overlap the retriever's run.
    lookup = None
    if plan.find_baseline:
        lookup = _Background(lambda: _baseline_or_outage(port, event, workflow, inputs.artifact_name))
    elif plan.carry_history:
        lookup = _Background(lambda: _previous_history(port, event, workflow, inputs.artifact_name))
    chosen: list[Baseline] = []

    previous: list = []  # the window this run extends, with its run's gold (recent_runs.gold_prints)

    def history_after(builtin_base: Artefact | None):
        """The head's history, asked for once its last row is written: the lookup has
        had the whole run to finish."""
        def resolve():
            baseline, history, recent = _baseline_for(plan, lookup, builtin_base, event)
            chosen.append(baseline)
            previous.append(recent)
            return history
        return resolve

    written, config = _head_source(plan, port_factory)(inputs, event, env, history_after)
    from ci_eval.inputs.artefact_file import read_run

    head = read_run(written.path)  # read back as a later run reads it
    baseline = chosen[0]
    log(f"ci-eval: {baseline.description}")
    if plan.carry_history:  # a push run: what a later run of the branch reads as its window
        window, gold_before = previous[0] if previous and previous[0] else (None, None)
        write_recent(Path(inputs.out_dir), window, head, gold_before)
    demo = inputs.config == "demo"
    report = _report(baseline, head, config, inputs, event, plan)
    append_summary(env.get("GITHUB_STEP_SUMMARY"), report.job_summary(inputs.artifact_name))
    comment_url, posted = _post(plan, port or (port_factory() if plan.post_comment else None),
                                event, report, inputs)
    pr = None
    if event.pr_number:
        # What the workflow_run poster needs: which PR and commit; whether this job posted.
        pr = {"number": event.pr_number, "head_sha": event.head_sha, "base_sha": event.base_sha,
              "comment_posted": posted}
    write_bundle(Path(inputs.out_dir), report, pr)

    # The demo's gold set lives in the package, not in the repository: nothing to annotate.
    for line in stale_annotations(head, None if demo else config.gold_set):
        print(line, flush=True)
    return _finish(written, head, report, baseline, inputs, env, written.path, comment_url)


def _report(baseline: Baseline, head: Artefact, config, inputs: ActionInputs, event: Event, plan):
    from ci_eval.report import BaselineInfo, build_report, policy_from

    demo = inputs.config == "demo"
    return build_report(
        baseline.at_k(head.header.k),
        head,
        policy_from(config.gate_rules),
        BaselineInfo(kind=baseline.kind, description=baseline.description, url=baseline.run_url),
        marker_suffix=config.report.get("marker", ""),
        title=config.report.get("title", ""),
        gate_source="the demo's configuration" if demo else "",
        gate_path=None if demo else inputs.config,
        recent=baseline.recent if plan.find_baseline else None,
        base_branch=event.base_ref or "",
        accepted=acceptances(None if demo else config.accepted_path, event.labels),
    )


def acceptances(path: str | None, labels: tuple[str, ...]):
    """The committed acceptances at ``path`` (this job's checkout: the PR's own commit, or in
    the workflow_run poster the default branch's) and the PR's accept label, read from the
    pull request as GitHub reports it: never from an artefact, which a fork writes."""
    from ci_eval.core.compare.acceptance import ACCEPT_LABEL
    from ci_eval.inputs.acceptances import read_acceptances

    label = ACCEPT_LABEL if ACCEPT_LABEL in labels else None
    if label:
        log(f"ci-eval: the pull request carries the label {ACCEPT_LABEL}: its per-question losses count as accepted")
    return read_acceptances(path, label)


def _baseline_for(plan, lookup, builtin_base: Artefact | None,
                  event: Event) -> tuple[Baseline, list | None, tuple | None]:
    """The baseline the lookup found (the demo's built-in one when none is stored), the
    history the head carries forward (the base branch's; None: the head's own), and, for a
    push run, the per-question window it extends with its run's gold prints
    (core/compare/recent_runs.py)."""
    from ci_eval.core.artefact.artefact import carry_history

    baseline = Baseline(None, "none", f"{event.name}: this run records the baseline for later pull requests")
    if plan.find_baseline:
        baseline = lookup.result()
        if baseline.artefact is None and builtin_base is not None:
            baseline = Baseline(builtin_base, "builtin", f"{baseline.description}; the demo compares with its built-in baseline configuration instead")
        return baseline, carry_history(baseline.artefact), None  # the comment reads baseline.recent
    if plan.carry_history:
        history, recent = lookup.result()
        return baseline, history, recent
    return baseline, None, None


def _post(plan, port, event: Event, report, inputs: ActionInputs) -> tuple[str | None, bool]:
    """Post the sticky comment when the plan says so: (its URL, whether it was posted)."""
    if plan.post_comment:
        try:
            return publish_comment(port, event.pr_number, report.markdown, inputs, report.changed, report.marker), True
        except GitHubError as exc:
            # No write access (a fork, or missing permissions): the report is in the job
            # summary and the artefact; say how to get the comment, do not hide the gate.
            log(f"ci-eval: warning: the comment was not posted: {exc}")
    elif event.is_fork and event.pr_number:
        log("ci-eval: fork pull request: the comment is in the artifact for the workflow_run poster")
    return None, False


def _finish(written, run: Artefact, report, baseline: Baseline, inputs: ActionInputs, env,
            artefact_path: str, comment_url: str | None) -> int:
    """Outputs, the verdict in the log, then the exit code, all from one decision
    (core/plan.decide_outcome): the run's failure first, then the gate, then a GitHub
    outage during the baseline lookup."""
    from ci_eval.core.plan import decide_outcome
    from ci_eval.retrieval.pipeline import retriever_failed

    failure = run.failure
    if failure:  # a retriever that failed on every question is named as broken
        failure = retriever_failed(written) or f"{failure}; see the artefact"
    outcome = decide_outcome(report.gate.passed, failure,
                             baseline.description if baseline.kind == "outage" else None, inputs.fail_on_gate)
    write_outputs(env.get("GITHUB_OUTPUT"), outputs_for(run, outcome.verdict, artefact_path, comment_url,
                                                        report.context.diff.matrix))
    log(f"ci-eval: {report.verdict_line}")
    if outcome.error:
        log(f"ci-eval: error: {outcome.error}")
    return outcome.exit_code


def _baseline_or_outage(port, event: Event, workflow: str, artifact_name: str) -> Baseline:
    """A GitHub that fails while the baseline is looked up must not lose the run: the report
    says so, everything is written, and the job then exits 5 (GitHub failed)."""
    try:
        return find_baseline(port, event, workflow, artifact_name, now_utc())
    except GitHubError as exc:
        return Baseline(None, "outage", f"no baseline: GitHub failed while the baseline was looked up ({exc})")


def _previous_history(port, event: Event, workflow: str,
                      artifact_name: str) -> tuple[list, tuple[RecentRuns | None, dict] | None]:
    """A push run carries its branch's previous artefact's history forward, so the trend in
    later comments grows run by run, and its per-question window with that artefact's gold
    (which questions' gold this run changed). Best effort: without them the artefact is
    still a baseline, so a GitHub failure here is a warning, not a failed push job."""
    from ci_eval.core.artefact.artefact import carry_history

    try:
        previous = find_baseline(port, event, workflow, artifact_name, now_utc())
    except GitHubError as exc:
        log(f"ci-eval: warning: the branch's previous artefact was not read, so the trend starts over: {exc}")
        return [], None
    if previous.artefact is not None:
        log(f"ci-eval: carrying the history of {previous.run_url or 'the previous run'} forward")
    # A re-run of this very commit would list it twice in the trend (the window replaces it).
    return carry_history(previous.artefact, skip_sha=event.sha), (previous.recent, gold_prints(previous.artefact))


def _head_source(plan, port_factory):
    """What gives ``run_mode`` its head: a run here, or (``mode: merge``) this run's parts."""
    if plan.merge_parts:
        from ci_eval.github.shard_steps import merged_evaluation

        return merged_evaluation(port_factory)
    return _evaluate


def _evaluate(inputs: ActionInputs, event: Event, env, history_after):
    """The head run, streamed to the bundle's artefact. ``config: demo`` runs the embedded
    demo's changed configuration, with the demo's own baseline configuration as the
    fallback when no stored baseline exists."""
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    git = job_git(event, env)
    out = Path(inputs.out_dir) / RUN_MEMBER
    if inputs.config == "demo":
        from ci_eval.demo.run import builtin_base, demo_artefact, demo_config_path

        builtin = builtin_base() if event.name == "pull_request" else None
        head = demo_artefact("head", out, show_progress=True, git=git, history=history_after(builtin))
        return head, load_config(demo_config_path("head"))
    config = load_config(inputs.config)
    head = run_evaluation(load_inputs(config), out, git=git, cache_dir=inputs.cache,
                          history=history_after(None))
    return head, config


def comment_mode(inputs: ActionInputs, event: Event, env, port) -> int:
    """The workflow_run poster; a refused fork artefact means no comment, said with its
    reason (exit 2, the artefact's fault), never a GitHub failure (exit 5)."""
    # Read first: a poster with no checkout to take the gate from does nothing at all, nor
    # one that cannot know which workflow's push runs hold the baseline.
    rules = _default_branch_rules(inputs)
    if workflow_file(event.workflow_path) is None:
        raise InputError("the workflow_run event names no workflow file, so the pull request's baseline "
                         "cannot be looked up: no comment is posted", env.get("GITHUB_EVENT_PATH") or "event payload",
                         "workflow_run.path")
    try:
        return _post_run_comment(inputs, event, env, port, rules)
    except InputError:
        log(f"ci-eval: no comment posted for run {event.run_id}: its artifact was refused")
        raise


def _post_run_comment(inputs: ActionInputs, event: Event, env, port, rules: tuple) -> int:
    """The workflow_run poster: post the comment of a pull-request run that could not.

    Nothing from that run is trusted: the artifact is read as a hostile zip, the head
    artefact is schema-validated, the PR must exist with the head SHA the run built, the
    baseline is looked up here (never taken from the run) and so is the trend's history,
    the gate is this checkout's (the default branch's config, never the one the run
    recorded), and the comment is rendered here (so every string passes our escaping)."""
    from ci_eval.core.artefact.artefact import with_carried_history
    from ci_eval.core.plan import decide_outcome
    from ci_eval.inputs.artefact_file import run_from_bytes
    from ci_eval.report import BaselineInfo, build_report, policy_from

    gate, report_cfg, gate_path, how, accepted_path = rules
    found = _pr_bundle(inputs, event, port)
    if found is None:
        return EXIT_OK
    run, pr, members, source = found
    head = run_from_bytes(members.pop(RUN_MEMBER), f"{source}:{RUN_MEMBER}")
    pr_event = Event(name="pull_request", repository=event.repository, sha=pr.head_sha, ref=None,
                     pr_number=pr.number, base_sha=pr.base_sha, base_ref=pr.base_ref,
                     head_sha=pr.head_sha, head_repo=pr.head_repo, is_fork=pr.is_fork)
    baseline = find_baseline(port, pr_event, workflow_file(event.workflow_path), inputs.artifact_name, now_utc())
    if baseline.artefact is None and _is_demo(head):
        # The demo compares with its built-in baseline when none is stored: our own code.
        from ci_eval.demo.run import builtin_base

        baseline = Baseline(builtin_base(), "builtin",
                            f"{baseline.description}; the demo compares with its built-in baseline configuration instead")
    # The trend too is the baseline's, looked up here: the run's recorded history is its own.
    head = with_carried_history(head, baseline.artefact)
    report = build_report(
        baseline.at_k(head.header.k), head, policy_from(gate),
        BaselineInfo(kind=baseline.kind, description=baseline.description, url=baseline.run_url),
        marker_suffix=str(report_cfg.get("marker", "")), title=str(report_cfg.get("title", "")),
        gate_source=how, gate_path=gate_path,
        # the label as GitHub reports it on the PR; a file only from this job's own checkout
        accepted=acceptances(accepted_path, pr.labels),
    )
    # The fork's run is judged by the same definition of a failed run as any other.
    outcome = decide_outcome(report.gate.passed, head.failure, None, inputs.fail_on_gate)
    url = publish_comment(port, pr.number, report.markdown, inputs, report.changed, report.marker)
    write_outputs(env.get("GITHUB_OUTPUT"), {"comment-url": url or "", "verdict": outcome.verdict})
    log(f"ci-eval: posted the report of run {run.id} on pull request #{pr.number}" if url else "ci-eval: nothing to post")
    log(f"ci-eval: {report.verdict_line}")
    if outcome.error:
        log(f"ci-eval: error: run {run.id}: {outcome.error}")
    return outcome.exit_code


def _pr_bundle(inputs: ActionInputs, event: Event, port):
    """The pull-request run's bundle and the PR it belongs to, checked against the API:
    (run, pull request, zip members, source), or None when there is nothing to post."""
    from ci_eval.core.compare.baseline import choose_artifact
    from ci_eval.inputs.files import parse_json

    run = port.workflow_run(event.run_id)
    artifact = choose_artifact(port.run_artifacts(run.id), inputs.artifact_name)
    if artifact is None:
        log(f"ci-eval: run {run.id} left no artifact named {inputs.artifact_name!r}: nothing to post")
        return None
    source = f"artifact {inputs.artifact_name} (id {artifact.id}) of run {run.id}"
    members = read_artifact_zip(port.download_artifact(artifact.id, MAX_ARTIFACT_ZIP), source,
                                optional=BUNDLE_MEMBERS)
    if PR_MEMBER not in members:
        log(f"ci-eval: {source} belongs to no pull request: nothing to post")
        return None
    pr_info = parse_json(members[PR_MEMBER].decode("utf-8", "replace"), f"{source}:{PR_MEMBER}")
    number = pr_info.get("number") if isinstance(pr_info, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError("pr.json must hold a positive pull request number", source, PR_MEMBER)
    pr = _named_pull_request(port, number, source)
    if not pr.is_fork and pr_info.get("comment_posted") is True:
        log(f"ci-eval: pull request #{number} is not from a fork and its own run posted the comment")
        return None
    if pr.head_sha != run.head_sha:
        raise InputError(
            f"pull request #{number} is at {pr.head_sha[:7]}, but the run built {run.head_sha[:7]}: "
            "refusing to post another commit's results",
            source,
            PR_MEMBER,
        )
    return run, pr, members, source


def _default_branch_rules(inputs: ActionInputs) -> tuple[dict | None, dict, str | None, str, str | None]:
    """The gate and report settings of this job's own checkout: in a workflow_run job, the
    default branch's. Never the fork's artefact, whose recorded config the fork wrote.
    Returns (gate, report table, config path, how the comment says it, acceptance file)."""
    from ci_eval.inputs.loaders import discover_config, load_config

    if inputs.config == "demo":
        from ci_eval.demo.run import demo_config_path

        config = load_config(demo_config_path("head"))
        return config.gate_rules, config.report, None, "the demo's configuration", None
    path = Path(inputs.config) if Path(inputs.config).is_file() else discover_config(".")
    if path is None:
        # Without the default branch's config there is no gate to apply, and the fork's own
        # is never trusted: refuse rather than post a verdict nobody set.
        raise InputError("the workflow_run poster found no ci-eval.toml (or [tool.ci-eval] in "
                         "pyproject.toml) in its checkout: check out the default branch "
                         "(actions/checkout) before this step, so its [gate] applies",
                         "input config")
    config = load_config(path)
    return config.gate_rules, config.report, str(path), " of the default branch", config.accepted_path


def _named_pull_request(port, number: int, source: str):
    """The PR a fork's pr.json names. One that does not exist is the artefact's fault."""
    try:
        return port.pull_request(number)
    except GitHubError as exc:
        if getattr(exc, "status", None) != 404:
            raise
        raise InputError(f"names pull request #{number}, which does not exist", source, PR_MEMBER) from None


def _is_demo(head: Artefact) -> bool:
    retriever = head.config.get("retriever") or {}
    return isinstance(retriever, dict) and retriever.get("target") == "ci_eval.demo.retriever:search"
