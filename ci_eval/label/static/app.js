// The labelling page. Everything the server sends is data: it reaches the page through
// textContent and createElement only, never as HTML, and the Content-Security-Policy
// allows no script but this file.
//
// The whole state is fetched once; every decision's answer is a delta (the questions and
// candidates it changed, marks only), merged here, so a key costs the same whatever the
// size of the gold set.
"use strict";

const TOKEN = document.querySelector('meta[name="ci-eval-token"]').content;
const $ = (id) => document.getElementById(id);
let state = null;
let byId = new Map();  // question id -> its index in state.questions
let progress = { judged: 0, to_judge: 0 };
let qi = 0;   // the question shown
let ci = 0;   // the focused chunk (or candidate question)
let shownQuestion = null;  // the question last drawn: another one scrolls back to the top
let message = null;  // { text, qid?, cid? }: shown beside the chunk, question or candidate it is about
const decided = [];  // candidates kept or binned on this page, the last one last (z takes it back)
let busy = false;
let queue = Promise.resolve();  // keys waiting for the previous key's request (see enqueue)
let queued = 0;
// A judge's suggested grades (when `ci-eval label` has one): polled while it is asking.
// Each question's chunks are ordered by suggestion, most likely relevant first, until a key
// is pressed on the question: from then on its order stays put under the person's hands.
let suggestVersion = 0;
let polling = false;
const frozen = new Set();
// A span: `v` takes the selection inside the focused chunk's text, the next digit grades it.
let armed = null;  // { qid, cid, start, end }: the selection `v` took, waiting for its grade
const NO_PLACE = "the chunk source does not say where this chunk sits in its document";

function setBusy(value) {
  busy = value;
  document.body.dataset.busy = value || queued > 0 ? "1" : "0";
}

// Bidirectional controls (embeddings, overrides, isolates, marks) reorder what follows
// them: in an id they could make "c-rtl\u202egpj.exe" read as "c-rtlexe.jpg". Ids and
// messages show them escaped; question and chunk texts are shown in isolated elements
// (dir="auto"), so their direction never leaks into what is around them.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(text) {
  return String(text).replace(BIDI, (ch) => "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0"));
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function isolated(tag, className, text) {
  const node = el(tag, className, text);
  node.dir = "auto";
  return node;
}

function reindex() { byId = new Map(state.questions.map((q, i) => [q.id, i])); }

function count(q, sign) {
  const open = q.candidates.filter((c) => c.mark === null).length;
  progress.judged += sign * (q.earlier + q.candidates.length - open);
  progress.to_judge += sign * (q.unanswerable ? 0 : open);
}

function suggestedRank(c) { return c.suggested === undefined ? -1 : c.suggested; }

function arrange(q, previous) {
  // ``at`` is the chunk's place in the pool (best rank first), the order among equals.
  q.candidates.forEach((c, i) => { if (c.at === undefined) c.at = i; });
  if (previous && frozen.has(q.id)) {
    const shown = new Map(previous.map((c, i) => [c.id, i]));
    const place = (c) => (shown.has(c.id) ? shown.get(c.id) : previous.length + c.at);
    q.candidates.sort((a, b) => place(a) - place(b));
  } else {
    q.candidates.sort((a, b) => suggestedRank(b) - suggestedRank(a) || a.at - b.at);
  }
}

function merge(delta) {
  for (const fresh of delta.questions || []) {
    const at = byId.get(fresh.id);
    if (at === undefined) {
      arrange(fresh);
      state.questions.push(fresh);
      byId.set(fresh.id, state.questions.length - 1);
    } else {
      const old = state.questions[at];
      const kept = new Map(old.candidates.map((c) => [c.id, c]));
      for (const c of fresh.candidates) {
        const before = kept.get(c.id);
        if (c.text === undefined && before) c.text = before.text;
        if (c.suggested === undefined && before && before.suggested !== undefined) c.suggested = before.suggested;
        // An answer carries a chunk's spans only when it has some, its place never.
        for (const key of ["place", "no_span", "spans"]) if (c[key] === undefined && before && before[key] !== undefined) c[key] = before[key];
      }
      arrange(fresh, old.candidates);
      count(old, -1);
      state.questions[at] = fresh;
    }
    count(fresh, +1);
  }
  if (delta.suggest) {
    state.suggest = { ...state.suggest, ...delta.suggest };
    startPolling();  // a kept candidate's new pool is being asked about
  }
  for (const id of delta.removed || []) {
    const at = byId.get(id);
    if (at === undefined) continue;
    count(state.questions[at], -1);
    state.questions.splice(at, 1);
    if (at < qi) qi -= 1;
    reindex();
  }
  for (const fresh of delta.candidates || []) {
    const at = state.candidates.findIndex((c) => c.id === fresh.id);
    if (at >= 0) state.candidates[at] = fresh;
  }
}

