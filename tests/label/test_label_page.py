"""`ci-eval label` in a real browser: headless Debian chromium driven by Playwright, the
server a real `ci-eval label` process.

Set CI_EVAL_SCREENSHOT=1 to write the screenshot in docs/labelling.png; otherwise it goes to
a temporary folder, so a normal run changes no tracked file."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from labelling import TEXTS, LabelProcess, write_project
from suite_paths import DOCS

CHROMIUM = "/usr/bin/chromium"
# As root in a container: no sandbox, no GPU, nothing fetched in the background.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed ({CHROMIUM}); apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1100, "height": 760})
        yield context
        context.close()


@pytest.fixture
def page(browser):
    page = browser.new_page()
    yield page
    page.close()


@pytest.fixture
def running():
    started = []

    def start(cwd, *args, **kw):
        started.append(LabelProcess(cwd, *args, **kw))
        return started[-1]

    yield start
    for process in started:
        if process.proc.poll() is None:
            process.kill()


def settle(page):
    # A selector, not wait_for_function: the page's CSP (rightly) forbids evaluating strings.
    page.locator("body[data-busy='0']").wait_for(state="attached")


def press(page, *keys):
    for key in keys:
        page.keyboard.press(key)
        settle(page)


def open_page(page, label):
    page.goto(label.url)
    settle(page)


def shown_chunks(page):
    return page.locator("#chunks li .chunk-id").all_text_contents()


def stamped(doc, since, until):
    """Check every ``at`` is an ISO time within the test, then replace it, so the rest of
    the file can be compared exactly."""
    def walk(value):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k == "at":
                    at = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
                    assert since <= at <= until, (since, at, until)
                    v = "AT"
                out[k] = walk(v)
            return out
        return [walk(v) for v in value] if isinstance(value, list) else value
    return walk(doc)


def in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] and box["y"] + min(box["height"], 40) <= page.viewport_size["height"]


def now():
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def test_keyboard_flow_from_pool_to_gold_set_on_disk(tmp_path, page, running):
    project = write_project(tmp_path)
    since = now()
    label = running(project, "--chunks", "chunks.jsonl")
    open_page(page, label)
    # q1 "alpha please": top 3 = alpha, beta, gamma; alpha is judged, so the pool is beta, gamma.
    assert page.locator("#question").text_content() == "alpha please"
    assert shown_chunks(page) == ["beta", "gamma"]
    assert page.locator("#chunks li .chunk-text").all_text_contents() == [TEXTS["beta"], TEXTS["gamma"]]
    # The header counts the questions' chunks judged already (q1's alpha, q2's gamma) too.
    assert page.locator("#progress").text_content() == "2 judged / 4 to judge"
    press(page, "1", "0")  # beta 1, gamma 0; focus moves to q2 "gamma please": alpha, beta
    assert page.locator("#question").text_content() == "gamma please"
    assert shown_chunks(page) == ["alpha", "beta"]
    press(page, "?")
    page.keyboard.type("mentions no gamma")
    press(page, "Enter")
    press(page, "3")
    assert page.locator("#progress").text_content() == "6 judged / 0 to judge"
    on_disk = stamped(json.loads((project / "gold.json").read_text()), since, now())
    assert on_disk == {
        "schema_version": 1,
        "provenance": {"judgements": {
            "q1": {"by": "Ann", "at": "AT", "chunks": {"beta": {"grade": 1, "by": "Ann", "at": "AT"},
                                                       "gamma": {"grade": 0, "by": "Ann", "at": "AT"}}},
            "q2": {"by": "Ann", "at": "AT", "chunks": {
                "alpha": {"grade": None, "by": "Ann", "at": "AT", "note": "mentions no gamma"},
                "beta": {"grade": 3, "by": "Ann", "at": "AT"}}}}},
        "questions": [
            {"id": "q1", "question": "alpha please", "gold": {"alpha": 1, "beta": 1, "gamma": 0}},
            {"id": "q2", "question": "gamma please", "gold": {"gamma": 2, "beta": 3}},
        ],
    }


def test_keys_typed_faster_than_the_server_answers_all_count(tmp_path, page, running):
    project = write_project(tmp_path)
    label = running(project, "--chunks", "chunks.jsonl")
    open_page(page, label)
    page.keyboard.type("1023")  # no waiting between keys
    settle(page)
    gold = [q["gold"] for q in json.loads((project / "gold.json").read_text())["questions"]]
    assert gold == [{"alpha": 1, "beta": 1, "gamma": 0}, {"gamma": 2, "alpha": 2, "beta": 3}]


def test_skip_edit_unanswerable_and_moving_around(tmp_path, page, running):
    project = write_project(tmp_path, questions=[{"id": "q1", "question": "alpha please", "gold": ["alpha"]}])
    # q2 has only a grade of 0, so it waits in pending (the gold set stays valid meanwhile).
    doc = json.loads((project / "gold.json").read_text())
    doc["provenance"] = {"pending": [{"id": "q2", "question": "delta? off topic", "gold": {"delta": 0}}]}
    (project / "gold.json").write_text(json.dumps(doc))
    label = running(project, "--chunks", "chunks.jsonl")
    open_page(page, label)
    press(page, "s", "1")  # skip beta, grade gamma
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, "gamma": 1}
    press(page, "ArrowRight")
    assert page.locator("#question").text_content() == "delta? off topic"
    press(page, "e")
    page.locator("#edit-input").fill("Is delta off topic?")
    press(page, "Enter")
    assert page.locator("#question").text_content() == "Is delta off topic?"
    press(page, "u")
    on_disk = json.loads((project / "gold.json").read_text())
    assert on_disk["questions"][1] == {"id": "q2", "question": "Is delta off topic?", "gold": [],
                                       "unanswerable": True}
    assert "pending" not in on_disk["provenance"]
    assert on_disk["provenance"]["judgements"]["q2"]["set_aside"] == {"delta": 0}
    # The mark moved the focus on to q1's skipped chunk; back to q2 and unmark it: delta's 0 is back.
    press(page, "ArrowRight", "u")
    on_disk = json.loads((project / "gold.json").read_text())
    assert on_disk["provenance"]["pending"] == [{"id": "q2", "question": "Is delta off topic?", "gold": {"delta": 0}}]


def test_resume_after_the_server_is_killed_mid_session(tmp_path, page, running):
    project = write_project(tmp_path)
    first = running(project, "--chunks", "chunks.jsonl")
    open_page(page, first)
    press(page, "2")  # beta for q1
    first.kill()
    saved = json.loads((project / "gold.json").read_text())
    assert saved["questions"][0]["gold"] == {"alpha": 1, "beta": 2}
    second = running(project, "--chunks", "chunks.jsonl")
    open_page(page, second)
    # The session resumes where it stopped: beta is judged, gamma is next.
    assert shown_chunks(page) == ["gamma"]
    # What was judged before the restart still counts: alpha and beta of q1, gamma of q2.
    assert page.locator("#progress").text_content() == "3 judged / 3 to judge"
    press(page, "0", "0", "1")
    final = json.loads((project / "gold.json").read_text())
    assert [q["gold"] for q in final["questions"]] == [{"alpha": 1, "beta": 2, "gamma": 0},
                                                       {"gamma": 2, "alpha": 0, "beta": 1}]


@pytest.fixture
def two_pages(tmp_path, browser, running):
    """One gold set, two `ci-eval label` processes (Ann's and Bob's), a page open on each."""
    project = write_project(tmp_path)
    ann = running(project, "--chunks", "chunks.jsonl", judge="Ann")
    bob = running(project, "--chunks", "chunks.jsonl", judge="Bob")
    left, right = browser.new_page(), browser.new_page()
    open_page(left, ann)
    open_page(right, bob)
    yield project, left, right
    left.close()
    right.close()


def test_a_refused_grade_says_what_the_other_page_recorded_and_by_whom(two_pages):
    project, left, right = two_pages
    press(left, "2")  # Ann: q1 beta = 2
    press(right, "3")  # Bob, on a page that showed beta unjudged: refused (409)
    text = right.locator("#chunks li.focused .message").text_content()
    doc = json.loads((project / "gold.json").read_text())
    at = doc["provenance"]["judgements"]["q1"]["chunks"]["beta"]["at"]
    assert f"'beta' for 'q1' is now grade 2 by Ann at {at} (this page showed not judged)" in text
    assert "your grade was not recorded" in text
    assert doc["questions"][0]["gold"]["beta"] == 2  # Bob's 3 was not written


def test_two_pages_on_one_gold_set_keep_each_others_work(two_pages):
    project, left, right = two_pages
    press(left, "2")  # Ann: q1 beta = 2
    press(right, "3")  # Bob grades beta on a page that never saw Ann's 2: refused, and shown
    # The refusal is written in the chunk it is about, on screen.
    refusal = right.locator("#chunks li.focused .message")
    assert "Someone else judged this meanwhile" in refusal.text_content()
    assert refusal.is_visible() and in_viewport(right, refusal)
    assert right.locator("#chunks li .mark").first.text_content() == "grade 2"
    press(right, "ArrowDown", "0")  # Bob: q1 gamma = 0, added to Ann's work
    doc = json.loads((project / "gold.json").read_text())
    assert doc["questions"][0]["gold"] == {"alpha": 1, "beta": 2, "gamma": 0}
    chunks = doc["provenance"]["judgements"]["q1"]["chunks"]
    assert (chunks["beta"]["by"], chunks["gamma"]["by"]) == ("Ann", "Bob")


def test_keep_and_bin_candidate_questions(tmp_path, page, running):
    project = write_project(tmp_path)
    (project / "mined.jsonl").write_text(
        json.dumps({"question": "delta please"}) + "\n" + json.dumps({"question": "ALPHA please!"}) + "\n")
    label = running(project, "--chunks", "chunks.jsonl", "--candidates", "mined.jsonl")
    open_page(page, label)
    assert page.locator("#candidate-list li .chunk-text").all_text_contents() == ["delta please", "ALPHA please!"]
    assert page.locator("#candidate-list li .flag").all_text_contents() == ["near-duplicate of q1"]
    from ci_eval.core.gold.candidates import candidate_id

    kept, binned = candidate_id("delta please"), candidate_id("ALPHA please!")
    focused = page.locator("#candidate-list li.focused")
    press(page, "j")
    assert focused.get_attribute("data-id") == binned
    press(page, "k")  # k moves up (it used to keep)
    assert focused.get_attribute("data-id") == kept
    assert "provenance" not in json.loads((project / "gold.json").read_text())
    press(page, "y", "b")  # keep "delta please", bin the duplicate
    press(page, "z", "z")  # take both back, the bin first
    doc = json.loads((project / "gold.json").read_text())
    assert "binned" not in doc.get("provenance", {}) and "pending" not in doc.get("provenance", {})
    assert page.locator("#candidate-list li .chunk-text").all_text_contents() == ["delta please", "ALPHA please!"]
    press(page, "y")  # keep "delta please"
    press(page, "b")  # bin the duplicate
    doc = json.loads((project / "gold.json").read_text())
    assert doc["provenance"]["pending"] == [{"id": kept, "question": "delta please", "gold": {}}]
    assert doc["provenance"]["binned"][binned]["question"] == "ALPHA please!"
    # The kept question is judged like the others, with the retriever's pool for it.
    press(page, "ArrowRight", "ArrowRight")
    assert page.locator("#question").text_content() == "delta please"
    from fake_retrievers import lexical

    assert shown_chunks(page) == [c for c, _ in lexical("delta please", 3)]
    press(page, "2")
    doc = json.loads((project / "gold.json").read_text())
    assert doc["questions"][-1] == {"id": kept, "question": "delta please", "gold": {"delta": 2}}
    assert "pending" not in doc["provenance"]


def test_hostile_text_stays_inert(tmp_path, page, running):
    hostile = {**TEXTS, "beta": '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'}
    question = '<img src=y onerror="window.pwned = 3"> alpha'
    project = write_project(tmp_path, texts=hostile, questions=[
        {"id": "q1", "question": question, "gold": ["alpha"]}])
    label = running(project, "--chunks", "chunks.jsonl", "--no-retriever", "--pool", str(write_run(project)))
    open_page(page, label)
    assert page.locator("#question").text_content() == question
    assert page.locator("#chunks li .chunk-text").first.text_content() == hostile["beta"]
    assert page.evaluate("window.pwned") is None
    assert page.locator("main img, main script").count() == 0


def write_run(project):
    run = project / "run.trec"
    run.write_text("q1 Q0 beta 1 2.0 r\nq1 Q0 gamma 2 1.0 r\n")
    return run


def test_requests_without_the_token_are_refused(tmp_path, page, running):
    label = running(write_project(tmp_path), "--chunks", "chunks.jsonl")
    response = page.goto(label.origin + "/")
    assert response.status == 403
    assert "token" in page.content()
    open_page(page, label)
    status = page.evaluate("fetch('/api/grade', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                           " body: JSON.stringify({question: 'q1', chunk: 'beta', grade: 3})}).then(r => r.status)")
    assert status == 403
    assert json.loads((tmp_path / "gold.json").read_text())["questions"][0]["gold"] == ["alpha"]


def test_the_demo_corpus_can_be_labelled_again(tmp_path, page, running):
    from ci_eval.core.gold.pooling import pool_question
    from ci_eval.demo.retriever import search
    from ci_eval.demo.run import demo_config_path
    from ci_eval.inputs.loaders import load_config

    config = load_config(demo_config_path("base"))
    label = running(tmp_path, "--demo", "--gold", "demo-gold.json")
    open_page(page, label)
    demo_gold = json.loads(Path(demo_config_path("base")).with_name("gold.json").read_text())
    first = demo_gold["questions"][0]["question"]
    assert page.locator("#question").text_content() == first
    # the demo's answer has stages (pool, rerank); the page pools its final list
    answer = search(first, config.retriever.depth, **config.retriever.params)
    expected = pool_question([[c for c, _ in answer["results"]]], config.k)
    assert tuple(shown_chunks(page)) == expected
    press(page, "2")
    doc = json.loads((tmp_path / "demo-gold.json").read_text())
    assert doc["questions"][0]["id"] == demo_gold["questions"][0]["id"]
    assert doc["questions"][0]["gold"] == {expected[0]: 2}
    shot = DOCS / "labelling.png" if os.environ.get("CI_EVAL_SCREENSHOT") == "1" else tmp_path / "labelling.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_gold_set_broken_by_hand_is_an_error_on_the_page(tmp_path, page, running):
    project = write_project(tmp_path)
    label = running(project, "--chunks", "chunks.jsonl")
    text = (project / "gold.json").read_text()
    (project / "gold.json").write_text(text[: len(text) // 2])  # cut, as a bad hand edit leaves it
    open_page(page, label)
    message = page.locator("#message").text_content()
    assert "gold set cannot be read" in message and "gold.json" in message and "invalid JSON" in message
    assert page.locator("#message").is_visible()


def test_two_pages_editing_one_question_the_later_is_refused_beside_the_question(two_pages):
    project, left, right = two_pages
    for page, text in ((left, "alpha, please?"), (right, "what is alpha?")):
        press(page, "e")
        page.locator("#edit-input").fill(text)
        press(page, "Enter")
    # Bob's page showed "alpha please" when he edited it: his edit is refused, Ann's stays.
    assert json.loads((project / "gold.json").read_text())["questions"][0]["question"] == "alpha, please?"
    refusal = right.locator("#question-message .message")
    assert "changed this question meanwhile" in refusal.text_content() and in_viewport(right, refusal)
    assert right.locator("#question").text_content() == "alpha, please?"


def long_project(tmp_path, names=("beta", "gamma"), lines=1000):
    """q1 with two long chunks to judge and q2 with one, pooled from a run file."""
    texts = {n: " ".join(f"Line {i} of {n}." for i in range(lines)) for n in names}
    texts["delta"] = "Delta is fourth."
    project = write_project(tmp_path, texts=texts, questions=[
        {"id": "q1", "question": "first please", "gold": ["alpha"]},
        {"id": "q2", "question": "second please", "gold": ["alpha"]}])
    run = "".join(f"q1 Q0 {n} {r + 1} {9 - r} r\n" for r, n in enumerate(names)) + "q2 Q0 delta 1 1.0 r\n"
    (project / "run.trec").write_text(run)
    return project


def box(page, selector):
    return page.locator(selector).bounding_box()


def test_the_focused_chunk_is_shown_whole_and_space_pages_through_it(tmp_path, page, running):
    project = long_project(tmp_path)
    label = running(project, "--chunks", "chunks.jsonl", "--no-retriever", "--pool", "run.trec")
    open_page(page, label)
    text = page.locator("#chunks li.focused .chunk-text")
    # Nothing of it hidden inside a scrolling box: the text is as tall as its content.
    assert text.evaluate("t => t.scrollHeight <= t.clientHeight + 1")
    height = page.viewport_size["height"]
    assert box(page, "#chunks li.focused .chunk-text")["height"] > 2 * height  # taller than the window
    presses = 0
    while box(page, "#chunks li.focused .chunk-text")["y"] + box(page, "#chunks li.focused .chunk-text")["height"] > height:
        assert presses < 20, "Space never reached the end of the focused chunk"
        page.keyboard.press("Space")
        presses += 1
    assert presses >= 2
    bottom = page.evaluate("window.scrollY")
    page.keyboard.press("Shift+Space")
    assert page.evaluate("window.scrollY") < bottom
    # The other chunk, not focused, stays a short box until it is focused.
    assert page.locator("#chunks li:not(.focused) .chunk-text").evaluate("t => t.scrollHeight > t.clientHeight")


def test_moving_on_to_the_next_question_shows_it_and_the_header(tmp_path, page, running):
    project = long_project(tmp_path)
    label = running(project, "--chunks", "chunks.jsonl", "--no-retriever", "--pool", "run.trec")
    open_page(page, label)
    for _ in range(3):  # read down beta's text
        page.keyboard.press("Space")
    press(page, "j")  # then on to gamma, shown from its start
    assert page.evaluate("window.scrollY") > 0
    assert in_viewport(page, page.locator("#chunks li.focused .chunk-id"))
    press(page, "1")  # gamma graded; the next unjudged chunk is q2's delta
    assert page.locator("#question").text_content() == "second please"
    for selector in ("#top", "#question", "#where"):
        assert in_viewport(page, page.locator(selector)), selector
    assert page.evaluate("window.scrollY") == 0


def test_bidi_controls_in_ids_are_shown_escaped_and_texts_isolated(tmp_path, page, running):
    sneaky = "c-rtl\u202egpj.exe"
    question = "which file is \u202eevil\u202c please"
    project = write_project(tmp_path, texts={**TEXTS, sneaky: "A file \u202egnp.exe\u202c name."},
                            questions=[{"id": "q1", "question": question, "gold": ["alpha"]}])
    (project / "run.trec").write_text(f"q1 Q0 {sneaky} 1 1.0 r\n")
    label = running(project, "--chunks", "chunks.jsonl", "--no-retriever", "--pool", "run.trec")
    open_page(page, label)
    assert shown_chunks(page) == ["c-rtl\\u202egpj.exe"]
    assert page.locator("#question").get_attribute("dir") == "auto"
    assert page.locator("#question").text_content() == question
    assert page.locator("#chunks li .chunk-text").get_attribute("dir") == "auto"
    assert page.locator("#judge bdi").text_content() == "Ann"
    assert page.locator("#edit-input").get_attribute("dir") == "auto"  # the text being edited too
    press(page, "2")  # graded under its real id
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, sneaky: 2}


def test_query_terms_are_highlighted_in_the_chunk_text(tmp_path, page, running):
    import re

    text = "Please note: alpha, Alphabet and ALPHA differ; the alpha-beta pair too."
    project = write_project(tmp_path, texts={**TEXTS, "beta": text},
                            questions=[{"id": "q1", "question": "What is alpha, please?", "gold": ["alpha"]}])
    (project / "run.trec").write_text("q1 Q0 beta 1 1.0 r\n")
    label = running(project, "--chunks", "chunks.jsonl", "--no-retriever", "--pool", "run.trec")
    open_page(page, label)
    # The question's words (less "what" and "is", which every question has), any case, whole words.
    terms = {"alpha", "please"}
    expected = [w for w in re.findall(r"[^\W_]+", text) if w.lower() in terms]
    assert page.locator("#chunks li .chunk-text mark").all_text_contents() == expected
    assert page.locator("#chunks li .chunk-text").text_content() == text  # the text itself unchanged


def test_a_long_id_is_graded_like_any_other_and_measured_by_run_and_compare(tmp_path, page, running):
    import subprocess
    import sys

    from ci_eval.core.limits import MAX_ID_BYTES

    # 4 + 2,046 two-byte characters: exactly the longest id the run-file reader takes, and
    # over twice the 1,000 characters the gold set's schema allowed before.
    long_id = "doc/" + "\u00e9" * ((MAX_ID_BYTES - 4) // 2)
    assert len(long_id.encode("utf-8")) == MAX_ID_BYTES and len(long_id) > 1000
    project = write_project(tmp_path, texts={**TEXTS, long_id: "alpha alpha alpha, at length."},
                            questions=[{"id": "q1", "question": "alpha please", "gold": ["alpha"]}])
    (project / "run.trec").write_text(f"q1 Q0 {long_id} 1 1.0 r\n", encoding="utf-8")
    label = running(project, "--chunks", "chunks.jsonl", "--no-retriever", "--pool", "run.trec")
    open_page(page, label)
    assert shown_chunks(page) == [long_id]
    press(page, "2")
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, long_id: 2}
    # The gold set now holding it, `ci-eval run` scores it (a retriever whose index holds it
    # and ranks it first) and `ci-eval compare` reads the artefact back; both validate
    # against the shipped schemas.
    (project / "long_id.txt").write_text(long_id, encoding="utf-8")
    (project / "long_retriever.py").write_text(
        "from pathlib import Path\n"
        "LONG = Path(__file__).with_name('long_id.txt').read_text(encoding='utf-8')\n"
        "def retrieve(question, k, **params):\n    return [(LONG, 1.0), ('alpha', 0.5)][:k]\n"
        "def manifest():\n    return {'version': 'v1', 'ids': [LONG, 'alpha']}\n")
    (project / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 3\n[retriever]\ntype = "python"\n'
                                          'target = "long_retriever:retrieve"\n[index]\ncallable = "long_retriever:manifest"\n')
    env = {**os.environ, "PYTHONPATH": str(project)}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)

    done = cli("run", "--out", "run.json", "--quiet")
    assert done.returncode == 0, done.stderr
    compared = cli("compare", "run.json", "run.json", "--no-config", "--format", "json")
    assert compared.returncode == 0, compared.stderr
    shown = json.loads(compared.stdout)
    assert shown["stale"]["questions"] == {}  # the long id is live gold, not set aside
    # Ranked [long (grade 2), alpha (grade 1)]: the ideal order, whatever the gain of a
    # grade, so nDCG@3 is 1; had the long id been dropped, alpha alone at rank 2 would give
    # 1 / log2(3).
    ndcg = {m["metric"]: m for m in shown["metrics"]}["ndcg@3"]
    assert ndcg["head"] == ndcg["base"] == 1.0


def suggest_command(*extra):
    import shlex
    import sys

    from suite_paths import SUPPORT

    return " ".join(shlex.quote(a) for a in (sys.executable, str(SUPPORT / "suggest_judge.py"), *extra))


def wait_for_suggestions(page, state="done"):
    page.locator(f"#suggest-status[data-state='{state}']").wait_for(state="attached")
    settle(page)


def test_suggested_grades_enter_takes_one_a_digit_overrides_and_kappa_is_recorded(tmp_path, page, running):
    from suggest_judge import SUGGESTED

    project = write_project(tmp_path)
    command = suggest_command()
    label = running(project, "--chunks", "chunks.jsonl", "--suggest-command", command)
    open_page(page, label)
    wait_for_suggestions(page)
    assert page.locator("#suggest-status").text_content() == f"Enter takes the suggested grade · judge: command {command}"
    # q1's pool is beta, gamma (best rank first); the judge suggests gamma 2, beta 0, so gamma
    # comes first, and the focus is on it.
    assert shown_chunks(page) == ["gamma", "beta"]
    assert page.locator("#chunks li .suggested").all_text_contents() == ["suggested 2", "suggested 0"]
    assert page.locator("#chunks li .mark").all_text_contents() == ["", ""]  # a suggestion is not a grade
    assert page.locator("#chunks li.focused").get_attribute("data-id") == "gamma"
    assert page.locator("#kappa").text_content() == "agreement with the judge: no grade given with a suggestion yet"
    # Nothing the judge said is in the gold set yet.
    doc = json.loads((project / "gold.json").read_text())
    assert [q["gold"] for q in doc["questions"]] == [["alpha"], {"gamma": 2}] and "provenance" not in doc
    press(page, "Enter")  # gamma: takes the suggested 2
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, "gamma": 2}
    assert page.locator("#chunks li.focused").get_attribute("data-id") == "beta"
    press(page, "1")  # beta: suggested 0, the person says 1
    # q2 "gamma please": pool alpha, beta; suggested alpha 1, beta 2, so beta first.
    assert page.locator("#question").text_content() == "gamma please"
    assert shown_chunks(page) == ["beta", "alpha"]
    press(page, "Enter", "1")  # beta takes 2; alpha given 1 by a digit, as suggested
    doc = json.loads((project / "gold.json").read_text())
    assert [q["gold"] for q in doc["questions"]] == [{"alpha": 1, "gamma": 2, "beta": 1},
                                                     {"gamma": 2, "beta": 2, "alpha": 1}]
    # (suggested, given): (2, 2), (0, 1), (2, 2), (1, 1): po = 3/4; suggested shares .25 .25 .5 0,
    # given 0 .5 .5 0; pe = .25 * .5 + .5 * .5 = 3/8; kappa = (3/4 - 3/8) / (1 - 3/8) = 0.6.
    kappa = page.locator("#kappa")
    assert (kappa.get_attribute("data-kappa"), kappa.get_attribute("data-pairs")) == ("0.6", "4")
    assert kappa.text_content().startswith("agreement with the judge: κ 0.60 (95 % interval ")
    assert kappa.text_content().endswith(") over 4 grades")
    cells = page.locator("#confusion tr").all()
    assert [r.locator("td").all_text_contents() for r in cells[1:]] == [
        ["0", "1", "0", "0"], ["0", "1", "0", "0"], ["0", "0", "2", "0"], ["0", "0", "0", "0"]]
    prov = doc["provenance"]
    chunks = {(qid, c): rec for qid, r in prov["judgements"].items() for c, rec in r["chunks"].items()}
    assert {k: rec["suggested"] for k, rec in chunks.items()} == SUGGESTED
    assert prov["suggestions"]["judge"] == f"command {command}"
    assert prov["suggestions"]["agreement"]["kappa"] == 0.6
    assert prov["suggestions"]["agreement"]["confusion"] == [[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]
    # The page after a reload shows the same agreement, read from the gold set.
    open_page(page, label)
    assert page.locator("#kappa").get_attribute("data-kappa") == "0.6"
    from importlib import resources

    import jsonschema

    from ci_eval.core.gold.goldset import parse_gold_set

    parse_gold_set(doc, "gold.json")  # still a valid gold set, by the reader and by the shipped schema
    schema = json.loads(resources.files("ci_eval.schemas").joinpath("goldset.schema.json").read_text("utf-8"))
    jsonschema.validate(doc, schema)


def test_a_failing_judge_leaves_the_page_grading_and_says_why_in_one_line(tmp_path, page, running):
    project = write_project(tmp_path)
    label = running(project, "--chunks", "chunks.jsonl", "--suggest-command", suggest_command("--fail"))
    open_page(page, label)
    wait_for_suggestions(page, "failed")
    status = page.locator("#suggest-status")
    assert status.text_content() == "no suggestions: the judge command exited with 3: the judge has no model loaded"
    assert status.is_visible()
    assert page.locator("#chunks li .suggested:visible").count() == 0
    press(page, "Enter")  # nothing to take: said beside the chunk, nothing written
    assert "no suggestions: the judge command exited with 3" in page.locator("#chunks li.focused .message").text_content()
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == ["alpha"]
    press(page, "2")
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, "beta": 2}
    err = label.kill()
    assert "ci-eval label: no suggestions: the judge command exited with 3: the judge has no model loaded" in err
    assert "Traceback" not in err


# Selects ``needle`` inside the focused chunk's text as a person's mouse would: a Range over
# the text nodes (the query terms' <mark>s split the text into several), made the selection.
SELECT = """needle => {
  const root = document.querySelector("#chunks li.focused .chunk-text");
  const at = root.textContent.indexOf(needle);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let pos = 0, start = null, end = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const len = n.data.length;
    if (start === null && at < pos + len) start = [n, at - pos];
    if (at + needle.length <= pos + len) { end = [n, at + needle.length - pos]; break; }
    pos += len;
  }
  const range = document.createRange();
  range.setStart(start[0], start[1]);
  range.setEnd(end[0], end[1]);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return [at, root.querySelectorAll("mark").length];
}"""


def test_a_selected_span_is_recorded_as_evidence_in_its_document(tmp_path, page, running):
    from ci_eval.inputs.loaders import load_gold_set

    # beta's line says where it sits in letters.md; gamma's does not.
    beta_start = 40
    project = write_project(tmp_path, questions=[
        {"id": "q1", "question": "alpha second please", "gold": ["alpha"]}])
    (project / "chunks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in [
        {"id": "alpha", "text": TEXTS["alpha"]},
        {"id": "beta", "text": TEXTS["beta"], "doc": "letters.md", "start": beta_start,
         "end": beta_start + len(TEXTS["beta"])},
        {"id": "gamma", "text": TEXTS["gamma"]}]))
    since = now()
    label = running(project, "--chunks", "chunks.jsonl")
    open_page(page, label)
    assert shown_chunks(page) == ["beta", "gamma"]
    needle = "comes second"  # "second" is a query term: the selection crosses its <mark>
    at, marks = page.evaluate(SELECT, needle[:-1])
    assert at == TEXTS["beta"].index(needle) and marks == 1
    press(page, "Shift+ArrowRight")  # extends the selection by a character; the focus stays
    assert page.locator("#chunks li.focused .chunk-id").text_content() == "beta"
    press(page, "v")
    assert "span of 12 characters" in page.locator("#chunks li.focused .message").text_content()
    press(page, "2")
    assert "span recorded" in page.locator("#chunks li.focused .message").text_content()
    start, end = beta_start + at, beta_start + at + len(needle)
    on_disk = stamped(json.loads((project / "gold.json").read_text()), since, now())
    q1 = on_disk["questions"][0]
    assert q1["evidence"] == [{"doc": "letters.md", "start": start, "end": end, "grade": 2}]
    assert q1["gold"] == ["alpha"]  # the chunk itself is not graded by its span
    assert on_disk["provenance"]["judgements"]["q1"]["spans"] == [
        {"doc": "letters.md", "start": start, "end": end, "grade": 2, "chunk": "beta", "by": "Ann", "at": "AT"}]
    gold, _ = load_gold_set(str(project / "gold.json"))  # ci-eval's own reader takes it
    assert [(e.doc, e.start, e.end, e.grade) for e in gold.questions[0].evidence] == [("letters.md", start, end, 2)]
    # After a reload the span is shown, underlined, in the chunk it was selected in.
    open_page(page, label)
    assert page.locator("#chunks li.focused .chunk-text u.span").all_text_contents() == ["comes ", "second"]
    # gamma's line gives no place: `v` says in one line why, and nothing is written.
    before = (project / "gold.json").read_text()
    press(page, "ArrowDown")
    page.evaluate(SELECT, "third")
    press(page, "v")
    refusal = page.locator("#chunks li.focused .message").text_content()
    assert refusal == 'no span can be recorded here: its line in the chunks file has no "doc" and "start"'
    press(page, "2")  # no span waiting: an ordinary grade of gamma
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, "gamma": 2}
    assert json.loads(before)["questions"][0]["evidence"] == json.loads(
        (project / "gold.json").read_text())["questions"][0]["evidence"]


SELECT_ALL = """() => {
  const range = document.createRange();
  range.selectNodeContents(document.querySelector("#chunks li.focused .chunk-text"));
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
}"""


def test_a_span_on_the_demo_leaves_out_the_heading_the_page_shows_first(tmp_path, page, running):
    from pydoc_data.topics import topics

    from ci_eval.demo.corpus import load_chunks
    from ci_eval.demo.reingest import manifest_entries

    label = running(tmp_path, "--demo", "--gold", "demo-gold.json")
    open_page(page, label)
    cid = page.locator("#chunks li.focused .chunk-id").text_content()
    page.evaluate(SELECT_ALL)  # the section's title, a blank line and its text
    press(page, "v", "1")
    entry = next(e for e in manifest_entries(load_chunks()) if e["id"] == cid)
    section = next(c for c in load_chunks() if c.id == cid)
    doc = json.loads((tmp_path / "demo-gold.json").read_text())
    asked = next(q for q in doc["questions"] if "evidence" in q)
    assert asked["evidence"] == [{"doc": entry["doc"], "start": entry["start"], "end": entry["end"], "grade": 1}]
    assert topics[entry["doc"]][entry["start"]:entry["end"]] == section.text
    underlined = "".join(page.locator("#chunks li.focused .chunk-text u.span").all_text_contents())
    assert underlined == section.text
