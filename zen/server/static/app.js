// zen dashboard: tabs Sessions, Tasks, Guardrails, Metrics (the Grid is grid.js). Live by SSE:
// one EventSource on /api/v1/agent/events; each event refreshes what it can change, coalesced.
// Agent-supplied text is always set as textContent, never as HTML.
"use strict";

const API = "/api/v1/agent";
const Z = {
  sessions: new Map(),      // job id -> state.json
  selected: null,           // job shown in the Sessions detail
  lanes: [],
  tab: "sessions",
  source: null,
  onSessions: [],           // callbacks (grid.js)
};

// -- helpers ------------------------------------------------------------------------------------
function $(sel, root) { return (root || document).querySelector(sel); }
function h(tag, attrs, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") n.className = v;
    else if (k === "dataset") Object.assign(n.dataset, v);
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) n.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) n.append(kid instanceof Node ? kid : String(kid));
  return n;
}

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const r = await fetch(API + path, opts);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
  if (!r.ok) throw new Error(plain((data && data.error) || `The server answered ${r.status} to ${method} ${path}.`));
  return data;
}

// the server's sentences are the CLI's; on the page, say them as the page would
const PLAIN = [
  [/\s*\(zen status lists them\)/g, ""],
  [/\s*\(give the task as text, or - to read it from stdin\)/g, ": write what the agent should do"],
  [/\s*\(known lanes: ([^;)]*); add one with zen lane add\)/g, " (lanes here: $1)"],
  [/run `?zen accept`?/g, "use Accept"],
  [/\bzen (finish|cancel|pause|resume|land|harvest) \S+/g, "the $1 button"],
];
function plain(text) { return PLAIN.reduce((t, [re, to]) => t.replace(re, to), String(text)); }

let toastTimer = null;
function toast(text, isError) {
  const t = $("#toast");
  t.textContent = text;
  t.className = isError ? "error" : "";
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, isError ? 8000 : 3000);
}
async function act(method, path, body, done) {
  try { const r = await api(method, path, body); if (done) toast(done); return r; }
  catch (e) { toast(e.message, true); return null; }
}

