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

  /** A tick for a narrow chart, or for numbers of seven digits or more: 60k, 1.5M, 2G,
   * 3e+15 (the axis keeps its unit; "10,000,000" ran into the axis' title). */
  function short(value) {
    const abs = Math.abs(value);
    if (abs >= 1e15) return value.toExponential(1).replace(".0e", "e");
    if (abs >= 1e12) return fmt(value / 1e12) + "T";
    if (abs >= 1e9) return fmt(value / 1e9) + "G";
    if (abs >= 1e6) return fmt(value / 1e6) + "M";
    if (abs >= 1e4) return fmt(value / 1e3) + "k";
    return fmt(value);
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
  let shownFor = null; // the mark whose numbers the tooltip shows
  function tooltip() {
    if (!tip) {
      tip = el("div", { id: "tip", role: "tooltip", hidden: true });
      document.body.appendChild(tip);
      // A tap away from every mark puts the tooltip away (a phone has no mouseleave).
      document.addEventListener("pointerdown", (event) => {
        const target = event.target;
        if (!(target instanceof Element) || !target.closest("[data-tip]")) hideTip();
      });
    }
    return tip;
  }

  function showTip(target, lines) {
    const box = tooltip();
    box.replaceChildren(...lines.map((line, i) => el(i ? "div" : "strong", {}, line)));
    box.hidden = false;
    shownFor = target;
    const rect = target.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    let left = window.scrollX + rect.right + 10;
    let top = window.scrollY + rect.top - 4;
    if (rect.right + 10 + box.offsetWidth > width - 8) {
      // No room beside the mark (a phone): below it, inside the viewport.
      left = window.scrollX + Math.min(rect.left, width - box.offsetWidth - 8);
      top = window.scrollY + rect.bottom + 8;
    }
    box.style.left = Math.max(window.scrollX + 4, left) + "px";
    box.style.top = top + "px";
  }

  function hideTip() {
    if (tip) tip.hidden = true;
    shownFor = null;
  }

  /** Make an SVG mark focusable, labelled, and show `lines` on hover and focus. A tap
   * (touch or pen) shows them first: what a click opens, a second tap on the same mark
   * opens, so a phone reads the numbers before it navigates away. The mark is out of the
   * tab order (tabindex -1): `rove` gives each chart one tab stop, arrows move from mark
   * to mark, so a 200-run history is not thousands of Tab presses. */
  function hover(node, lines) {
    setAttrs(node, { tabindex: -1, role: "img", "aria-label": lines.join("; "), "data-tip": true });
    node.addEventListener("keydown", (event) => {
      // Enter or Space does what a tap does: the numbers first, then what a click opens.
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      if (shownFor === node && tip && !tip.hidden) {
        node.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      } else {
        showTip(node, lines);
      }
    });
    node.appendChild(sv("title", {}, lines.join("\n")));
    node.addEventListener("mouseenter", () => showTip(node, lines));
    node.addEventListener("focus", () => showTip(node, lines));
    node.addEventListener("mouseleave", hideTip);
    node.addEventListener("blur", () => { if (shownFor === node) hideTip(); });
    let tapped = false; // this tap began with another mark's numbers (or none) shown
    node.addEventListener("pointerdown", (event) => {
      tapped = event.pointerType !== "mouse" && !(shownFor === node && tip && !tip.hidden);
    });
    node.addEventListener("click", (event) => {
      if (!tapped) return;
      tapped = false;
      event.stopImmediatePropagation();
      event.preventDefault();
      showTip(node, lines);
    }, { capture: true });
    return node;
  }

  /** One tab stop for the chart: its first mark (or the one last focused) is in the tab
   * order; arrow keys move to the next or previous mark, Page keys ten at a time, Home and
   * End to the ends, Escape puts the numbers away. */
  function rove(svg) {
    const marks = () => [...svg.querySelectorAll("[data-tip]")];
    const first = marks()[0];
    if (!first) return svg;
    first.setAttribute("tabindex", "0");
    svg.addEventListener("focusin", (event) => {
      const target = event.target;
      if (!(target instanceof Element) || !target.hasAttribute("data-tip")) return;
      for (const mark of svg.querySelectorAll("[data-tip][tabindex='0']")) {
        if (mark !== target) mark.setAttribute("tabindex", "-1");
      }
      target.setAttribute("tabindex", "0");
    });
    svg.addEventListener("keydown", (event) => {
      const all = marks();
      const at = all.indexOf(event.target);
      if (at < 0) return;
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, PageDown: 10,
        PageUp: -10, Home: -all.length, End: all.length }[event.key];
      if (event.key === "Escape") { hideTip(); return; }
      if (step === undefined) return;
      event.preventDefault();
      all[Math.max(0, Math.min(all.length - 1, at + step))].focus();
    });
    return svg;
  }

  /** The width a chart is drawn at: the room the page gives it (a phone's 390 px draws
   * at about 310, not a 760-wide drawing shrunk to 40 %, its labels 5 px high). */
  function roomFor() {
    const view = document.getElementById("view");
    const room = view ? view.clientWidth - 60 : 760;
    return Math.max(280, Math.min(760, room));
  }

  /**
   * A chart frame: axes from zero with units, gridlines, a title and description for
   * screen readers. opts: {title, desc, xLabel, yLabel, xMax, yMax, xTicks (optional
   * [[value, text]]), width, height}. Returns {svg, x, y, plot, width, height}.
   */
  function frame(opts) {
    const width = opts.width || roomFor();
    const narrow = width < 520;
    const height = opts.height || (narrow ? Math.round(width * 0.9) : 400);
    const m = narrow ? { left: 58, right: 12, top: 14, bottom: 48 } : { left: 74, right: 18, top: 16, bottom: 52 };
    const xs = ticks(opts.xMax, narrow ? 4 : 6);
    const ys = ticks(opts.yMax, narrow ? 4 : 5);
    const x = (v) => m.left + (v / xs.end) * (width - m.left - m.right);
    const y = (v) => height - m.bottom - (v / ys.end) * (height - m.top - m.bottom);
    const titleId = "t" + Math.random().toString(36).slice(2, 10);
    const svg = sv("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "group",
      "aria-labelledby": titleId, preserveAspectRatio: "xMidYMid meet" },
    sv("title", { id: titleId }, opts.title || ""),
    opts.desc ? sv("desc", {}, opts.desc) : null);
    const grid = sv("g", { class: "grid", "aria-hidden": "true" });
    const tick = (v, end) => (narrow || end >= 1e6 ? short(v) : fmt(v));
    for (const v of ys.ticks) {
      grid.appendChild(sv("line", { x1: m.left, x2: width - m.right, y1: y(v), y2: y(v) }));
      grid.appendChild(sv("text", { class: "ytick", x: m.left - 6, y: y(v) + 4, "text-anchor": "end" },
        tick(v, ys.end)));
    }
    const xTicks = opts.xTicks || xs.ticks.map((v) => [v, tick(v, xs.end)]);
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

  /** A cell's text as a reader hears it: marks hidden from screen readers left out. */
  function spoken(node) {
    if (node.nodeType === Node.TEXT_NODE) return node.textContent;
    if (node.nodeType !== Node.ELEMENT_NODE || node.getAttribute("aria-hidden") === "true") return "";
    return [...node.childNodes].map(spoken).join("");
  }

  /** The rows a table shows (filtered-out rows left out) as CSV, RFC 4180: numbers without
   * thousands separators, a text that starts like a formula quoted behind an apostrophe. */
  function csv(tableNode) {
    const quote = (text, num) => {
      let value = text.trim().replace(/\s+/g, " ");
      if (num) value = value.replace(/,/g, "").replace(/\u2212/g, "-");
      // = @ + - (and tab, CR) start a formula; a signed number (+2.1%) is left a number
      if (/^[=@\t\r]/.test(value) || (/^[+-]/.test(value) && !/^[+-][\d.,]+%?$/.test(value))) {
        value = "'" + value;
      }
      return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
    };
    const lines = [];
    for (const tr of tableNode.querySelectorAll("tr")) {
      if (tr.hidden) continue;
      lines.push([...tr.children].map((cell) => quote(spoken(cell), cell.classList.contains("num")
        && cell.tagName === "TD")).join(","));
    }
    return lines.join("\r\n") + "\r\n";
  }

  /** A "CSV" link that downloads the table's rows (a data: URL made when it is clicked: no
   * request, works from file://). */
  function csvLink(tableNode, caption) {
    const name = (caption.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60)
      || "table") + ".csv";
    return el("a", { class: "csv", href: "#", role: "button", download: name,
      "aria-label": `Download the table "${caption}" as CSV`, onclick: (event) => {
        event.preventDefault();
        const link = el("a", { href: "data:text/csv;charset=utf-8," + encodeURIComponent(csv(tableNode)),
          download: name, hidden: true });
        document.body.appendChild(link);
        link.click();
        link.remove();
      } }, "CSV");
  }

  /** A table of rows; `columns` [{label, num: bool}], each row an array of cells (text or node),
   * with a link that downloads it as CSV. */
  function table(caption, columns, rows, attrs) {
    const node = el("table", Object.assign({ class: "data" }, attrs || {}),
      el("caption", {}, caption, " "),
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", { scope: "col",
        class: c.num ? "num" : null }, c.label)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell, i) =>
        el("td", { class: columns[i] && columns[i].num ? "num" : null }, cell))))));
    node.querySelector("caption").appendChild(csvLink(node, caption));
    // In a box of its own that scrolls sideways: a wide table never widens the page.
    return el("div", { class: "table-scroll" }, node);
  }

  /** A chart with its data table, which a button swaps in for the chart. */
  function figure(caption, chart, legend, dataTable) {
    const box = el("figure", { class: "figure" });
    const chartBox = el("div", { class: "chart-box" }, rove(chart), legend);
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
    legend, COLOURS, SHAPES, hideTip, roomFor, rove, csv };
})();
