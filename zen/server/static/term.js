// zen terminals: xterm.js (vendor/xterm, the terminal of VS Code) fed the pane's own bytes.
// A live job's terminal starts from its seed (tmux's scrollback and screen, the cursor, the size)
// and then writes what the pane printed, both from the page's one stream (`seed`, `out`,
// `ended`). A Grid tile's terminal follows the tile: its size goes to tmux (resize-window) and
// the agent redraws. Keys go to the agent while the terminal has the focus; Ctrl+] leaves it
// (Tab and Esc belong to the agent). An ended job's terminal is a read-only replay of its output.
"use strict";

const ZenTerm = (() => {
  const bufs = new Map();    // job -> {seed, chunks, size, stale}: what a new view of it starts from
  const views = new Map();   // job -> Set of views
  const KEEP = 4 << 20;      // characters of output kept per job for views opened later
  const THEME = { background: "#11151c", foreground: "#d6dde8", cursor: "#d6dde8", selectionBackground: "#3b4a63" };

  // xterm's input (bytes as a string) -> items for POST .../keys ({text} or {key}); what has no
  // tmux key name (mouse reports, unknown sequences) is dropped
  const SEQ = { "\r": "Enter", "\x7f": "BSpace", "\b": "BSpace", "\t": "Tab", "\x1b[Z": "BTab",
    "\x1b[A": "Up", "\x1b[B": "Down", "\x1b[C": "Right", "\x1b[D": "Left",
    "\x1bOA": "Up", "\x1bOB": "Down", "\x1bOC": "Right", "\x1bOD": "Left",
    "\x1b[H": "Home", "\x1b[F": "End", "\x1bOH": "Home", "\x1bOF": "End", "\x1b[1~": "Home", "\x1b[4~": "End",
    "\x1b[5~": "PPage", "\x1b[6~": "NPage", "\x1b[3~": "DC", "\x1b[2~": "IC",
    "\x1bOP": "F1", "\x1bOQ": "F2", "\x1bOR": "F3", "\x1bOS": "F4", "\x1b[15~": "F5", "\x1b[17~": "F6",
    "\x1b[18~": "F7", "\x1b[19~": "F8", "\x1b[20~": "F9", "\x1b[21~": "F10", "\x1b[23~": "F11", "\x1b[24~": "F12" };
  function dataItems(data) {
    const items = [];
    const text = t => { const last = items[items.length - 1]; if (last && last.text !== undefined) last.text += t; else items.push({ text: t }); };
    const paste = data.match(/^\x1b\[200~([\s\S]*)\x1b\[201~$/);
    if (paste) { if (paste[1]) text(paste[1].replace(/\r\n?/g, "\n")); return items; }
    let i = 0;
    while (i < data.length) {
      const c = data[i];
      if (c === "\x1b") {
        const m = data.slice(i).match(/^\x1b(\[[0-9;<?]*[ -\/]*[@-~]|O[A-Za-z])/);
        if (m) { if (SEQ[m[0]]) items.push({ key: SEQ[m[0]] }); i += m[0].length; continue; }
        const next = data[i + 1];
        if (next && /[a-z0-9]/i.test(next)) { items.push({ key: `M-${next.toLowerCase()}` }); i += 2; continue; }
        items.push({ key: "Escape" }); i += 1; continue;
      }
      if (SEQ[c]) { items.push({ key: SEQ[c] }); i += 1; continue; }
      const code = c.charCodeAt(0);
      if (code >= 1 && code <= 26) { items.push({ key: `C-${String.fromCharCode(96 + code)}` }); i += 1; continue; }
      if (code < 32) { i += 1; continue; }
      text(c); i += 1;
    }
    return items;
  }

  // the visible rows as plain text, on the element (what a reader or a test sees)
  function mirror(v) {
    if (v.mirrorQueued) return;
    v.mirrorQueued = true;
    requestAnimationFrame(() => {
      v.mirrorQueued = false;
      const b = v.term.buffer.active;
      const rows = [];
      for (let y = b.viewportY; y < b.viewportY + v.term.rows; y++) {
        const line = b.getLine(y);
        rows.push(line ? line.translateToString(true) : "");
      }
      v.el.dataset.text = rows.join("\n");
      v.el.dataset.cols = String(v.term.cols);
      v.el.dataset.rows = String(v.term.rows);
    });
  }
  function write(v, data) { if (data) v.term.write(data, () => mirror(v)); }

  function applySeed(v, s) {
    v.term.reset();
    if (s.width && s.height) v.term.resize(s.width, s.height);
    write(v, s.data + `\x1b[${(s.cursor_y || 0) + 1};${(s.cursor_x || 0) + 1}H`);
    v.seeded = s.offset;
    v.term.options.disableStdin = !s.live;
    fitLater(v);
  }

  // a tile's terminal follows its element; a Grid tile also makes the pane that size
  function fitLater(v) {
    clearTimeout(v.fitTimer);
    v.fitTimer = setTimeout(() => fitNow(v), 120);
  }
  function fitNow(v) {
    if (!v.el.isConnected || !v.el.clientWidth || !v.el.clientHeight) return;
    const want = v.fit.proposeDimensions();
    if (!want || !want.cols || !want.rows) return;
    const cols = Math.max(20, Math.min(400, want.cols)), rows = Math.max(5, Math.min(150, want.rows));
    if (cols !== v.term.cols || rows !== v.term.rows) v.term.resize(cols, rows);
    mirror(v);
    const s = Z.sessions.get(v.job);
    if (!v.opts.sizePane || !(s && LIVE.has(s.state)) || v.term.options.disableStdin) return;
    if (v.sent === `${cols}x${rows}`) return;
    v.sent = `${cols}x${rows}`;
    api("POST", `/sessions/${encodeURIComponent(v.job)}/terminal/size`, { cols, rows }).catch(() => { v.sent = null; });
  }

  // a terminal for `job` in `el`; opts: {sizePane, onItems(items)}; returns the view ({close()})
  function open(el, job, opts) {
    opts = opts || {};
    el.replaceChildren();
    const term = new Terminal({ scrollback: 5000, fontSize: 12, convertEol: false, cursorBlink: false, theme: THEME,
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace", allowProposedApi: false,
      screenReaderMode: false, disableStdin: true });
    const fit = new FitAddon.FitAddon();
    term.loadAddon(fit);
    term.open(el);
    const v = { el, job, term, fit, opts, seeded: 0, sent: null };
    term.attachCustomKeyEventHandler(e => {
      if (e.type === "keydown" && e.ctrlKey && e.key === "]") {
        term.blur();
        const next = el.closest(".tile, .detail");
        const b = next && next.querySelector("button:not([disabled])");
        if (b) b.focus();
        return false;
      }
      return true;
    });
    term.onData(d => { if (!term.options.disableStdin && opts.onItems) { const items = dataItems(d); if (items.length) opts.onItems(items); } });
    term.onScroll(() => mirror(v));
    term.textarea && term.textarea.setAttribute("aria-label", el.getAttribute("aria-label") || `terminal of ${job}`);
    v.resizer = new ResizeObserver(() => fitLater(v));
    v.resizer.observe(el);
    let set = views.get(job);
    if (!set) { set = new Set(); views.set(job, set); }
    set.add(v);
    start(v);
    v.close = () => { set.delete(v); v.resizer.disconnect(); clearTimeout(v.fitTimer); term.dispose(); };
    return v;
  }

  async function start(v) {
    const b = bufs.get(v.job);
    if (b && !b.stale) {
      applySeed(v, b.seed);
      b.chunks.forEach(c => write(v, c.data));
      return;
    }
    const s = Z.sessions.get(v.job);
    if (s && !LIVE.has(s.state)) { replay(v); return; }
    try {
      const seed = await api("GET", `/sessions/${encodeURIComponent(v.job)}/terminal`);
      if (seed.live) applySeed(v, seed); else replay(v);
    } catch (e) { /* the next seed on the stream draws it */ }
  }

  async function replay(v) {
    try {
      const r = await api("GET", `/sessions/${encodeURIComponent(v.job)}/replay`);
      v.term.reset();
      v.term.options.disableStdin = true;
      if (r.cut) write(v, "\x1b[2m(the start of this output is not kept here)\x1b[0m\r\n");
      write(v, r.data || "\x1b[2m(this job printed nothing)\x1b[0m");
      fitLater(v);
    } catch (e) { /* an unknown job: nothing to show */ }
  }

  // -- from the stream ----------------------------------------------------------------------------
  function seed(s) {
    bufs.set(s.job, { seed: s, chunks: [], size: 0, stale: false });
    (views.get(s.job) || []).forEach(v => applySeed(v, s));
  }
  function out(o) {
    const b = bufs.get(o.job);
    if (b && !b.stale) {
      b.chunks.push(o);
      b.size += o.data.length;
      if (b.size > KEEP) b.stale = true;   // too much to replay: a new view asks for a fresh seed
    }
    (views.get(o.job) || []).forEach(v => { if (o.at >= v.seeded) write(v, o.data); });
  }
  function ended(o) {
    (views.get(o.job) || []).forEach(v => { v.term.options.disableStdin = true; });
    bufs.delete(o.job);
  }

  return { open, seed, out, ended, dataItems, views };
})();
