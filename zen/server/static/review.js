// zen dashboard: review a harvested job in the page (issue 35): its diff against the commit it
// started from, Accept, Reject with the correction (recorded as `zen reject --correction`; an
// agent still running gets it typed in), and Land (the detail's own button).
"use strict";

const ZenReview = (() => {
  const verdicts = new Map();   // job -> "accepted" | "rejected"

  function noteEvents(job, events) {
    for (const ev of events) {
      if (ev.type === "review.accepted") verdicts.set(job, "accepted");
      if (ev.type === "review.rejected") verdicts.set(job, "rejected");
    }
  }

  let queued = 0;               // comments waiting for a send, for the shown job
  let target = null;            // {path, line} the comment box is for

  // each added or kept line of a unified diff, with its file and its line in the new version
  function numbered(diff) {
    let path = null, line = 0;
    return diff.split("\n").map(text => {
      let at = null;
      if (text.startsWith("+++ ")) path = text.slice(4).replace(/^b\//, "");
      else if (text.startsWith("@@")) { const m = /\+(\d+)/.exec(text); line = m ? Number(m[1]) : 0; }
      else if (text.startsWith("+") || text.startsWith(" ")) { at = path && path !== "/dev/null" ? { path, line } : null; line++; }
      return { text, at };
    });
  }

  function pick(at) {
    target = at;
    $("#sd-comment").style.display = "";
    $("#sd-comment-where").textContent = `${at.path}:${at.line}`;
    $("#sd-comment-text").focus();
  }

  async function show(s) {
    const box = $("#sd-review");
    // a harvested job's work can be commented while its agent waits; the verdict comes once it ended
    const ready = s && s.review_branch && (!LIVE.has(s.state) || s.state === "waiting");
    box.hidden = !ready;
    if (!ready) return;
    // (style, not the hidden attribute: a .row is display:flex, which the attribute does not beat)
    $("#sd-verdicts").style.display = LIVE.has(s.state) ? "none" : "";
    $("#sd-reject").style.display = LIVE.has(s.state) ? "none" : "";
    const v = verdicts.get(s.job);
    $("#sd-verdict").textContent = v ? `(${v})` : "";
    $("#sd-accept").disabled = !!v;
    $("#sd-reject button").disabled = !!v;
    if (box.dataset.job === s.job) return;
    box.dataset.job = s.job;
    const view = $("#sd-diff");
    view.textContent = "loading the diff…";
    try {
      const r = await api("GET", `/sessions/${encodeURIComponent(s.job)}/diff`);
      if (Z.selected !== s.job) return;
      const live = LIVE.has(s.state);
      view.replaceChildren(...numbered(r.diff || "(no changes against the base)").map(({ text, at }) => {
        const line = h("span", { class: text.startsWith("+") ? "add" : text.startsWith("-") ? "del"
                                        : text.startsWith("@@") ? "hunk" : "" }, text + "\n");
        if (at && live) {
          line.dataset.path = at.path; line.dataset.line = String(at.line);
          line.classList.add("commentable"); line.title = "comment on this line";
          line.addEventListener("click", () => pick(at));
        }
        return line;
      }));
    } catch (e) { view.textContent = e.message; }
  }

  async function accept() {
    const job = Z.selected;
    const r = await act("POST", `/sessions/${encodeURIComponent(job)}/accept`, undefined, "accepted");
    if (r) { verdicts.set(job, "accepted"); show(Z.sessions.get(job)); }
  }

  async function reject(e) {
    e.preventDefault();
    const job = Z.selected;
    const correction = $("#sd-correction").value.trim();
    if (!correction) { toast("Say what was wrong: the correction is what a rejection records.", true); return; }
    const r = await act("POST", `/sessions/${encodeURIComponent(job)}/reject`, { correction });
    if (!r) return;
    toast(r.sent ? "rejected; the correction was sent to the agent" : `rejected; domain ${r.domain} is now ${r.demoted_to || r.level}`);
    verdicts.set(job, "rejected");
    $("#sd-correction").value = "";
    show(Z.sessions.get(job));
  }

  async function comment(e) {
    e.preventDefault();
    const job = Z.selected, text = $("#sd-comment-text").value.trim();
    if (!target || !text) return;
    const r = await act("POST", `/sessions/${encodeURIComponent(job)}/comments`, { path: target.path, line: target.line, text });
    if (!r) return;
    queued = r.queued;
    $("#sd-comment-text").value = "";
    $("#sd-comment").style.display = "none";
    $("#sd-send-comments").style.display = "";
    $("#sd-send-comments").textContent = `Send ${queued} comment${queued === 1 ? "" : "s"}`;
    toast(`queued on ${r.path}:${r.line}`);
  }

  async function sendComments() {
    const job = Z.selected;
    const r = await act("POST", `/sessions/${encodeURIComponent(job)}/comments/send`);
    if (!r) return;
    queued = 0;
    $("#sd-send-comments").style.display = "none";
    toast(`sent ${r.count} comment${r.count === 1 ? "" : "s"} (review round ${r.round})`);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#sd-accept").addEventListener("click", accept);
    $("#sd-reject").addEventListener("submit", reject);
    $("#sd-comment").addEventListener("submit", comment);
    $("#sd-send-comments").addEventListener("click", sendComments);
  });

  return { show, noteEvents };
})();
