// sketchlog studio: the page. Talks to the server's /api/ with the token from the URL.
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const $ = (id) => document.getElementById(id);
let state = null;
let editing = null; // the index of the step being edited, or null for a new step
let inserting = false; // whether the form's step goes before step `editing`

async function api(path, body) {
  const init = { headers: { "x-sketchlog-token": token } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = { error: `${response.status} ${response.statusText}` };
  }
  return { ok: response.ok, status: response.status, data };
}

function status(text, kind) {
  $("status").textContent = text;
  $("status").className = kind || "";
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

// ---- the session's state ----

function render(s) {
  state = s;
  $("program").textContent = s.program;
  showTerm($("current"), s.current);
  $("current-type").textContent = ": " + s.current.ty;
  $("guide-text").textContent = s.guide;
  if (document.activeElement !== $("sketches") && $("sketches").value === "" && s.sketches) {
    $("sketches").value = s.sketches;
  }
  renderSteps(s.steps);
  renderChoices(s.files);
  const last = s.steps.length ? s.steps[s.steps.length - 1] : null;
  showResult(last);
}

// Shows a term in `box`: printed with every binder and primitive typed, or printed plainly
// with each subterm's type shown when the pointer is over it.
function showTerm(box, shown) {
  box.title = shown.ty;
  if ($("typed").checked) {
    box.textContent = shown.typed;
    return;
  }
  const text = shown.text;
  const stack = [{ end: text.length, node: box }];
  let at = 0;
  box.replaceChildren();
  const upTo = (to) => {
    if (to > at) stack[stack.length - 1].node.append(text.slice(at, to));
    at = Math.max(at, to);
  };
  for (const [start, end, ty] of shown.types) {
    while (stack.length > 1 && stack[stack.length - 1].end <= start) {
      upTo(stack[stack.length - 1].end);
      stack.pop();
    }
    upTo(start);
    const span = el("span", undefined, "sub");
    span.title = ty;
    stack[stack.length - 1].node.append(span);
    stack.push({ end, node: span });
  }
  while (stack.length > 1) {
    upTo(stack[stack.length - 1].end);
    stack.pop();
  }
  upTo(text.length);
}

// The subterm under the pointer is outlined (the innermost only).
function outlineSubterm(event) {
  for (const old of document.querySelectorAll("span.sub.hovered")) old.classList.remove("hovered");
  const sub = event.target.closest && event.target.closest("span.sub");
  if (sub) sub.classList.add("hovered");
}

function summary(o) {
  const what = o.found ? "found" : `not found (${o.stop})`;
  let text = `${o.sketch}: ${what}, ${o.iterations} iterations, ${o.enodes} e-nodes, ` +
    `${o.eclasses} e-classes, ${o.seconds.toFixed(3)} s, ${o.peak_rss_mb.toFixed(0)} MB`;
  if (o.strategy_steps) text += `, ${o.strategy_steps[0]} rewrite steps (${o.strategy_steps[1]} rules)`;
  return text;
}

function targetText(t) {
  return t.kind === "auto" ? "auto" : `${t.kind} ${t.name}`;
}

function renderSteps(steps) {
  const list = $("steps");
  list.replaceChildren();
  const pick = $("egraph-step");
  pick.replaceChildren();
  steps.forEach((step, i) => {
    const item = el("li");
    item.dataset.index = i;
    item.append(el("strong", targetText(step.spec.target)), " ");
    item.append(el("span", step.spec.rules.join(" "), "rules"));
    if (step.outcomes === null) {
      item.append(el("div", "not run (a step before it did not find its target)", "pending"));
    } else {
      for (const o of step.outcomes) {
        item.append(el("div", summary(o), o.found ? "found" : "missed"));
      }
    }
    const edit = el("button", "Edit");
    edit.type = "button";
    edit.onclick = () => startEdit(i);
    const insert = el("button", "Insert before");
    insert.type = "button";
    insert.onclick = () => startInsert(i);
    const remove = el("button", "Remove");
    remove.type = "button";
    remove.className = "remove";
    remove.onclick = () => removeStep(i);
    item.append(edit, insert, remove);
    list.append(item);
    if (step.egraph) {
      const option = el("option", `${i + 1}: ${targetText(step.spec.target)}`);
      option.value = i;
      pick.append(option);
    }
  });
}

function renderChoices(files) {
  const box = $("rules");
  const checked = new Set([...box.querySelectorAll("input:checked")].map((c) => c.value));
  box.replaceChildren(el("legend", "Rule sets"));
  for (const [file, sets] of files.rules) {
    const group = el("div", undefined, "rule-file");
    group.append(el("span", file + ": "));
    for (const spec of [file, ...sets.map((s) => `${file}:${s}`)]) {
      const label = el("label");
      const box = el("input");
      box.type = "checkbox";
      box.value = spec;
      box.checked = checked.has(spec);
      label.append(box, spec === file ? "all" : spec.slice(file.length + 1));
      group.append(label, " ");
    }
    box.append(group);
  }
  const sketchFiles = $("sketch-files");
  if (sketchFiles.options.length === 1) {
    for (const f of files.sketches) {
      const option = el("option", f);
      option.value = f;
      sketchFiles.append(option);
    }
  }
}

// ---- results ----

function showResult(step) {
  const box = $("result");
  $("result-summary").replaceChildren();
  $("why").replaceChildren();
  if (!step || step.outcomes === null) {
    box.dataset.found = "";
    return;
  }
  const outcomes = step.outcomes;
  const last = outcomes[outcomes.length - 1];
  box.dataset.found = last ? String(last.found) : "true";
  for (const o of outcomes) $("result-summary").append(el("div", summary(o)));
  if (last && last.term) {
    const term = el("pre", undefined, "term found-term");
    showTerm(term, last.term);
    $("result-summary").append(term);
  }
  if (last && last.why) {
    const index = state.steps.indexOf(step);
    $("why").append(el("h4", "Why not found"), whyTree(last.why, index));
  }
}

// The `--why` analysis as a tree: each line's indentation is its depth. A line about an
// e-class of step `step`'s e-graph shows it there when clicked.
function whyTree(why, step) {
  const root = el("ul", undefined, "why-tree");
  const stack = [{ depth: -1, list: root }];
  const classes = new Map(why.classes);
  why.text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const depth = line.length - line.trimStart().length;
    while (stack.length > 1 && stack[stack.length - 1].depth >= depth) stack.pop();
    const item = el("li", line.trim());
    if (/\bholds\b|\bsatisf/.test(line) && !/\bnot\b|\bno\b/.test(line)) item.className = "holds";
    const cls = classes.get(i);
    if (cls !== undefined && step >= 0 && state.steps[step].egraph) {
      const show = el("button", "e-graph", "show-class");
      show.type = "button";
      show.dataset.eclass = cls;
      show.title = `show e-class ${cls} in the e-graph`;
      show.onclick = () => showEgraph({ step }, cls);
      item.append(" ", show);
    }
    stack[stack.length - 1].list.append(item);
    const sub = el("ul");
    item.append(sub);
    stack.push({ depth, list: sub });
  });
  return root;
}

