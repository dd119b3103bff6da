// zen dashboard: the outcome of each job and what needs you (issue 35).
// - outcome(s): a badge from the job's state.json: landed, exit code, signal, timeout, limit,
//   cancelled, guard denials. An exit-2 job is never a green "harvested".
// - the "Needs you" group at the top of Sessions: jobs waiting for input and pending approvals of
//   live jobs, each with what to do right there (reply, approve, deny, open); its count in the
//   tab's title; and, when the user opted in, a browser notification when a job starts needing you.
"use strict";

const ZenNeeds = (() => {
  let approvals = [];          // pending approval requests (GET /approvals)
  let known = null;            // keys of what needed you at the last render (null: not yet)

  // {text, tone, title}: tone ok | bad | warn | info
  function outcome(s) {
    if (!s) return null;
    const denied = (s.guard && s.guard.denied) || 0;
    const out = [];
    if (s.landed_commit) out.push({ text: "landed", tone: "info", title: `merged as ${s.landed_commit.slice(0, 10)}` });
    if (s.timed_out) out.push({ text: "timed out", tone: "bad", title: "the task's timeout passed; the agent was stopped" });
    else if (s.state === "failed" && /limit/i.test(s.reason || "")) out.push({ text: "limit", tone: "bad", title: s.reason });
    else if (s.cancelled) out.push({ text: "cancelled", tone: "warn", title: "stopped by a person" });
    else if (s.exit_signal) out.push({ text: `signal ${s.exit_signal}`, tone: "bad", title: "the agent was ended by a signal" });
    else if (s.exit_code !== null && s.exit_code !== undefined && !LIVE.has(s.state))
      out.push({ text: `exit ${s.exit_code}`, tone: s.exit_code === 0 ? "ok" : "bad", title: "the agent's exit status" });
    else if (s.state === "failed") out.push({ text: "failed", tone: "bad", title: s.reason || "" });
    if (denied) out.push({ text: `${denied} denied`, tone: "warn", title: "calls the guardian refused" });
    if (s.checks === "failed") out.push({ text: "check failed", tone: "bad", title: "a lane check failed on its work merged into the base (zen check)" });
    else if (s.checks === "passed") out.push({ text: "checks passed", tone: "ok", title: "the lane's checks passed on its work merged into the base" });
    else if (s.checks === "running") out.push({ text: "checking", tone: "info", title: "the lane's checks are running" });
    if (s.anomalies) out.push({ text: s.anomalies > 1 ? `${s.anomalies} anomalies` : "anomaly", tone: "warn",
                                title: s.anomaly || "far from this agent's baseline (zen anomalies)" });
    return out;
  }

  function bad(s) { return (outcome(s) || []).some(o => o.tone === "bad"); }

  function badges(s) {
    return h("span", { class: "badges" }, ...(outcome(s) || []).map(o =>
      h("span", { class: `badge ${o.tone}`, title: o.title || "" }, o.text)));
  }

  function jobName(job) { const s = Z.sessions.get(job); return (s && (s.name || s.job)) || job || "(shell)"; }

  // what needs a person now: [{key, job, kind, why, approval?}]
  function items() {
    const out = [];
    for (const s of Z.sessions.values()) {
      if (s.state === "waiting") out.push({ key: `w:${s.job}`, job: s.job, kind: "input",
                                            why: s.reason ? `waiting (${s.reason})` : "waiting for you" });
    }
    for (const a of approvals) {
      const s = Z.sessions.get(a.job);
      if (a.state !== "pending" || !(s && LIVE.has(s.state))) continue;
      out.push({ key: `a:${a.id}`, job: a.job, kind: "approval", why: `asks to run ${a.command || a.file_path || a.tool || ""}`,
                 approval: a });
    }
    return out;
  }

  function row(it) {
    const name = h("a", { href: `/agent/jobs/${encodeURIComponent(it.job)}`, class: "name",
                          onclick: e => { e.preventDefault(); route({ tab: "sessions", job: it.job }, true); } }, jobName(it.job));
    const acts = [];
    if (it.kind === "approval") {
      acts.push(h("button", { type: "button", class: "approve", onclick: () => decide(it.approval.id, "approve") }, "Approve"),
                h("button", { type: "button", class: "deny", onclick: () => decide(it.approval.id, "deny") }, "Deny"));
    } else {
      const input = h("input", { name: "reply", placeholder: "Reply…", autocomplete: "off", enterkeyhint: "send" });
      acts.push(h("form", { class: "reply", onsubmit: async e => {
        e.preventDefault();
        if (!input.value.trim()) return;
        if (await sendInput(it.job, input.value, false)) input.value = "";
      } }, input, h("button", { type: "submit" }, "Send")));
    }
    return h("li", { class: `need ${it.kind}`, dataset: { job: it.job, kind: it.kind } },
      h("div", { class: "what" }, name, h("span", { class: "muted why" }, it.why)), h("div", { class: "acts" }, ...acts));
  }

  function render() {
    const list = items();
    const box = $("#needs");
    if (box) {
      box.hidden = list.length === 0;
      $("#needs-count").textContent = String(list.length);
      // keep a reply being typed: rows are only rebuilt when what needs you changed
      const sig = list.map(i => i.key).join(" ");
      if (box.dataset.sig !== sig) {
        box.dataset.sig = sig;
        $("#needs-list").replaceChildren(...list.map(row));
      }
    }
    document.title = list.length ? `(${list.length}) zen: ${list.length === 1 ? "1 needs you" : `${list.length} need you`}` : "zen";
    const keys = new Set(list.map(i => i.key));
    if (known !== null) list.filter(i => !known.has(i.key)).forEach(notify);
    known = keys;
  }

  // -- notifications (opt-in: the browser asks once, on the user's click) --------------------------
  function wanted() { return localStorage.getItem("zen-notify") === "1" && "Notification" in window && Notification.permission === "granted"; }
  function notify(it) {
    if (!wanted()) return;
    try { new Notification(`${jobName(it.job)} needs you`, { body: it.why, tag: it.key }); } catch (e) { /* not in this browser */ }
  }
  async function toggleNotify() {
    if (!("Notification" in window)) { toast("This browser cannot show notifications.", true); return; }
    if (localStorage.getItem("zen-notify") === "1") { localStorage.removeItem("zen-notify"); syncButton(); return; }
    const p = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
    if (p === "granted") { localStorage.setItem("zen-notify", "1"); toast("You will be notified when a job needs you."); }
    else toast("Notifications are blocked for this page in the browser's settings.", true);
    syncButton();
  }
  function syncButton() {
    const b = $("#notify");
    if (b) { const on = localStorage.getItem("zen-notify") === "1"; b.textContent = on ? "Notifying" : "Notify me"; b.setAttribute("aria-pressed", String(on)); }
  }

  async function loadApprovals() {
    approvals = (await api("GET", "/approvals")).approvals;
    render();
  }
  function pendingFor(job) { return approvals.filter(a => a.job === job && a.state === "pending"); }

  document.addEventListener("DOMContentLoaded", () => {
    const b = $("#notify");
    if (b) b.addEventListener("click", toggleNotify);
    syncButton();
    Z.onSessions.push(() => soon("needs", render, 20));
  });

  return { outcome, badges, bad, render, loadApprovals, pendingFor, items };
})();