function stateBadge(state, reason, s) {
  const bad = s && typeof ZenNeeds !== "undefined" && ZenNeeds.bad(s);
  return h("span", { class: `state s-${state}${bad ? " bad" : ""}` }, h("span", { class: "dot" }), state + (reason ? ` (${reason})` : ""));
}
function badges(s) { return typeof ZenNeeds !== "undefined" ? ZenNeeds.badges(s) : ""; }
function ago(ts) {
  if (!ts) return "-";
  const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 60) return `${Math.floor(s)}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  return `${Math.floor(s / 3600)}h ago`;
}
const LIVE = new Set(["starting", "working", "waiting", "paused"]);

// coalesce refreshes: many events in a burst cause one fetch
const timers = {};
function soon(key, fn, ms) {
  if (timers[key]) return;
  timers[key] = setTimeout(() => {
    delete timers[key];
    Promise.resolve().then(fn).catch(() => {});   // the server may be away: the next resync catches up
  }, ms === undefined ? 60 : ms);
}

// -- tabs and addresses --------------------------------------------------------------------------
// /agent (Sessions), /agent/<tab>, /agent/jobs/<id> (Sessions with that job open); Back and
// Forward move between them. An old #tab address still works.
const TABS = ["sessions", "tasks", "guardrails", "metrics", "grid", "machine"];
function where() {
  const m = location.pathname.match(/^\/agent\/jobs\/([^/]+)$/);
  if (m) return { tab: "sessions", job: decodeURIComponent(m[1]) };
  const t = location.pathname.match(/^\/agent\/([a-z]+)$/);
  if (t && TABS.includes(t[1])) return { tab: t[1], job: null };
  const hash = location.hash.slice(1);
  return { tab: TABS.includes(hash) ? hash : "sessions", job: null };
}
function urlOf(to) {
  if (to.job) return `/agent/jobs/${encodeURIComponent(to.job)}`;
  return to.tab === "sessions" ? "/agent" : `/agent/${to.tab}`;
}
function route(to, push) {
  const url = urlOf(to);
  if (push && location.pathname + location.hash !== url) history.pushState(to, "", url);
  else if (location.pathname !== url || location.hash) history.replaceState(to, "", url);
  showTab(to.tab, true);
  if (to.tab === "sessions") {
    if (to.job) select(to.job, true); else unselect();
  }
}
function showTab(name, routed) {
  if (!routed) { route({ tab: name, job: name === "sessions" ? Z.selected : null }, true); return; }
  Z.tab = name;
  document.querySelectorAll("#tabs button").forEach(b => {
    b.classList.toggle("active", b.dataset.tab === name);
    b.setAttribute("aria-selected", String(b.dataset.tab === name));
  });
  document.querySelectorAll("main .tab").forEach(s => { s.hidden = s.id !== `tab-${name}`; });
  const quiet = p => p.catch(e => toast(e.message, true));
  if (name === "tasks") quiet(loadTasks());
  if (name === "guardrails") quiet(loadGuardrails());
  if (name === "metrics") quiet(loadMetrics());
  if (name === "machine") quiet(loadMachine());
  if (name === "grid" && (typeof ZenGrid !== "undefined")) ZenGrid.show();
}

// -- status and kill switch ----------------------------------------------------------------------
async function loadStatus() {
  const s = await api("GET", "/status");
  $("#home").textContent = s.home;
  const sup = $("#supervisor");
  sup.textContent = s.supervisor.running ? `supervisor pid ${s.supervisor.pid}` : "supervisor not running";
  sup.className = "pill " + (s.supervisor.running ? "on" : "off");
  await loadKill();
}
async function loadKill() {
  const k = await api("GET", "/killswitch");
  $("#kill-banner").hidden = !k.engaged;
  $("#kill-reason").textContent = k.engaged ? `(${k.reason || "no reason"}, by ${k.by || "?"})` : "";
  $("#kill-engage").disabled = k.engaged;
}

// -- sessions -----------------------------------------------------------------------------------
async function loadSessions() {
  const r = await api("GET", "/sessions");
  Z.sessions = new Map(r.sessions.map(s => [s.job, s]));
  renderSessions();
}
async function refreshJob(job) {
  try {
    const d = await api("GET", `/sessions/${encodeURIComponent(job)}?events=0`);
    Z.sessions.set(job, d.session);
  } catch (e) { return; }
  renderSessions();
  if (Z.selected === job) renderDetail();
}
function renderSessions() {
  const body = $("#sessions tbody");
  const rows = [...Z.sessions.values()].sort((a, b) => (b.created_at || "").localeCompare(a.created_at || ""));
  body.replaceChildren(...rows.map(s => h("tr", {
    class: s.job === Z.selected ? "selected" : "", dataset: { job: s.job },
    onclick: () => route({ tab: "sessions", job: s.job }, true),
  }, h("td", {}, h("b", {}, s.name || s.job), h("div", { class: "muted" }, s.job)),
     h("td", {}, stateBadge(s.state, s.reason, s), " ", badges(s)), h("td", {}, s.agent || "-"), h("td", {}, s.lane || "-"),
     h("td", {}, s.turns), h("td", {}, ago(s.updated_at)))));
  $("#sessions-empty").hidden = rows.length > 0;
  Z.onSessions.forEach(fn => fn());
}

let detailScreen = null;
function unselect() {
  Z.selected = null;
  if (detailScreen) { detailScreen.close(); detailScreen = null; }
  $("#session-detail").hidden = true;
  renderSessions();
}
async function select(job) {
  Z.selected = job;
  renderSessions();
  $("#session-detail").hidden = false;
  $("#sd-missing").hidden = true;
  renderDetail();
  let d;
  try { d = await api("GET", `/sessions/${encodeURIComponent(job)}?events=200`); }
  catch (e) {
    if (Z.selected !== job) return;
    $("#sd-title").textContent = "";
    $("#sd-missing").textContent = `There is no job "${job}" here. It may have been removed; pick one from the list.`;
    $("#sd-missing").hidden = false;
    return;
  }
  if (Z.selected !== job) return;
  Z.sessions.set(job, d.session);
  ZenReview.noteEvents(job, d.events);
  renderDetail();
  const list = $("#sd-events");
  list.replaceChildren(...d.events.map(eventItem));
  list.scrollTop = list.scrollHeight;
  if (detailScreen) detailScreen.close();
  detailScreen = watchScreen(job, $("#sd-term"));
  if (window.matchMedia("(max-width: 700px)").matches) $("#session-detail").scrollIntoView();
}
// Send from a form: when keys were typed into the job's tile without Enter, they are still in
// the agent's input line; clear that line first so they are not sent in front of this text
async function sendInput(job, text, force) {
  if (typeof ZenGrid !== "undefined" && ZenGrid.hasDraft(job)) {
    // the line-clearing key is input too (the job reads as busy for a moment): a job that was
    // waiting before it still gets this text
    const waiting = (Z.sessions.get(job) || {}).state === "waiting";
    if (!await act("POST", `/sessions/${encodeURIComponent(job)}/keys`, { items: [{ key: "C-u" }] })) return null;
    ZenGrid.clearDraft(job);
    force = force || waiting;
  }
  return act("POST", `/sessions/${encodeURIComponent(job)}/input`, { text, force }, `sent to ${(Z.sessions.get(job) || {}).name || job}`);
}
function eventItem(ev) {
  const skip = new Set(["v", "seq", "ts", "job", "type", "actor", "task"]);
  const extra = Object.entries(ev).filter(([k]) => !skip.has(k)).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`);
  return h("li", { value: ev.seq }, `${(ev.ts || "").slice(11, 23)} ${ev.type} ${ev.actor} ${extra.join(" ")}`);
}
function renderDetail() {
  const s = Z.sessions.get(Z.selected);
  if (!s) return;
  $("#sd-title").replaceChildren(s.name || s.job, " ", stateBadge(s.state, s.reason, s), " ", badges(s));
  $("#sd-meta").replaceChildren(
    h("span", {}, `id ${s.job}`), h("span", {}, `agent ${s.agent}`), h("span", {}, `lane ${s.lane || "-"}`),
    h("span", {}, `turns ${s.turns}`), h("span", {}, `branch ${s.review_branch || s.branch || "-"}`),
    h("span", {}, `worktree ${s.worktree || "-"}`));
  const live = LIVE.has(s.state);
  const can = { pause: live && s.state !== "paused", resume: s.state === "paused", finish: live, cancel: s.state !== "cancelled" && s.state !== "harvested" && s.state !== "failed",
                harvest: !!s.worktree, land: !!s.review_branch && !live, files: !!s.worktree };
  document.querySelectorAll("#session-detail .controls button").forEach(b => { b.disabled = !can[b.dataset.act]; });
  ZenReview.show(s);
}
async function control(job, what) {
  if (what === "files") { ZenFiles.open(job); return; }
  const name = (Z.sessions.get(job) || {}).name || job;
  if (what === "cancel" && !confirm(`Kill ${name}? The agent is stopped now and its work so far harvested.`)) return;
  if (what === "finish" && !confirm(`Finish ${name}? The agent is asked to stop and its work is harvested.`)) return;
  if (what === "land" && !confirm(`Land ${job}: merge its review branch into the lane's base branch?`)) return;
  const DONE = { pause: "paused", resume: "resumed", finish: "finishing", cancel: "killed", harvest: "harvested", land: "landed" };
  const r = await act("POST", `/sessions/${encodeURIComponent(job)}/${what}`, undefined, `${name}: ${DONE[what] || what}`);
  if (r) refreshJob(job);
}