async function api(path, body) {
  const options = { headers: { "X-CI-Eval-Token": TOKEN } };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  setBusy(true);
  try {
    const response = await fetch(path, options);
    let data;
    try { data = await response.json(); } catch (err) { data = { error: "an answer that is not JSON (" + response.status + ")" }; }
    if (response.ok && body === undefined) {
      state = data;
      progress = { ...data.progress };
      for (const q of state.questions) arrange(q);
      reindex();
      if (state.suggest) {
        suggestVersion = state.suggest.version;
        startPolling();
      }
    } else if (response.ok || response.status === 409) {
      merge(data);
    }
    return { ok: response.ok, conflict: response.status === 409, error: data.error || ("request failed: " + response.status) };
  } catch (err) {
    return { ok: false, conflict: false, error: "The server is not answering (" + err + "). Start `ci-eval label` again: nothing saved is lost." };
  } finally {
    setBusy(false);
  }
}

function takeSuggestions(data) {
  state.suggest = { ...state.suggest, ...data, suggestions: undefined };
  suggestVersion = data.version;
  const touched = new Set();
  for (const [qid, cid, value] of data.suggestions || []) {
    const at = byId.get(qid);
    if (at === undefined) continue;
    const c = state.questions[at].candidates.find((x) => x.id === cid);
    if (c) { c.suggested = value; touched.add(at); }
  }
  for (const at of touched) {
    const q = state.questions[at];
    if (frozen.has(q.id)) continue;
    const focused = at === qi ? q.candidates[ci] : undefined;
    arrange(q);
    // Nothing pressed on the question shown yet: the focus goes to its first chunk to judge,
    // now the most likely relevant one.
    if (focused !== undefined) {
      const j = q.candidates.findIndex((c) => c.mark === null);
      ci = j >= 0 ? j : 0;
    }
  }
}

function startPolling() {
  if (polling || !state.suggest || state.suggest.state !== "running") return;
  polling = true;
  setTimeout(poll, 300);
}

async function poll() {
  try {
    const response = await fetch("/api/suggestions?since=" + suggestVersion, { headers: { "X-CI-Eval-Token": TOKEN } });
    if (response.ok) takeSuggestions(await response.json());
  } catch (err) {
    // The server is not answering: the next key says so; suggestions are not news enough.
  }
  render();
  if (state.suggest.state === "running") setTimeout(poll, 400);
  else polling = false;
}

function suggestStatus(s) {
  if (s.state === "failed") return "no suggestions: " + s.problem;
  if (s.state === "stopped") return "suggestions stopped: the judge's request budget (--suggest-max-requests) is spent";
  if (s.state === "running") return "suggesting grades: " + s.asked + " of " + s.wanted + " chunks asked";
  return "Enter takes the suggested grade · judge: " + s.judge;
}

function fixed(x) { return x.toFixed(2); }

function renderSuggest() {
  const s = state.suggest;
  const line = $("suggest-status");
  line.hidden = !s;
  $("suggest-keys").hidden = !s;
  $("agreement").hidden = !s;
  if (!s) return;
  line.dataset.state = s.state;
  line.textContent = visible(suggestStatus(s));
  line.title = line.textContent;
  const a = s.agreement;
  const kappa = $("kappa");
  kappa.dataset.kappa = a.kappa === null ? "" : String(a.kappa);
  kappa.dataset.pairs = String(a.pairs);
  const over = " over " + a.pairs + " grade" + (a.pairs === 1 ? "" : "s");
  kappa.textContent = a.pairs === 0
    ? "agreement with the judge: no grade given with a suggestion yet"
    : a.kappa === null
      ? "agreement with the judge: κ not defined yet" + over + " (all one grade, suggested and given)"
      : "agreement with the judge: κ " + fixed(a.kappa) + " (95 % interval " + fixed(a.interval95[0]) + " to " +
        fixed(a.interval95[1]) + ")" + over;
  const table = $("confusion");
  const head = el("tr");
  head.append(el("th", "", "suggested ↓ given →"), ...a.grades.map((g) => el("th", "", String(g))));
  const rows = a.confusion.map((row, i) => {
    const tr = el("tr");
    tr.append(el("th", "", String(a.grades[i])), ...row.map((n, j) => el("td", i === j ? "same" : "", String(n))));
    return tr;
  });
  table.replaceChildren(head, ...rows);
}