// ---- steps ----

function specFromForm() {
  const kind = $("target-kind").value;
  const name = $("target-name").value.trim();
  const number = (id) => Number($(id).value);
  const memory = $("lim-memory").value.trim();
  return {
    target: kind === "auto" ? { kind } : { kind, name },
    rules: [...$("rules").querySelectorAll("input:checked")].map((c) => c.value),
    limits: {
      iterations: number("lim-iterations"),
      enodes: number("lim-enodes"),
      time_s: number("lim-time"),
      memory_mb: memory === "" ? null : Number(memory),
    },
    filter: $("filter").value.trim(),
  };
}

function startEdit(i) {
  const spec = state.steps[i].spec;
  editing = i;
  $("form-title").textContent = `Edit step ${i + 1}`;
  $("run").textContent = "Rerun from this step";
  $("cancel-edit").hidden = false;
  $("target-kind").value = spec.target.kind;
  $("target-name").value = spec.target.name || "";
  const chosen = new Set(spec.rules);
  for (const c of $("rules").querySelectorAll("input")) c.checked = chosen.has(c.value);
  $("lim-iterations").value = spec.limits.iterations;
  $("lim-enodes").value = spec.limits.enodes;
  $("lim-time").value = spec.limits.time_s;
  $("lim-memory").value = spec.limits.memory_mb === null ? "" : spec.limits.memory_mb;
  $("filter").value = spec.filter;
}