// a job's terminal drawn into `el` (term.js): live from the page's one stream, or the replay of
// an ended job's output; returns the view ({close()})
function watchScreen(job, el, opts) { return ZenTerm.open(el, job, opts); }

// -- tasks ----------------------------------------------------------------------------------------
async function loadTasks() {
  const r = await api("GET", "/tasks");
  const queued = r.tasks.filter(t => t.state === "pending" || t.state === "queued");
  const rest = r.tasks.filter(t => !(t.state === "pending" || t.state === "queued")).reverse();
  $("#queue tbody").replaceChildren(...queued.map(t => h("tr", { dataset: { task: t.id }, onclick: () => taskDetail(t.id) },
    h("td", {}, h("b", {}, t.name), h("div", { class: "muted" }, t.id)), h("td", {}, stateBadge(t.state)),
    h("td", {}, t.agent), h("td", {}, t.lane || t.repo || "-"), h("td", {}, t.priority),
    h("td", {}, h("button", { type: "button", onclick: e => { e.stopPropagation(); dequeue(t.id); } }, "Cancel")))));
  $("#history tbody").replaceChildren(...rest.map(t => h("tr", { dataset: { task: t.id }, onclick: () => taskDetail(t.id) },
    h("td", {}, h("b", {}, t.name), h("div", { class: "muted" }, t.id)),
    h("td", {}, stateBadge(t.state, null, Z.sessions.get(t.id)), " ", badges(Z.sessions.get(t.id))),
    h("td", {}, t.agent), h("td", {}, t.lane || t.repo || "-"), h("td", {}, ago(t.created_at)))));
}
async function dequeue(id) {
  if (await act("DELETE", `/queue/${encodeURIComponent(id)}`, undefined, "taken out of the queue")) loadTasks();
}
async function taskDetail(id) {
  const d = await api("GET", `/tasks/${encodeURIComponent(id)}`);
  $("#task-detail").hidden = false;
  $("#td-title").replaceChildren(d.task.name, " ", stateBadge(d.task.state));
  $("#td-prompt").textContent = d.task.prompt;
  $("#td-review").textContent = d.review || "(not harvested yet)";
  $("#td-log").textContent = d.log_tail || "(no output yet)";
}
function fillLaneSelects() {
  document.querySelectorAll("select[name=lane]").forEach(sel => {
    const keep = sel.value;
    sel.replaceChildren(...Z.lanes.map(l => h("option", { value: l.name }, l.name)));
    if (keep) sel.value = keep;
  });
}
async function loadLanes() {
  Z.lanes = (await api("GET", "/lanes")).lanes;
  fillLaneSelects();
}
async function newTask(e) {
  e.preventDefault();
  const f = new FormData(e.target);
  const body = { description: f.get("description"), lane: f.get("lane") || null, agent: f.get("agent"),
                 priority: Number(f.get("priority")) };
  if (f.get("name")) body.name = f.get("name");
  if (f.get("timeout")) body.timeout = f.get("timeout");
  if (f.get("model")) body.config = { model: f.get("model") };
  if (f.get("depends_on")) body.depends_on = String(f.get("depends_on")).split(",").map(x => x.trim()).filter(Boolean);
  const t = await act("POST", "/tasks", body, "task queued");
  if (t) { e.target.reset(); fillLaneSelects(); loadTasks(); }
}

