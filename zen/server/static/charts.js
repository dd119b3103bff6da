// zen charts: small hand-written SVG bar charts for the Metrics tab (no library).
"use strict";

const ZenCharts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#2f6fde", "#e08a1e", "#1f8a4c", "#c93131", "#7a55c7", "#39a7b5"];

  function el(name, attrs, text) {
    const n = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function nice(max) {
    if (max <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(max)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= max) return m * p;
    return 10 * p;
  }

  function fmt(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (v >= 1e3) return (v / 1e3).toFixed(1) + "k";
    if (Number.isInteger(v)) return String(v);
    return v < 1 ? String(Number(v.toPrecision(2))) : v.toFixed(1);
  }

  // bars(container, labels, [{name, values}], {stacked}) draws one bar group per label
  function bars(container, labels, series, opts) {
    opts = opts || {};
    const W = 520, H = 200, L = 44, B = 34, T = 8;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
    const totals = labels.map((_, i) => opts.stacked
      ? series.reduce((a, s) => a + (s.values[i] || 0), 0)
      : Math.max(0, ...series.map(s => s.values[i] || 0)));
    const top = nice(Math.max(0, ...totals));
    const plotW = W - L - 6, plotH = H - B - T;
    for (let k = 0; k <= 4; k++) {
      const y = T + plotH - (plotH * k) / 4;
      svg.appendChild(el("line", { x1: L, x2: W - 6, y1: y, y2: y, stroke: "#e3e6ec" }));
      svg.appendChild(el("text", { x: L - 4, y: y + 3, "text-anchor": "end" }, fmt((top * k) / 4)));
    }
    const n = Math.max(1, labels.length);
    const slot = plotW / n;
    const barW = opts.stacked ? Math.min(40, slot * 0.7) : Math.min(40, (slot * 0.8) / series.length);
    labels.forEach((label, i) => {
      let base = 0;
      series.forEach((s, j) => {
        const v = s.values[i] || 0;
        const h = (plotH * v) / top;
        const x = L + slot * i + (opts.stacked ? (slot - barW) / 2 : (slot - barW * series.length) / 2 + barW * j);
        const y = T + plotH - h - (opts.stacked ? (plotH * base) / top : 0);
        const r = el("rect", { x, y, width: Math.max(1, barW - 1), height: Math.max(0, h), fill: COLORS[j % COLORS.length] });
        r.appendChild(el("title", {}, `${label} ${s.name}: ${fmt(v)}`));
        svg.appendChild(r);
        if (opts.stacked) base += v;
      });
      const short = label.length > 14 ? label.slice(0, 13) + "…" : label;
      svg.appendChild(el("text", { x: L + slot * i + slot / 2, y: H - B + 14, "text-anchor": "middle" }, short));
    });
    const legend = document.createElement("div");
    legend.className = "legend";
    series.forEach((s, j) => {
      const item = document.createElement("span");
      const sw = document.createElement("i");
      sw.style.background = COLORS[j % COLORS.length];
      item.append(sw, s.name);
      legend.appendChild(item);
    });
    container.replaceChildren(svg, legend);
    container.dataset.points = String(labels.length);
  }

  return { bars };
})();