function startInsert(i) {
  editing = i;
  inserting = true;
  $("form-title").textContent = `Insert a step before step ${i + 1}`;
  $("run").textContent = "Run from the new step";
  $("cancel-edit").hidden = false;
  $("target-kind").value = "auto";
}

function endEdit() {
  editing = null;
  inserting = false;
  $("form-title").textContent = "Add a step";
  $("run").textContent = "Run step";
  $("cancel-edit").hidden = true;
}

async function whileSearching(request) {
  $("run").disabled = true;
  $("stop").disabled = false;
  status("searching...", "busy");
  let polling = true;
  const poll = async () => {
    while (polling) {
      const p = await api("/api/progress");
      if (p.ok) drawProgress(p.data.points);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const watcher = poll();
  let answer = await request;
  if (answer.ok && answer.data.releasing) {
    // Stopped while egglog rebuilds: the session is busy until the search lets go.
    status("stopped; releasing the search...", "busy");
    $("stop").disabled = true;
    for (;;) {
      const p = await api("/api/progress");
      if (!p.ok || !p.data.running) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    answer = await api("/api/state");
  }
  polling = false;
  await watcher;
  const last = await api("/api/progress");
  if (last.ok) drawProgress(last.data.points);
  $("run").disabled = false;
  $("stop").disabled = true;
  return answer;
}

async function submitStep(event) {
  event.preventDefault();
  const body = { spec: specFromForm(), sketches: $("sketches").value };
  if (editing !== null) {
    body.index = editing;
    body.insert = inserting;
  }
  const answer = await whileSearching(api("/api/step", body));
  if (answer.ok) {
    endEdit();
    render(answer.data);
    const last = answer.data.steps[answer.data.steps.length - 1];
    const found = last && last.outcomes !== null && last.outcomes.every((o) => o.found);
    status(found ? "found" : "not found", found ? "ok" : "missed");
  } else {
    status(answer.data.error, "error");
  }
}

async function removeStep(i) {
  const answer = await whileSearching(api("/api/remove", { index: i }));
  if (answer.ok) {
    endEdit();
    render(answer.data);
    status(`step ${i + 1} removed`, "ok");
  } else {
    status(answer.data.error, "error");
  }
}

function drawProgress(points) {
  const plot = $("plot");
  plot.replaceChildren();
  if (!points.length) {
    $("progress-text").textContent = "";
    return;
  }
  const most = Math.max(...points.map((p) => p.enodes), 1);
  const path = points
    .map((p, i) => `${(400 * i) / Math.max(points.length - 1, 1)},${115 - (110 * p.enodes) / most}`)
    .join(" ");
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", path);
  plot.append(line);
  const p = points[points.length - 1];
  $("progress-text").textContent =
    `step ${p.step + 1}, iteration ${p.iteration}: ${p.enodes} e-nodes, ${p.eclasses} e-classes, ` +
    `${p.seconds.toFixed(2)} s, ${p.rss_mb.toFixed(0)} MB`;
}

// ---- sketches, saving, pictures, C ----

async function openSketches() {
  const path = $("sketch-files").value;
  if (!path) return;
  const answer = await api("/api/file", { path });
  if (answer.ok) $("sketches").value = answer.data.text;
  else status(answer.data.error, "error");
}

async function save(event) {
  event.preventDefault();
  const path = $("save-path").value.trim();
  let answer = await api("/api/save", { path });
  if (!answer.ok && /already exist/.test(answer.data.error) && confirm(answer.data.error + "?")) {
    answer = await api("/api/save", { path, overwrite: true });
  }
  const out = $("save-result");
  if (answer.ok) {
    out.textContent = "written: " + answer.data.written.join(", ");
    out.dataset.written = answer.data.written.join(" ");
    status("saved", "ok");
  } else {
    out.textContent = answer.data.error;
    out.dataset.written = "";
    status(answer.data.error, "error");
  }
}

// ---- the e-graph view ----

let egraphSource = null; // { step } or { path }: the e-graph on view
let egraphClasses = {}; // the e-class of each e-node drawn

// Shows the e-graph of `source` around e-class `cls` (by default the program's).
async function showEgraph(source, cls) {
  egraphSource = source;
  const body = { ...source, depth: Number($("egraph-depth").value) || 8 };
  if (cls) body.class = cls;
  const answer = await api("/api/egraph", body);
  if (!answer.ok) {
    $("egraph").replaceChildren(el("div", answer.data.error, "error"));
    $("egraph-info").textContent = "";
    return;
  }
  const v = answer.data;
  egraphClasses = v.class_of;
  $("egraph").innerHTML = v.svg;
  $("egraph").dataset.centre = v.centre;
  $("egraph-info").textContent =
    `around e-class ${v.centre}: ${v.shown[0]} of ${v.total[0]} e-classes, ` +
    `${v.shown[1]} of ${v.total[1]} e-nodes. Click an e-node to centre the view on its e-class.`;
}

// A click on an e-node of the picture centres the view on its e-class.
function egraphClick(event) {
  const node = event.target.closest("g.node");
  const title = node && node.querySelector("title");
  const cls = title && egraphClasses[title.textContent];
  if (cls && egraphSource) showEgraph(egraphSource, cls);
}

function threads() {
  return $("threads").value.split(",").map((t) => Number(t.trim())).filter((t) => t > 0);
}

async function showC() {
  const answer = await api("/api/code", { sizes: $("sizes").value });
  $("c").textContent = answer.ok ? answer.data.c : answer.data.error;
}

async function bench() {
  const out = $("bench-result");
  out.textContent = "compiling, checking and timing...";
  out.dataset.valid = "";
  status("benchmarking...", "busy");
  const answer = await api("/api/bench", { sizes: $("sizes").value, threads: threads() });
  if (!answer.ok) {
    out.textContent = answer.data.error;
    out.dataset.valid = "false";
    status("bench failed", "error");
    return;
  }
  const table = el("table");
  const head = el("tr");
  for (const h of ["threads", "median ms", "GFLOP/s", "scalar ms", "speed-up", "reference", "max rel. error"]) {
    head.append(el("th", h));
  }
  table.append(head);
  for (const t of answer.data.timings) {
    const row = el("tr");
    const speedup = t.scalar_median_ms ? (t.scalar_median_ms / t.median_ms).toFixed(2) + "x" : "";
    const reference = t.reference_gflops
      ? `${t.reference_gflops.toFixed(1)} GFLOP/s (${t.reference_ratio.toFixed(2)}x)`
      : "";
    for (const cell of [t.threads, t.median_ms.toFixed(3), t.gflops.toFixed(2),
      t.scalar_median_ms ? t.scalar_median_ms.toFixed(3) : "", speedup, reference,
      t.max_rel_error.toExponential(2)]) {
      row.append(el("td", String(cell)));
    }
    table.append(row);
  }
  out.replaceChildren(el("div", `sizes ${answer.data.sizes.join(", ")}: valid (checked against the interpreter)`), table);
  out.dataset.valid = "true";
  status("benchmarked", "ok");
}

async function start() {
  $("step-form").onsubmit = submitStep;
  $("stop").onclick = () => api("/api/stop", {});
  $("cancel-edit").onclick = endEdit;
  $("sketch-files").onchange = openSketches;
  $("save-form").onsubmit = save;
  $("show-egraph").onclick = () => showEgraph({ step: Number($("egraph-step").value) });
  $("show-export").onclick = () => showEgraph({ path: $("export-path").value });
  $("egraph-root").onclick = () => egraphSource && showEgraph(egraphSource);
  $("typed").onchange = () => state && render(state);
  $("egraph").onclick = egraphClick;
  document.addEventListener("mouseover", outlineSubterm);
  $("egraph-zoom").onchange = () => $("egraph").classList.toggle("zoomed", $("egraph-zoom").checked);
  $("show-c").onclick = showC;
  $("bench").onclick = bench;
  const answer = await api("/api/state");
  if (answer.ok) {
    render(answer.data);
    status("ready", "ok");
  } else {
    status(answer.data.error, "error");
  }
  document.body.dataset.ready = "true";
}

start();
