/* infx results site: charts drawn by hand as SVG (no library, nothing fetched).
 *
 * Every chart: axes from zero unless stated, a unit on each axis, a marker shape and a
 * colour per series (shape carries the meaning; colour only repeats it), a tooltip on
 * hover and keyboard focus, and the chart's data as a <table> next to it.
 * Text from the data is only ever set as text (textContent, attributes), never as HTML.
 */
"use strict";

(function () {
  const SVG_NS = "http://www.w3.org/2000/svg";

  function append(node, kids) {
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.appendChild(typeof kid === "string" || typeof kid === "number"
        ? document.createTextNode(String(kid)) : kid);
    }
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on") && typeof value === "function") {
        node.addEventListener(key.slice(2), value);
      } else {
        node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    return node;
  }

  /** An HTML element: el("a", {href: "#/"}, "text", child, ...). */
  function el(tag, attrs, ...kids) {
    return append(setAttrs(document.createElement(tag), attrs), kids);
  }

  /** An SVG element. */
  function sv(tag, attrs, ...kids) {
    return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), kids);
  }

  /** A number for people: 3 significant digits, thousands separated. */
  function fmt(value, digits) {
    if (value === null || value === undefined || !isFinite(value)) return "–";
    const d = digits || 3;
    const abs = Math.abs(value);
    if (abs >= 10 ** d) return Math.round(value).toLocaleString("en-US");
    return Number(value.toPrecision(d)).toLocaleString("en-US", { maximumFractionDigits: 6 });
  }

  function pct(value) {
    if (value === null || value === undefined || !isFinite(value)) return "–";
    return (value > 0 ? "+" : value < 0 ? "−" : "±") + fmt(Math.abs(value), 3) + "%";
  }

  /** Round ticks from zero to past `max`. */
  function ticks(max, count) {
    const top = max > 0 && isFinite(max) ? max : 1;
    const raw = top / (count || 5);
    const mag = 10 ** Math.floor(Math.log10(raw));
    const f = raw / mag;
    const step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
    const end = Math.ceil(top / step - 1e-9) * step;
    const out = [];
    for (let i = 0; i * step <= end + step / 2; i++) out.push(Number((i * step).toPrecision(12)));
    return { end: end, ticks: out };
  }

  // Okabe-Ito: told apart by most colour-blind readers; black last.
  const COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
    "#000000", "#8C6D1F"];
  const SHAPES = ["circle", "square", "triangle", "diamond", "down", "cross", "plus", "star"];

  /** Path data of a marker of `shape` centred on (x, y), about 2r wide. */
  function shapePath(shape, x, y, r) {
    const p = (pts) => "M" + pts.map((q) => `${(x + q[0] * r).toFixed(1)},${(y + q[1] * r).toFixed(1)}`).join("L") + "Z";
    switch (shape) {
      case "square": return p([[-0.85, -0.85], [0.85, -0.85], [0.85, 0.85], [-0.85, 0.85]]);
      case "triangle": return p([[0, -1.1], [1, 0.75], [-1, 0.75]]);
      case "down": return p([[0, 1.1], [1, -0.75], [-1, -0.75]]);
      case "diamond": return p([[0, -1.15], [1, 0], [0, 1.15], [-1, 0]]);
      case "cross": return p([[-1, -0.6], [-0.6, -1], [0, -0.4], [0.6, -1], [1, -0.6], [0.4, 0],
        [1, 0.6], [0.6, 1], [0, 0.4], [-0.6, 1], [-1, 0.6], [-0.4, 0]]);
      case "plus": return p([[-0.3, -1], [0.3, -1], [0.3, -0.3], [1, -0.3], [1, 0.3], [0.3, 0.3],
        [0.3, 1], [-0.3, 1], [-0.3, 0.3], [-1, 0.3], [-1, -0.3], [-0.3, -0.3]]);
      case "star": {
        const pts = [];
        for (let i = 0; i < 10; i++) {
          const a = -Math.PI / 2 + (i * Math.PI) / 5;
          const k = i % 2 ? 0.45 : 1.1;
          pts.push([Math.cos(a) * k, Math.sin(a) * k]);
        }
        return p(pts);
      }
      default:
        return `M${(x - r).toFixed(1)},${y.toFixed(1)}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0Z`;
    }
  }

  function marker(shape, x, y, r, attrs) {
    return sv("path", Object.assign({ d: shapePath(shape, x, y, r) }, attrs));
  }

  /** A small inline SVG showing a marker (for legends and tables). */
  function swatch(shape, colour, hollow) {
    return sv("svg", { width: 16, height: 16, viewBox: "0 0 16 16", "aria-hidden": "true",
      class: "swatch" },
    marker(shape, 8, 8, 5.5, { fill: hollow ? "#fff" : colour, stroke: colour, "stroke-width": 1.5 }));
  }

  // --- the tooltip: one for the page, filled with text --------------------------------
  let tip = null;
  function tooltip() {
    if (!tip) {
      tip = el("div", { id: "tip", role: "tooltip", hidden: true });
      document.body.appendChild(tip);
    }
    return tip;
  }

  function showTip(target, lines) {
    const box = tooltip();
    box.replaceChildren(...lines.map((line, i) => el(i ? "div" : "strong", {}, line)));
    box.hidden = false;
    const rect = target.getBoundingClientRect();
    const left = Math.min(window.scrollX + rect.right + 10,
      window.scrollX + document.documentElement.clientWidth - box.offsetWidth - 8);
    box.style.left = Math.max(4, left) + "px";
    box.style.top = window.scrollY + rect.top - 4 + "px";
  }

  function hideTip() {
    if (tip) tip.hidden = true;
  }

  /** Make an SVG mark focusable, labelled, and show `lines` on hover and focus. */
  function hover(node, lines) {
    setAttrs(node, { tabindex: 0, role: "img", "aria-label": lines.join("; ") });
    node.appendChild(sv("title", {}, lines.join("\n")));
    node.addEventListener("mouseenter", () => showTip(node, lines));
    node.addEventListener("focus", () => showTip(node, lines));
    node.addEventListener("mouseleave", hideTip);
    node.addEventListener("blur", hideTip);
    return node;
  }

  /**
   * A chart frame: axes from zero with units, gridlines, a title and description for
   * screen readers. opts: {title, desc, xLabel, yLabel, xMax, yMax, xTicks (optional
   * [[value, text]]), width, height}. Returns {svg, x, y, plot, width, height}.
   */
  function frame(opts) {
    const width = opts.width || 760;
    const height = opts.height || 400;
    const m = { left: 74, right: 18, top: 16, bottom: 52 };
    const xs = ticks(opts.xMax, 6);
    const ys = ticks(opts.yMax, 5);
    const x = (v) => m.left + (v / xs.end) * (width - m.left - m.right);
    const y = (v) => height - m.bottom - (v / ys.end) * (height - m.top - m.bottom);
    const titleId = "t" + Math.random().toString(36).slice(2, 10);
    const svg = sv("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "group",
      "aria-labelledby": titleId, preserveAspectRatio: "xMidYMid meet" },
    sv("title", { id: titleId }, opts.title || ""),
    opts.desc ? sv("desc", {}, opts.desc) : null);
    const grid = sv("g", { class: "grid", "aria-hidden": "true" });
    for (const v of ys.ticks) {
      grid.appendChild(sv("line", { x1: m.left, x2: width - m.right, y1: y(v), y2: y(v) }));
      grid.appendChild(sv("text", { x: m.left - 6, y: y(v) + 4, "text-anchor": "end" }, fmt(v)));
    }
    const xTicks = opts.xTicks || xs.ticks.map((v) => [v, fmt(v)]);
    for (const [v, text] of xTicks) {
      const at = opts.xTicks ? m.left + v * (width - m.left - m.right) : x(v);
      const anchor = at > width - m.right - 30 ? "end" : "middle";
      grid.appendChild(sv("line", { x1: at, x2: at, y1: m.top, y2: height - m.bottom, class: "v" }));
      grid.appendChild(sv("text", { x: at, y: height - m.bottom + 16, "text-anchor": anchor }, text));
    }
    grid.appendChild(sv("line", { class: "axis", x1: m.left, x2: width - m.right,
      y1: y(0), y2: y(0) }));
    grid.appendChild(sv("line", { class: "axis", x1: m.left, x2: m.left, y1: m.top,
      y2: height - m.bottom }));
    grid.appendChild(sv("text", { class: "label", x: (m.left + width - m.right) / 2,
      y: height - 10, "text-anchor": "middle" }, opts.xLabel));
    grid.appendChild(sv("text", { class: "label", x: 0, y: 0, "text-anchor": "middle",
      transform: `translate(16 ${(m.top + height - m.bottom) / 2}) rotate(-90)` }, opts.yLabel));
    svg.appendChild(grid);
    const plot = sv("g", { class: "plot" });
    svg.appendChild(plot);
    return { svg, x, y, plot, width, height, margin: m };
  }

  /** A table of rows; `columns` [{label, num: bool}], each row an array of cells (text or node). */
  function table(caption, columns, rows, attrs) {
    return el("table", Object.assign({ class: "data" }, attrs || {}),
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", { scope: "col",
        class: c.num ? "num" : null }, c.label)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell, i) =>
        el("td", { class: columns[i] && columns[i].num ? "num" : null }, cell))))));
  }

  /** A chart with its data table, which a button swaps in for the chart. */
  function figure(caption, chart, legend, dataTable) {
    const box = el("figure", { class: "figure" });
    const chartBox = el("div", { class: "chart-box" }, chart, legend);
    const tableBox = el("div", { class: "table-box", hidden: true }, dataTable);
    const button = el("button", { type: "button", class: "toggle", "aria-pressed": "false" },
      "Show the data as a table");
    button.addEventListener("click", () => {
      const showTable = tableBox.hidden;
      tableBox.hidden = !showTable;
      chartBox.hidden = showTable;
      button.setAttribute("aria-pressed", String(showTable));
      button.textContent = showTable ? "Show the chart" : "Show the data as a table";
    });
    append(box, [el("figcaption", {}, caption), button, chartBox, tableBox]);
    return box;
  }

  /** A legend: items {shape, colour, hollow, label}, or {dash, label} for a line. */
  function legend(items) {
    return el("ul", { class: "legend" }, items.map((item) => el("li", {}, item.shape
      ? swatch(item.shape, item.colour, item.hollow)
      : sv("svg", { width: 22, height: 16, viewBox: "0 0 22 16", "aria-hidden": "true", class: "swatch" },
        sv("line", { x1: 1, x2: 21, y1: 8, y2: 8, stroke: "#333", "stroke-width": 1.6,
          "stroke-dasharray": item.dash || null })), " ", item.label)));
  }

  window.InfxCharts = { el, sv, fmt, pct, ticks, frame, marker, swatch, hover, table, figure,
    legend, COLOURS, SHAPES, hideTip };
})();