function say(text, about) { message = text ? { text: visible(text), ...(about || {}) } : null; }

function messageFor(qid, cid) {
  return message && message.qid === qid && message.cid === cid ? el("p", "message", message.text) : null;
}

function undecided() { return state.candidates.filter((c) => c.decided === null); }

function markLabel(mark) {
  if (mark === null) return "";
  if (mark === "?") return "can't tell";
  return "grade " + mark;
}

// Query terms are marked in the chunk text, as TREC assessors' tools do, so a judge sees at
// a glance why a chunk was retrieved: the question's words (letters and digits), ignoring
// case and a few words every question has.
const WORD = /[\p{L}\p{N}]+/gu;
const COMMON = new Set(("a an and are as at be by can do does for from has have how i if in is it its of on or " +
  "so than that the their then there these this to was what when where which who why will with you your").split(" "));

function queryTerms(question) {
  const terms = new Set();
  for (const m of question.matchAll(WORD)) {
    const word = m[0].toLowerCase();
    if (word.length > 1 && !COMMON.has(word)) terms.add(word);
  }
  return terms;
}

function chunkText(text, terms, spans) {
  // The text is cut where a query term or a recorded span starts or ends; each piece is a
  // text node, in a <mark> for a term, in a <u> for a span (the highest grade over it).
  const p = isolated("p", "chunk-text");
  const marked = [];
  for (const m of text.matchAll(WORD)) if (terms.has(m[0].toLowerCase())) marked.push([m.index, m.index + m[0].length]);
  const cuts = new Set([0, text.length]);
  for (const [a, b] of marked) { cuts.add(a); cuts.add(b); }
  for (const s of spans) { cuts.add(Math.max(0, Math.min(s.start, text.length))); cuts.add(Math.max(0, Math.min(s.end, text.length))); }
  const points = [...cuts].sort((a, b) => a - b);
  let m = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    while (m < marked.length && marked[m][1] <= a) m++;
    let node = document.createTextNode(text.slice(a, b));
    if (m < marked.length && marked[m][0] <= a) { const mark = el("mark"); mark.append(node); node = mark; }
    const over = spans.filter((s) => s.start <= a && b <= s.end);
    if (over.length) {
      const u = el("u", "span g" + Math.max(...over.map((s) => s.grade)));
      u.title = "recorded span, grade " + Math.max(...over.map((s) => s.grade));
      u.append(node);
      node = u;
    }
    p.append(node);
  }
  return p;
}

function selectionIn(root) {
  // The selection's offsets in the text of ``root`` (the characters its text nodes hold,
  // <mark> and <u> included, as the server's text has them), clipped to it; null when the
  // selection is empty or outside it.
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const whole = document.createRange();
  whole.selectNodeContents(root);
  if (range.compareBoundaryPoints(Range.END_TO_START, whole) >= 0 || range.compareBoundaryPoints(Range.START_TO_END, whole) <= 0) return null;
  const upTo = (container, offset) => {
    const r = document.createRange();
    r.setStart(root, 0);
    r.setEnd(container, offset);
    return r.toString().length;
  };
  const startsInside = range.compareBoundaryPoints(Range.START_TO_START, whole) > 0;
  const endsInside = range.compareBoundaryPoints(Range.END_TO_END, whole) < 0;
  const start = startsInside ? upTo(range.startContainer, range.startOffset) : 0;
  const end = endsInside ? upTo(range.endContainer, range.endOffset) : whole.toString().length;
  return end > start ? { start, end } : null;
}

function renderCandidates(list) {
  const ol = $("candidate-list");
  ol.replaceChildren();
  list.forEach((c, i) => {
    const li = el("li", "candidate" + (i === ci ? " focused" : ""));
    li.dataset.id = c.id;
    li.append(el("span", "chunk-id", visible(c.id)), isolated("p", "chunk-text", c.question));
    if (c.duplicate_of !== null) li.append(el("p", "flag", "near-duplicate of " + visible(c.duplicate_of)));
    const note = messageFor(undefined, c.id);
    if (note) li.append(note);
    ol.append(li);
  });
  const focused = ol.children[ci];
  if (focused) focused.scrollIntoView({ block: "nearest" });
}

