// zen grid: a tile per live agent with its terminal (tmux's screen, live), a lane sidebar, one-click
// launch, status dots, finish / kill / files / land. Keys reach an agent only while its tile has
// the focus; they are sent in small batches and recorded by zen as input.sent.
"use strict";

const ZenGrid = (() => {
  const tiles = new Map();   // job -> {el, term, es}
  const drafts = new Set();  // jobs whose agent holds keys typed without Enter yet
  let shown = false;

  function tileFor(s) {
    const term = h("div", { class: "term", role: "application",
                            "aria-label": `terminal of ${s.name || s.job}: keys go to this agent; Ctrl+] leaves it`,
                            title: "click, then type: keys go to this agent (Ctrl+] leaves the terminal)" });
    const el = h("div", { class: "tile", dataset: { job: s.job } },
      h("header", {}, h("span", { class: "status" }), h("span", { class: "name" }),
        h("button", { type: "button", class: "pause", title: "pause / resume", onclick: () => toggle(s.job) }, "Pause"),
        h("button", { type: "button", class: "finish", onclick: () => control(s.job, "finish") }, "Finish"),
        h("button", { type: "button", class: "kill danger", onclick: () => control(s.job, "cancel") }, "Kill"),
        h("button", { type: "button", class: "files", onclick: () => ZenFiles.open(s.job) }, "Files"),
        h("button", { type: "button", class: "max", title: "enlarge", onclick: () => { el.classList.toggle("max"); refit(); } }, "⤢")),
      term);
    return { el, term, queue: [], timer: null, sending: false, es: null };
  }

  function onItems(job, t, items) {
    for (const item of items) {
      if (item.text) drafts.add(job);
      else if (["Enter", "C-c", "C-u"].includes(item.key)) drafts.delete(job);
      const last = t.queue[t.queue.length - 1];
      if (item.text && last && last.text) last.text += item.text; else t.queue.push(item);
    }
    clearTimeout(t.timer);
    t.timer = setTimeout(() => flush(job, t), 0);   // keys typed meanwhile wait for the POST in flight
  }

  // One POST at a time per tile: the server answers requests in parallel, so two batches in flight
  // at once could reach the agent in the wrong order (an Enter before the text typed ahead of it).
  // Keys typed meanwhile wait in the queue and go in the next batch.
  async function flush(job, t) {
    if (t.sending || !t.queue.length) return;
    t.sending = true;
    const items = t.queue.splice(0);
    try { await api("POST", `/sessions/${encodeURIComponent(job)}/keys`, { items }); }
    catch (e) { toast(e.message, true); }
    finally { t.sending = false; }
    flush(job, t);
  }

  async function toggle(job) {
    const s = Z.sessions.get(job);
    await control(job, s && s.state === "paused" ? "resume" : "pause");
  }

  function update(t, s) {
    const status = t.el.querySelector(".status");
    status.replaceChildren(stateBadge(s.state, s.reason, s));
    t.el.querySelector(".name").textContent = s.name || s.job;
    t.el.querySelector(".pause").textContent = s.state === "paused" ? "Resume" : "Pause";
  }

  function layout() {
    const grid = $("#grid");
    const want = Number($("#grid-cols").value) || Math.max(1, Math.ceil(Math.sqrt(tiles.size)));
    grid.style.setProperty("--cols", String(Math.min(want, Math.max(1, tiles.size))));
    $("#grid-empty").hidden = tiles.size > 0;
    refit();
  }

  function refit() { /* each terminal follows its tile by itself (a ResizeObserver in term.js) */ }

  // keep a tile for every live agent
  function sync() {
    const live = [...Z.sessions.values()].filter(s => LIVE.has(s.state));
    const ids = new Set(live.map(s => s.job));
    for (const [job, t] of tiles) {
      if (!ids.has(job)) { if (t.es) t.es.close(); t.el.remove(); tiles.delete(job); }
    }
    const grid = $("#grid");
    for (const s of live.sort((a, b) => (a.created_at || "").localeCompare(b.created_at || ""))) {
      let t = tiles.get(s.job);
      if (!t) {
        t = tileFor(s);
        tiles.set(s.job, t);
        grid.appendChild(t.el);   // in the page first: the terminal measures its cells there
        const tile = t;
        t.es = watchScreen(s.job, t.term, { sizePane: true, onItems: items => onItems(s.job, tile, items) });
      }
      update(t, s);
    }
    layout();
    renderLanes();
  }

  function renderLanes() {
    const byLane = new Map(Z.lanes.map(l => [l.name, []]));
    for (const s of Z.sessions.values()) {
      if (!byLane.has(s.lane)) byLane.set(s.lane || "(repo)", []);
      byLane.get(s.lane || "(repo)").push(s);
    }
    $("#lane-list").replaceChildren(...[...byLane.entries()].map(([lane, jobs]) => h("div", { class: "lane", dataset: { lane } },
      h("h3", {}, lane, " ", h("span", { class: "muted" }, `${jobs.filter(j => LIVE.has(j.state)).length} live`)),
      ...jobs.slice(-12).reverse().map(s => h("div", { class: "job", dataset: { job: s.job } },
        stateBadge(s.state, null, s), h("span", { class: "name", title: `${s.name || s.job} (${s.state})` }, s.name || s.job),
        s.review_branch && !LIVE.has(s.state)
          ? h("button", { type: "button", class: "land", onclick: () => control(s.job, "land") }, "Land") : null,
        s.worktree ? h("button", { type: "button", class: "files", onclick: () => ZenFiles.open(s.job) }, "Files") : null)))));
  }

  async function launch(e) {
    e.preventDefault();
    const f = new FormData(e.target);
    const body = { description: f.get("description"), lane: f.get("lane") || null, agent: f.get("agent") };
    if (await act("POST", "/tasks", body, "agent launched: it starts in a new worktree")) e.target.reset(), fillLaneSelects();
  }

  function show() { shown = true; sync(); }

  function onEvent() { if (shown) soon("grid", sync, 80); }

  document.addEventListener("DOMContentLoaded", () => {
    $("#launch").addEventListener("submit", launch);
    $("#grid-cols").addEventListener("change", layout);
    window.addEventListener("resize", refit);
    Z.onSessions.push(() => { if (shown) soon("grid", sync, 30); });
  });

  return { show, onEvent, tiles, hasDraft: job => drafts.has(job), clearDraft: job => drafts.delete(job) };
})();
