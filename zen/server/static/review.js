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

  async function show(s) {
    const box = $("#sd-review");
    const ready = s && s.review_branch && !LIVE.has(s.state);
    box.hidden = !ready;
    if (!ready) return;
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
      view.replaceChildren(...(r.diff || "(no changes against the base)").split("\n").map(line => h("span", {
        class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "" }, line + "\n")));
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

  document.addEventListener("DOMContentLoaded", () => {
    $("#sd-accept").addEventListener("click", accept);
    $("#sd-reject").addEventListener("submit", reject);
  });

  return { show, noteEvents };
})();