function renderQuestion(q) {
  $("where").textContent = "question " + (qi + 1) + " of " + state.questions.length + " · " + visible(q.id) +
    (q.pending ? " · pending: not in the gold set until a chunk is graded 1 or more" : "");
  $("question").textContent = q.question;
  const judged = q.candidates.filter((c) => c.mark !== null).length;
  $("question-status").textContent = q.unanswerable
    ? "marked unanswerable (u to unmark)"
    : judged + " judged / " + (q.candidates.length - judged) + " to judge in this question's pool";
  $("question-message").replaceChildren(...[messageFor(q.id, undefined)].filter(Boolean));
  const ol = $("chunks");
  const drawn = q.id + "\n" + q.question + "\n" + q.candidates.map((c) => c.id + " " + JSON.stringify(c.spans || [])).join("\n");
  if (ol.dataset.drawn !== drawn || ol.children.length !== q.candidates.length) {
    // Another question (or its text edited): draw its chunks. Within one question a key
    // only changes badges, focus and messages, updated in place below, so the long texts
    // are not laid out again on every key.
    const terms = queryTerms(q.question);
    ol.replaceChildren(...q.candidates.map((c, i) => {
      const li = el("li", "chunk");
      li.dataset.id = c.id;
      li.append(el("span", "mark"), el("span", "suggested"), el("span", "chunk-id", visible(c.id)),
                chunkText(c.text === undefined ? "" : c.text, terms, c.spans || []));
      li.addEventListener("click", () => { ci = i; render(); });
      return li;
    }));
    ol.dataset.drawn = drawn;
  }
  q.candidates.forEach((c, i) => {
    const li = ol.children[i];
    li.classList.toggle("focused", i === ci);
    const badge = li.querySelector(".mark");
    badge.className = "mark" + (typeof c.mark === "number" ? " g" + c.mark : "");
    badge.textContent = markLabel(c.mark);
    const hint = li.querySelector(".suggested");
    hint.hidden = c.suggested === undefined;
    hint.textContent = c.suggested === undefined ? "" : "suggested " + c.suggested;
    hint.dataset.grade = c.suggested === undefined ? "" : String(c.suggested);
    const old = li.querySelector(".message");
    if (old) old.remove();
    const note = messageFor(q.id, c.id);
    if (note) li.querySelector(".chunk-id").after(note);
  });
  if (q.id !== shownQuestion) {
    // Another question: its heading and the header come into view, whatever was scrolled.
    shownQuestion = q.id;
    window.scrollTo({ top: 0, behavior: "instant" });
    return;
  }
  const focused = ol.children[ci];
  if (!focused) return;
  // The focused chunk is shown whole (it may be taller than the window; Space and
  // Shift+Space page through it): bring its start into view when it is off screen.
  const box = focused.getBoundingClientRect();
  if (box.top < $("top").offsetHeight || box.top > window.innerHeight - 60) focused.scrollIntoView({ block: "start", behavior: "instant" });
}

function render() {
  $("message").replaceChildren(...[messageFor(undefined, undefined)].filter(Boolean));
  if (!state) return;
  $("progress").textContent = progress.judged + " judged / " + progress.to_judge + " to judge";
  $("judge").replaceChildren("judging as ", isolated("bdi", "", state.judge));
  renderSuggest();
  const open = undecided();
  $("candidates").hidden = open.length === 0;
  $("judging").hidden = open.length > 0 || state.questions.length === 0;
  $("done").hidden = open.length > 0 || state.questions.length > 0;
  if (open.length > 0) {
    ci = Math.max(0, Math.min(ci, open.length - 1));
    renderCandidates(open);
  } else if (state.questions.length > 0) {
    qi = Math.max(0, Math.min(qi, state.questions.length - 1));
    ci = Math.max(0, Math.min(ci, state.questions[qi].candidates.length - 1));
    renderQuestion(state.questions[qi]);
  }
}

function firstOpen(fromQ, fromC) {
  // The next chunk nobody marked, in this question first, then in the following ones.
  for (let n = 0; n < state.questions.length; n++) {
    const i = (fromQ + n) % state.questions.length;
    const q = state.questions[i];
    if (q.unanswerable) continue;
    const start = n === 0 ? fromC : 0;
    const j = q.candidates.findIndex((c, k) => k >= start && c.mark === null);
    if (j >= 0) return [i, j];
  }
  return null;
}

