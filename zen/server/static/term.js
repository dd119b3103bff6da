// zen terminal view: draws the screen of an agent's tmux pane (rows with SGR colour escapes, as
// `tmux capture-pane -e` gives them, plus the cursor) and turns keystrokes into tmux key names.
// tmux is the terminal emulator; this file only interprets the escapes of the screen it draws.
"use strict";

const ZenTerm = (() => {
  const BASE = ["#1c2330", "#e5534b", "#57ab5a", "#c69026", "#539bf5", "#b083f0", "#39c5cf", "#d6dde8",
                "#636e7b", "#ff938a", "#6bc46d", "#daaa3f", "#6cb6ff", "#dcbdfb", "#56d4dd", "#ffffff"];

  function color256(n) {
    if (n < 16) return BASE[n];
    if (n >= 232) { const v = 8 + (n - 232) * 10; return `rgb(${v},${v},${v})`; }
    n -= 16;
    const c = [Math.floor(n / 36), Math.floor(n / 6) % 6, n % 6].map(x => (x ? 55 + x * 40 : 0));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  function fresh() { return { fg: null, bg: null, b: false, d: false, i: false, u: false, inv: false }; }

  // apply one SGR parameter list to the pen
  function sgr(pen, params) {
    if (params.length === 0) params = [0];
    for (let k = 0; k < params.length; k++) {
      const p = params[k];
      if (p === 0) Object.assign(pen, fresh());
      else if (p === 1) pen.b = true;
      else if (p === 2) pen.d = true;
      else if (p === 3) pen.i = true;
      else if (p === 4) pen.u = true;
      else if (p === 7) pen.inv = true;
      else if (p === 22) { pen.b = false; pen.d = false; }
      else if (p === 23) pen.i = false;
      else if (p === 24) pen.u = false;
      else if (p === 27) pen.inv = false;
      else if (p >= 30 && p <= 37) pen.fg = BASE[p - 30];
      else if (p >= 90 && p <= 97) pen.fg = BASE[p - 90 + 8];
      else if (p >= 40 && p <= 47) pen.bg = BASE[p - 40];
      else if (p >= 100 && p <= 107) pen.bg = BASE[p - 100 + 8];
      else if (p === 39) pen.fg = null;
      else if (p === 49) pen.bg = null;
      else if ((p === 38 || p === 48) && params[k + 1] === 5) {
        const c = color256(params[k + 2] || 0); if (p === 38) pen.fg = c; else pen.bg = c; k += 2;
      } else if ((p === 38 || p === 48) && params[k + 1] === 2) {
        const c = `rgb(${params[k + 2] || 0},${params[k + 3] || 0},${params[k + 4] || 0})`;
        if (p === 38) pen.fg = c; else pen.bg = c; k += 4;
      }
    }
  }

  // one row of text with escapes -> [{text, pen}] runs
  function runs(line) {
    const out = [];
    const pen = fresh();
    let text = "";
    const re = /\x1b\[([0-9;:]*)([A-Za-z])|\x1b[\]P^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b./g;
    let last = 0, m;
    const flush = () => { if (text) { out.push({ text, pen: { ...pen } }); text = ""; } };
    while ((m = re.exec(line)) !== null) {
      text += line.slice(last, m.index);
      last = re.lastIndex;
      if (m[2] === "m") { flush(); sgr(pen, m[1] === "" ? [] : m[1].split(/[;:]/).map(Number)); }
    }
    text += line.slice(last);
    flush();
    return out;
  }

  function span(text, pen) {
    const s = document.createElement("span");
    s.textContent = text;
    let fg = pen.fg, bg = pen.bg;
    if (pen.inv) { [fg, bg] = [bg || "var(--term-bg)", fg || "var(--term-fg)"]; }
    if (fg) s.style.color = fg;
    if (bg) s.style.background = bg;
    const cls = ["b", "d", "i", "u"].filter(k => pen[k]);
    if (cls.length) s.className = cls.join(" ");
    return s;
  }

  // draw a screen {text, cursor_x, cursor_y, width, height} into the element `el`
  function render(el, shot) {
    let screen = el.querySelector(".screen");
    if (!screen) { screen = document.createElement("div"); screen.className = "screen"; el.appendChild(screen); }
    const rows = (shot.text || "").split("\n");
    const frag = document.createDocumentFragment();
    rows.forEach((line, y) => {
      const row = document.createElement("div");
      row.className = "row";
      let col = 0;
      for (const r of runs(line)) {
        if (y === shot.cursor_y && shot.live && col <= shot.cursor_x && shot.cursor_x < col + r.text.length) {
          const at = shot.cursor_x - col;
          if (at) row.appendChild(span(r.text.slice(0, at), r.pen));
          const c = span(r.text[at], r.pen); c.classList.add("cursor"); row.appendChild(c);
          if (at + 1 < r.text.length) row.appendChild(span(r.text.slice(at + 1), r.pen));
        } else {
          row.appendChild(span(r.text, r.pen));
        }
        col += r.text.length;
      }
      if (y === shot.cursor_y && shot.live && shot.cursor_x >= col) {
        row.appendChild(document.createTextNode(" ".repeat(shot.cursor_x - col)));
        const c = span(" ", fresh()); c.classList.add("cursor"); row.appendChild(c);
      }
      if (!row.childNodes.length) row.textContent = " ";
      frag.appendChild(row);
    });
    screen.replaceChildren(frag);
    const plain = rows.map(l => l.replace(/\x1b\[[0-9;:]*[A-Za-z]/g, "").replace(/\x1b./g, ""));
    el.dataset.text = plain.join("\n");
    // what is drawn: at least 80 columns, and down to the cursor or the last row with text
    let last = shot.live ? shot.cursor_y : 0;
    plain.forEach((l, y) => { if (l.trim()) last = Math.max(last, y); });
    el.dataset.cols = String(Math.min(shot.width || 200, Math.max(80, ...plain.map(l => l.trimEnd().length))));
    el.dataset.last = String(last);
    fit(el);
  }

  // scale the screen so its used columns fill the element's width, and keep its last used row in view
  function fit(el) {
    const screen = el.querySelector(".screen");
    if (!screen) return;
    const probe = fit.probe || (fit.probe = (() => {
      const p = document.createElement("span"); p.textContent = "0".repeat(100);
      p.style.cssText = "position:absolute;visibility:hidden;white-space:pre;font:12px/1.2 ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace";
      document.body.appendChild(p); return p;
    })());
    const charW = probe.getBoundingClientRect().width / 100 || 7.2;
    const cols = Number(el.dataset.cols) || 80;
    const want = cols * charW + 8;
    const scale = Math.min(1.4, el.clientWidth / want) || 1;
    const lineH = 12 * 1.2 * scale;
    const bottom = (Number(el.dataset.last || 0) + 1) * lineH + 8;
    const shift = el.clientHeight && bottom > el.clientHeight ? el.clientHeight - bottom : 0;
    screen.style.transform = `translateY(${shift}px) scale(${scale})`;
    screen.style.width = `${want}px`;
  }

  const NAMED = { Enter: "Enter", Backspace: "BSpace", Tab: "Tab", Escape: "Escape", ArrowUp: "Up", ArrowDown: "Down",
                  ArrowLeft: "Left", ArrowRight: "Right", Home: "Home", End: "End", PageUp: "PPage",
                  PageDown: "NPage", Delete: "DC", Insert: "IC" };

  // a keydown as an item for POST .../keys ({text} or {key}), or null when it is not for the agent
  function keyItem(e) {
    if (e.metaKey) return null;
    if (e.key === "Tab" && e.shiftKey) return { key: "BTab" };
    if (NAMED[e.key]) return { key: NAMED[e.key] };
    if (/^F([1-9]|1[0-2])$/.test(e.key)) return { key: e.key };
    if (e.ctrlKey && /^[a-z]$/i.test(e.key)) return { key: `C-${e.key.toLowerCase()}` };
    if (e.altKey && /^[a-z0-9]$/i.test(e.key)) return { key: `M-${e.key.toLowerCase()}` };
    if (e.key.length === 1 && !e.ctrlKey && !e.altKey) return { text: e.key };
    return null;
  }

  return { render, fit, keyItem, runs };
})();
