// The labelling page. Everything the server sends is data: it reaches the page through
// textContent and createElement only, never as HTML, and the Content-Security-Policy
// allows no script but this file.
"use strict";

const TOKEN = document.querySelector('meta[name="ci-eval-token"]').content;
const $ = (id) => document.getElementById(id);
let state = null;
let qi = 0;   // the question shown
let ci = 0;   // the focused chunk (or candidate question)
let busy = false;
let queue = Promise.resolve();  // keys waiting for the previous key's request (see enqueue)
let queued = 0;

function setBusy(value) {
  busy = value;
  document.body.dataset.busy = value || queued > 0 ? "1" : "0";
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
    const data = await response.json();
    if (response.status === 409) {
      state = data.state;
      say("Someone else judged this meanwhile: " + data.error + ". The page now shows their decision.");
    } else if (!response.ok) {
      say(data.error || ("request failed: " + response.status));
    } else {
      state = data;
      say("");
    }
    return response.ok;
  } catch (err) {
    say("The server is not answering (" + err + "). Start `ci-eval label` again: nothing saved is lost.");
    return false;
  } finally {
    setBusy(false);
    render();
  }
}

function say(text) { $("message").textContent = text; }

function undecided() { return state.candidates.filter((c) => c.decided === null); }

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function markLabel(mark) {
  if (mark === null) return "";
  if (mark === "?") return "can't tell";
  return "grade " + mark;
}

function renderCandidates(list) {
  const ol = $("candidate-list");
  ol.replaceChildren();
  list.forEach((c, i) => {
    const li = el("li", "candidate" + (i === ci ? " focused" : ""));
    li.dataset.id = c.id;
    li.append(el("span", "chunk-id", c.id), el("p", "chunk-text", c.question));
    if (c.duplicate_of !== null) li.append(el("p", "flag", "near-duplicate of " + c.duplicate_of));
    ol.append(li);
  });
}

function renderQuestion(q) {
  $("where").textContent = "question " + (qi + 1) + " of " + state.questions.length + " · " + q.id +
    (q.pending ? " · pending: not in the gold set until a chunk is graded 1 or more" : "");
  $("question").textContent = q.question;
  const judged = q.candidates.filter((c) => c.mark !== null).length;
  $("question-status").textContent = q.unanswerable
    ? "marked unanswerable (u to unmark)"
    : judged + " judged / " + (q.candidates.length - judged) + " to judge in this question's pool";
  const ol = $("chunks");
  ol.replaceChildren();
  q.candidates.forEach((c, i) => {
    const li = el("li", "chunk" + (i === ci ? " focused" : ""));
    li.dataset.id = c.id;
    const badge = el("span", "mark" + (typeof c.mark === "number" ? " g" + c.mark : ""), markLabel(c.mark));
    li.append(badge, el("span", "chunk-id", c.id), el("p", "chunk-text", c.text));
    li.addEventListener("click", () => { ci = i; render(); });
    ol.append(li);
  });
  const focused = ol.children[ci];
  if (focused) focused.scrollIntoView({ block: "nearest" });
}

function render() {
  if (!state) return;
  const p = state.progress;
  $("progress").textContent = p.judged + " judged / " + p.to_judge + " to judge";
  $("judge").textContent = "judging as " + state.judge;
  const open = undecided();
  $("candidates").hidden = open.length === 0;
  $("judging").hidden = open.length > 0 || state.questions.length === 0;
  $("done").hidden = open.length > 0 || state.questions.length > 0;
  if (open.length > 0) {
    ci = Math.min(ci, open.length - 1);
    renderCandidates(open);
  } else if (state.questions.length > 0) {
    qi = Math.min(qi, state.questions.length - 1);
    ci = Math.min(ci, Math.max(0, state.questions[qi].candidates.length - 1));
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
  if (!c || q.unanswerable) return;
  const body = { question: q.id, chunk: c.id, grade: value, seen: c.mark };
  if (note) body.note = note;
  if (await api("/api/grade", body)) moveTo(firstOpen(qi, ci + 1) || [qi, ci]);
  render();
}

function askNote() {
  $("note-form").hidden = false;
  $("note-input").value = "";
  $("note-input").focus();
}

async function toggleUnanswerable() {
  const q = state.questions[qi];
  if (await api("/api/unanswerable", { question: q.id, value: !q.unanswerable })) {
    if (state.questions[qi].unanswerable) moveTo(firstOpen(qi + 1, 0));
  }
  render();
}

function editQuestion() {
  $("edit-form").hidden = false;
  $("edit-input").value = state.questions[qi].question;
  $("edit-input").focus();
}

function judgingKey(key) {
  const q = state.questions[qi];
  if (!q) return undefined;
  if (/^[0-9]$/.test(key) && Number(key) <= state.max_grade) return grade(Number(key));
  if (key === "?") askNote();
  else if (key === "u") return toggleUnanswerable();
  else if (key === "e") editQuestion();
  else if (key === "s") moveTo(firstOpen(qi, ci + 1) || [qi, Math.min(ci + 1, q.candidates.length - 1)]);
  else if (key === "ArrowDown" || key === "j") ci = Math.min(ci + 1, q.candidates.length - 1);
  else if (key === "ArrowUp" || key === "k") ci = Math.max(ci - 1, 0);
  else if (key === "ArrowRight" || key === "n") { qi = Math.min(qi + 1, state.questions.length - 1); ci = 0; }
  else if (key === "ArrowLeft" || key === "p") { qi = Math.max(qi - 1, 0); ci = 0; }
  return undefined;
}

function candidateKey(key, open) {
  const c = open[ci];
  if (key === "k" || key === "b") return api("/api/" + (key === "k" ? "keep" : "bin"), { candidate: c.id });
  if (key === "ArrowDown" || key === "j") ci = Math.min(ci + 1, open.length - 1);
  else if (key === "ArrowUp") ci = Math.max(ci - 1, 0);
  return undefined;
}

// Keys typed faster than the server answers are queued, not dropped: each one acts on the
// state the previous one left.

function enqueue(action) {
  queued += 1;
  document.body.dataset.busy = "1";
  queue = queue.then(action).catch((err) => say(String(err))).finally(() => {
    queued -= 1;
    if (queued === 0 && !busy) document.body.dataset.busy = "0";
  });
}

function handleKey(key) {
  const open = undecided();
  const result = open.length > 0 ? candidateKey(key, open) : judgingKey(key);
  render();
  return result;
}

const KEYS = /^([0-9?usekbjnp]|Arrow(Up|Down|Left|Right))$/;

document.addEventListener("keydown", (event) => {
  if (!state || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target instanceof HTMLInputElement) {
    if (event.key === "Escape") { event.target.form.hidden = true; event.target.blur(); }
    return;
  }
  if (!KEYS.test(event.key)) return;
  event.preventDefault();
  enqueue(() => handleKey(event.key));
});

$("note-form").addEventListener("submit", (event) => {
  event.preventDefault();
  $("note-form").hidden = true;
  const note = $("note-input").value.trim();
  $("note-input").blur();
  grade(null, note || undefined);
});

$("edit-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("edit-form").hidden = true;
  $("edit-input").blur();
  await api("/api/edit", { question: state.questions[qi].id, text: $("edit-input").value });
});

api("/api/state").then(() => { if (state) { moveTo(firstOpen(0, 0)); render(); } });