// -- guardrails ---------------------------------------------------------------------------------
let policySha = null;
async function loadGuardrails() {
  const g = await api("GET", "/guardrails");
  const u = g.usage;
  const card = (label, value) => h("div", { class: "card" }, h("b", {}, value), label);
  $("#usage").replaceChildren(
    card("live agents / limit", `${u.live_agents} / ${u.max_concurrent_tasks}`),
    card("queued / queue limit", `${u.queued} / ${u.max_queue_size}`),
    card("guard allowed", u.guard_allowed), card("guard denied", u.guard_denied),
    card("automatic starts / breaker limit", `${u.breaker.automatic_in_window} / ${u.breaker.limit}${u.breaker.open ? " OPEN" : ""}`),
    card("kill switch", g.kill_switch ? "ENGAGED" : "off"));
  const rows = g.approvals;
  $("#approvals tbody").replaceChildren(...rows.map(a => h("tr", { dataset: { approval: a.id } },
    h("td", {}, h("code", {}, a.id)), h("td", {}, a.job ? ((Z.sessions.get(a.job) || {}).name || a.job) : "-"), h("td", {}, h("code", {}, a.command || a.file_path || "")),
    h("td", {}, a.rule || "-"), h("td", {}, a.state),
    h("td", {}, a.state === "pending" && a.job && !LIVE.has((Z.sessions.get(a.job) || {}).state) ? h("span", { class: "muted" }, "job ended")
      : a.state === "pending" ? [
      h("button", { type: "button", class: "approve", onclick: () => decide(a.id, "approve") }, "Approve"), " ",
      h("button", { type: "button", class: "deny", onclick: () => decide(a.id, "deny") }, "Deny")] : ""))));
  $("#approvals-empty").hidden = rows.length > 0;
  $("#denied tbody").replaceChildren(...g.recent_denied.map(d => h("tr", {},
    h("td", {}, ago(d.ts)), h("td", {}, d.job || "(shell)"), h("td", {}, h("code", {}, d.command || d.file_path || d.tool || "")),
    h("td", {}, d.rule || "-"), h("td", {}, d.reason || ""))));
  $("#switches").replaceChildren(...Object.entries(g.require_approval).map(([k, v]) =>
    h("label", {}, h("input", { type: "checkbox", checked: v, onchange: e => setSwitch(k, e.target.checked) }),
      `ask a human before ${k.replace(/_/g, " ")}`)));
  if (document.activeElement !== $("#policy")) $("#policy").value = g.yaml;
  policySha = g.sha;
  $("#policy-error").textContent = g.valid ? "" : g.error;
  $("#autonomy tbody").replaceChildren(...g.autonomy.map(d => h("tr", {},
    h("td", {}, d.domain), h("td", {}, d.level), h("td", {}, d.effective_level))));
}
async function decide(id, verdict) {
  const said = verdict === "approve" ? "approved" : "denied";
  if (await act("POST", `/approvals/${encodeURIComponent(id)}/${verdict}`, undefined, `${said}: ${id}`)) {
    ZenNeeds.loadApprovals().catch(() => {});
    if (Z.tab === "guardrails") loadGuardrails();
  }
}
async function setSwitch(name, on) {
  if (await act("PUT", "/guardrails", { changes: { require_approval: { [name]: on } } }, "policy saved")) loadGuardrails();
}
async function savePolicy() {
  try {
    await api("PUT", "/guardrails", { yaml: $("#policy").value, expected_sha: policySha });
    $("#policy-error").textContent = "";
    toast("policy saved");
    $("#policy").blur();
    loadGuardrails();
  } catch (e) { $("#policy-error").textContent = e.message; }
}