function moveTo(place) {
  if (place) { qi = place[0]; ci = place[1]; }
}

async function grade(value, note) {
  const q = state.questions[qi];
  const c = q && q.candidates[ci];
  if (!c) return;
  if (q.unanswerable) { say("marked unanswerable: u unmarks it before grading", { qid: q.id }); return; }
  const body = { question: q.id, chunk: c.id, grade: value, seen: c.mark };
  if (note) body.note = note;
  const result = await api("/api/grade", body);
  if (result.ok) moveTo(firstOpen(qi, ci + 1) || [qi, ci]);
  else if (result.conflict) say("Someone else judged this meanwhile: " + result.error + ". The page now shows their decision.", { qid: q.id, cid: c.id });
  else say(result.error, { qid: q.id, cid: c.id });
}

function armSpan(q) {
  // `v`: the selection inside the focused chunk's text waits for a digit, its grade.
  const c = q.candidates[ci];
  if (!c) return;
  const about = { qid: q.id, cid: c.id };
  if (q.unanswerable) { say("marked unanswerable: u unmarks it before recording evidence", about); return; }
  if (!c.place) { say("no span can be recorded here: " + (c.no_span || NO_PLACE), about); return; }
  const li = $("chunks").children[ci];
  const got = li && selectionIn(li.querySelector(".chunk-text"));
  if (!got) { say("select some text in this chunk first (mouse, or Shift+arrows), then v", about); return; }
  // Only the document's part of the text can be evidence (not a heading the source put first).
  got.start = Math.max(got.start, c.place.at);
  got.end = Math.min(got.end, c.place.at + c.place.length);
  if (got.end <= got.start) { say("the selection holds none of the document's text: select in the chunk's text", about); return; }
  armed = { qid: q.id, cid: c.id, ...got };
  say("span of " + (got.end - got.start) + " characters: 1–" + state.max_grade + " grades it as evidence, any other key cancels", about);
}

async function gradeSpan(span, value) {
  const about = { qid: span.qid, cid: span.cid };
  const result = await api("/api/span", { question: span.qid, chunk: span.cid, start: span.start, end: span.end, grade: value });
  if (result.ok) {
    const sel = window.getSelection();
    if (sel) sel.removeAllRanges();
    say("span recorded as evidence, grade " + value, about);
  } else say(result.error, about);
}

function acceptSuggestion(q) {
  // The suggestion becomes a grade only here, by the person's key: a normal grade is sent.
  const c = q.candidates[ci];
  if (!c) return undefined;
  if (c.suggested === undefined) {
    const why = !state.suggest ? "no judge: start ci-eval label with --suggest-endpoint or --suggest-command"
      : state.suggest.state === "failed" ? "no suggestions: " + state.suggest.problem : "no suggestion for this chunk yet";
    say(why, { qid: q.id, cid: c.id });
    return undefined;
  }
  return grade(c.suggested);
}

function askNote() {
  $("note-form").hidden = false;
  $("note-input").value = "";
  $("note-input").focus();
}

async function toggleUnanswerable() {
  const q = state.questions[qi];
  const result = await api("/api/unanswerable", { question: q.id, value: !q.unanswerable });
  if (!result.ok) say(result.error, { qid: q.id });
  else if (state.questions[qi].unanswerable) moveTo(firstOpen(qi + 1, 0));
}

function editQuestion() {
  $("edit-form").hidden = false;
  $("edit-input").value = state.questions[qi].question;
  $("edit-input").focus();
}

function judgingKey(key) {
  const q = state.questions[qi];
  if (!q) return undefined;
  if (armed) {
    const span = armed;
    armed = null;
    if (/^[0-9]$/.test(key)) return gradeSpan(span, Number(key));
    say("span not recorded", { qid: span.qid, cid: span.cid });
    return undefined;
  }
  if (key === "v") { armSpan(q); return undefined; }
  if (/^[0-9]$/.test(key) && Number(key) <= state.max_grade) return grade(Number(key));
  if (key === "Enter") return acceptSuggestion(q);
  if (key === "?") askNote();
  else if (key === "u") return toggleUnanswerable();
  else if (key === "e") editQuestion();
  else if (key === "z") return undoCandidate();
  else if (key === "s") moveTo(firstOpen(qi, ci + 1) || [qi, Math.min(ci + 1, q.candidates.length - 1)]);
  else if (key === "ArrowDown" || key === "j") ci = Math.min(ci + 1, q.candidates.length - 1);
  else if (key === "ArrowUp" || key === "k") ci = Math.max(ci - 1, 0);
  else if (key === "ArrowRight" || key === "n") { qi = Math.min(qi + 1, state.questions.length - 1); ci = 0; }
  else if (key === "ArrowLeft" || key === "p") { qi = Math.max(qi - 1, 0); ci = 0; }
  return undefined;
}

async function decideCandidate(kind, c) {
  const result = await api("/api/" + kind, { candidate: c.id });
  if (result.ok) decided.push(c.id);
  else say(result.error, { cid: c.id });
}

async function undoCandidate() {
  const cid = decided[decided.length - 1];
  if (cid === undefined) { say("no keep or bin on this page to take back"); return; }
  const result = await api("/api/undecide", { candidate: cid });
  // Said at the top of the page: z may be pressed on the judging screen, where the
  // candidate is not shown.
  if (!result.ok) { say(result.error); return; }
  decided.pop();
  ci = Math.max(0, undecided().findIndex((c) => c.id === cid));
}

function candidateKey(key, open) {
  const c = open[ci];
  if (key === "y") return decideCandidate("keep", c);
  if (key === "b") return decideCandidate("bin", c);
  if (key === "z") return undoCandidate();
  if (key === "ArrowDown" || key === "j") ci = Math.min(ci + 1, open.length - 1);
  else if (key === "ArrowUp" || key === "k") ci = Math.max(ci - 1, 0);
  return undefined;
}

// Keys typed faster than the server answers are queued, not dropped: each one acts on the
// state the previous one left.

function enqueue(action, since) {
  queued += 1;
  document.body.dataset.busy = "1";
  queue = queue.then(action).catch((err) => say(String(err))).finally(() => {
    queued -= 1;
    render();
    // How long the last key took from its keydown to the page drawn and laid out (read
    // by benchmarks/bench_label.py; offsetHeight makes the layout happen now).
    if (since !== undefined && document.body.offsetHeight >= 0) document.body.dataset.keyMs = (performance.now() - since).toFixed(1);
    if (queued === 0 && !busy) document.body.dataset.busy = "0";
  });
}

async function handleKey(key) {
  say("");  // a message is about the key before; a new key starts afresh
  const open = undecided();
  if (open.length === 0 && state.questions[qi]) frozen.add(state.questions[qi].id);
  await (open.length > 0 ? candidateKey(key, open) : judgingKey(key));
}

const KEYS = /^([0-9?usekbjnpyzv]|Enter|Arrow(Up|Down|Left|Right))$/;

function page(direction) {
  // Space and Shift+Space page through a long focused chunk: a window less the header and a
  // line, at once (a smooth scroll still running would undo the next key's scrolling).
  const step = window.innerHeight - $("top").offsetHeight - 40;
  window.scrollBy({ top: direction * step, behavior: "instant" });
}

document.addEventListener("keydown", (event) => {
  if (!state || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target instanceof HTMLInputElement) {
    if (event.key === "Escape") { event.target.form.hidden = true; event.target.blur(); }
    return;
  }
  if (event.key === " ") {
    event.preventDefault();
    page(event.shiftKey ? -1 : 1);
    return;
  }
  if (!KEYS.test(event.key)) return;
  // Shift and an arrow extend a selection (a span to record with v): the browser's, not a move.
  if (event.shiftKey && event.key.startsWith("Arrow")) return;
  event.preventDefault();
  enqueue(() => handleKey(event.key), event.timeStamp);
});

$("note-form").addEventListener("submit", (event) => {
  event.preventDefault();
  $("note-form").hidden = true;
  const note = $("note-input").value.trim();
  $("note-input").blur();
  enqueue(() => grade(null, note || undefined));
});

$("edit-form").addEventListener("submit", (event) => {
  event.preventDefault();
  $("edit-form").hidden = true;
  $("edit-input").blur();
  const q = state.questions[qi];
  const text = $("edit-input").value;
  enqueue(async () => {
    const result = await api("/api/edit", { question: q.id, text, seen: q.question });
    if (result.conflict) say("Someone else changed this question meanwhile: " + result.error + ". The page now shows their text.", { qid: q.id });
    else if (!result.ok) say(result.error, { qid: q.id });
  });
});

enqueue(async () => {
  const result = await api("/api/state");
  if (!result.ok) say(result.error);
  else moveTo(firstOpen(0, 0));
});