// -- metrics --------------------------------------------------------------------------------------
// every agent session of this user, zen's or not (issue 39; GET /agent-sessions = zen sessions)
async function loadMachine() {
  const r = await api("GET", "/agent-sessions?since=30d");
  const n = x => Math.round(x || 0).toLocaleString();
  const tokens = s => (s.input_tokens || 0) + (s.output_tokens || 0) + (s.cache_read_input_tokens || 0) + (s.cache_creation_input_tokens || 0);
  const t = r.total || {};
  const card = (label, value) => h("div", { class: "card" }, h("b", {}, String(value)), label);
  $("#machine-totals").replaceChildren(card("sessions", t.sessions || 0), card("run by zen", t.zen || 0),
    card("tokens", n(tokens(t))), card("cost (USD)", (t.cost_usd || 0).toFixed(4)));
  $("#machine-rows").replaceChildren(...r.sessions.map(s => h("tr", { "data-session": s.session },
    h("td", {}, s.agent), h("td", {}, s.project || "-"), h("td", { title: s.path }, s.session.slice(0, 12)),
    h("td", {}, (s.last_activity || "").replace("T", " ").slice(0, 19)), h("td", {}, String(s.turns)),
    h("td", {}, n(tokens(s))), h("td", {}, (s.cost_usd || 0).toFixed(4)),
    h("td", {}, s.job ? h("a", { href: `/agent/jobs/${encodeURIComponent(s.job)}` }, s.job) : "by hand"))));
}

async function loadMetrics() {
  const m = await api("GET", "/metrics");
  const t = m.total;
  const card = (label, value) => h("div", { class: "card" }, h("b", {}, value), label);
  const n = x => Math.round(x).toLocaleString();
  $("#totals").replaceChildren(card("active sessions", m.active_sessions), card("tasks in progress", m.tasks_in_progress),
    card("input tokens", n(t.input_tokens)), card("output tokens", n(t.output_tokens)),
    card("cost (USD)", t.cost_usd.toFixed(4)), card("API calls", t.api_calls),
    card("error rate", `${(100 * (t.error_rate || 0)).toFixed(1)}%`), card("tool calls", t.tool_calls));
  const jobs = m.jobs.slice(-20);
  const labels = jobs.map(j => (Z.sessions.get(j.job) || {}).name || j.job);
  const col = k => jobs.map(j => j[k] || 0);
  ZenCharts.bars($("#chart-tokens"), labels, [{ name: "input", values: col("input_tokens") }, { name: "output", values: col("output_tokens") },
    { name: "cache read", values: col("cache_read_tokens") }], { stacked: true });
  ZenCharts.bars($("#chart-cost"), labels, [{ name: "cost", values: col("cost_usd") }]);
  ZenCharts.bars($("#chart-api"), labels, [{ name: "calls", values: col("api_calls") }, { name: "errors", values: col("api_errors") }]);
  ZenCharts.bars($("#chart-files"), labels, [{ name: "reads", values: col("file_reads") }, { name: "writes", values: col("file_writes") },
    { name: "deletes", values: col("file_deletes") }], { stacked: true });
  ZenCharts.bars($("#chart-guard"), labels, [{ name: "allowed", values: col("guard_allowed") }, { name: "denied", values: col("guard_denied") }]);
  ZenCharts.bars($("#chart-latency"), labels, [{ name: "turn p50", values: col("turn_latency_p50_s") }]);
}

// -- files (the grid's file browser and editor, also from Sessions) ----------------------------------
const ZenFiles = {
  job: null, path: null, sha: null,
  async open(job) {
    this.job = job;
    $("#files").hidden = false;
    $("#files-title").textContent = `Files of ${(Z.sessions.get(job) || {}).name || job}`;
    const r = await act("GET", `/sessions/${encodeURIComponent(job)}/files`);
    if (!r) return;
    $("#file-list").replaceChildren(...r.files.map(f => h("li", { dataset: { path: f.path }, onclick: () => this.edit(f.path) },
      h("span", { class: "st" }, f.status || " "), f.path)));
    this.diff();
  },
  async diff() {
    if (!this.leave()) return;
    $("#editor").hidden = true;
    const v = $("#diff-view");
    v.hidden = false;
    const r = await act("GET", `/sessions/${encodeURIComponent(this.job)}/diff`);
    if (!r) return;
    v.replaceChildren(...(r.diff || "(no changes against the base)").split("\n").map(line => h("span", {
      class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "" }, line + "\n")));
  },
  async edit(path) {
    if (!this.leave()) return;
    const r = await act("GET", `/sessions/${encodeURIComponent(this.job)}/file?path=${encodeURIComponent(path)}`);
    if (!r) return;
    this.path = path; this.sha = r.sha; this.original = r.content;
    $("#diff-view").hidden = true;
    $("#editor").hidden = false;
    $("#editor-path").textContent = path + (r.binary ? " (binary: not editable)" : "");
    $("#editor-save").disabled = r.binary;
    if (typeof ZenCM === "undefined") {     // the plain textarea when the editor bundle is missing
      $("#editor-text").hidden = false;
      $("#editor-text").value = r.content;
      $("#editor-text").disabled = r.binary;
      return;
    }
    $("#editor-text").hidden = true;
    if (this.view) this.view.destroy();
    const L = ZenCM.languages;
    const ext = (path.split(".").pop() || "").toLowerCase();
    const lang = { py: L.python, js: L.javascript, mjs: L.javascript, ts: () => L.javascript({ typescript: true }),
                   md: L.markdown, json: L.json, yaml: L.yaml, yml: L.yaml }[ext];
    this.view = new ZenCM.EditorView({
      parent: $("#editor-cm"),
      state: ZenCM.EditorState.create({ doc: r.content, extensions: [
        ZenCM.basicSetup, ...(lang ? [lang()] : []), ZenCM.EditorState.readOnly.of(!!r.binary),
        ZenCM.EditorView.updateListener.of(u => { if (u.docChanged) this.mark(); }),
        ZenCM.keymap.of([{ key: "Mod-s", run: () => { this.save(); return true; } }]),
      ] }),
    });
    this.mark();
  },
  text() { return this.view ? this.view.state.doc.toString() : $("#editor-text").value; },
  dirty() { return this.path !== null && !$("#editor").hidden && this.text() !== this.original; },
  mark() { $("#editor-path").classList.toggle("dirty", this.dirty()); },
  leave() { return !this.dirty() || confirm(`Leave ${this.path} without saving your changes?`); },
  async save() {
    const content = this.text();
    const r = await act("PUT", `/sessions/${encodeURIComponent(this.job)}/file`,
      { path: this.path, content, expected_sha: this.sha }, `saved ${this.path}`);
    if (r) { this.sha = r.sha; this.original = content; this.mark(); }
  },
  close() { if (this.leave()) { $("#files").hidden = true; this.path = null; } },
};

// -- live updates ------------------------------------------------------------------------------------
function setLive(text, on) { const l = $("#live"); l.textContent = text; l.className = "pill " + (on ? "on" : "off"); }

// One EventSource for the whole page (events, hints and every live agent's screen). When it
// (re)connects, everything the page shows is read again before it says "live": whatever
// happened while it was away (a job ended, the server restarted) is on the page by then.
function connect() {
  const es = new EventSource(`${API}/stream`);
  Z.source = es;
  Z.connected = false;
  es.onopen = async () => {
    Z.connected = true;
    setLive("syncing…", false);
    try {
      await resync();
      if (Z.connected) setLive("live", true);
    } catch (e) { setLive("reconnecting…", false); }
  };
  es.onerror = () => { Z.connected = false; setLive("reconnecting…", false); };
  es.onmessage = m => {
    const ev = JSON.parse(m.data);
    soon(`job:${ev.job}`, () => refreshJob(ev.job));
    if (Z.selected === ev.job) {
      ZenReview.noteEvents(ev.job, [ev]);
      const list = $("#sd-events");
      list.appendChild(eventItem(ev));
      list.scrollTop = list.scrollHeight;
    }
    if (Z.tab === "tasks") soon("tasks", loadTasks, 200);
    if (Z.tab === "metrics") soon("metrics", loadMetrics, 500);
    if (Z.tab === "guardrails" && ev.type.startsWith("guard.")) soon("guardrails", loadGuardrails, 300);
    if ((typeof ZenGrid !== "undefined")) ZenGrid.onEvent(ev);
  };
  es.addEventListener("seed", m => ZenTerm.seed(JSON.parse(m.data)));
  es.addEventListener("out", m => ZenTerm.out(JSON.parse(m.data)));
  es.addEventListener("ended", m => ZenTerm.ended(JSON.parse(m.data)));
  es.addEventListener("approvals", () => {
    soon("approvals", ZenNeeds.loadApprovals, 50);
    if (Z.tab === "guardrails") soon("guardrails", loadGuardrails, 100);
  });
  es.addEventListener("killswitch", () => soon("kill", loadKill, 50));
  es.addEventListener("spool", () => { if (Z.tab === "tasks") soon("tasks", loadTasks, 100); });
  es.addEventListener("reset", () => soon("resync", resync, 0));
}

async function resync() {
  await Promise.all([loadStatus(), loadSessions(), loadLanes(), ZenNeeds.loadApprovals()]);
  if (Z.selected) refreshJob(Z.selected);
  const reload = { tasks: loadTasks, guardrails: loadGuardrails, metrics: loadMetrics }[Z.tab];
  if (reload) await reload();
}

async function start() {
  document.querySelectorAll("#tabs button").forEach(b => b.addEventListener("click", () => showTab(b.dataset.tab)));
  window.addEventListener("popstate", () => route(where(), false));
  document.querySelectorAll("#session-detail .controls button").forEach(b =>
    b.addEventListener("click", () => control(Z.selected, b.dataset.act)));
  $("#sd-input").addEventListener("submit", async e => {
    e.preventDefault();
    const text = $("#sd-text").value;
    if (!text.trim()) return;
    if (await sendInput(Z.selected, text, $("#sd-force").checked)) $("#sd-text").value = "";
  });
  $("#new-task").addEventListener("submit", newTask);
  $("#policy-save").addEventListener("click", savePolicy);
  $("#kill-engage").addEventListener("click", async () => {
    const reason = prompt("Engage the kill switch: every domain becomes observe-only at once. Reason?");
    if (reason !== null && await act("POST", "/killswitch", { reason: reason || "from the dashboard" }, "kill switch engaged")) loadKill();
  });
  $("#kill-release").addEventListener("click", async () => {
    if (confirm("Release the kill switch?") && await act("DELETE", "/killswitch", undefined, "kill switch released")) loadKill();
  });
  $("#logout").addEventListener("click", async () => {
    // the server forgets this browser's session; the reload shows the logged-out page
    await fetch("/agent/logout", { method: "POST", credentials: "same-origin" });
    location.reload();
  });
  $("#files-close").addEventListener("click", () => ZenFiles.close());
  $("#files-diff").addEventListener("click", () => ZenFiles.diff());
  $("#editor-save").addEventListener("click", () => ZenFiles.save());
  connect();   // its first open loads the snapshot; events meanwhile are not missed
  setInterval(() => soon("status", loadStatus, 0), 10000);
  route(where(), false);
}

document.addEventListener("DOMContentLoaded", () => start().catch(e => toast(e.message, true)));
