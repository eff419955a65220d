/* infx results site: a config's history over main's runs, with its steps and the changelog
 * entries that explain them. */
"use strict";

(function () {
  const C = window.InfxCharts;
  const V = window.InfxViews;
  const { el, fmt, pct } = C;

  const STEP_STYLE = { explained: "", unexplained: "7 4", unknown: "2 3" };
  const METRIC_SHORT = { tput_per_gpu: "throughput/GPU", median_ttft: "TTFT p50",
    p99_ttft: "TTFT p99", median_tpot: "TPOT p50", p99_tpot: "TPOT p99", intvty: "interactivity" };

  function moved(step) {
    // Throughput first, then TPOT, then TTFT (the noisiest); within each, the largest move.
    const rank = (m) => ["tput_per_gpu", "median_tpot", "p99_tpot", "median_ttft", "p99_ttft"].indexOf(m[1]);
    const sorted = step.moved.slice().sort((a, b) => rank(a) - rank(b) || Math.abs(b[2]) - Math.abs(a[2]));
    const shown = sorted.slice(0, 6).map((m) => `${METRIC_SHORT[m[1]] || m[1]} conc ${m[0]} ${pct(m[2])}`);
    return shown.join(", ") + (sorted.length > 6 ? ` and ${sorted.length - 6} more` : "");
  }

  function explanation(step) {
    if (step.status === "explained") {
      return el("div", { class: "why explained" }, el("strong", {}, "Explained by "),
        step.entries.map((e, i) => el("div", { class: "entry" },
          i ? "and " : "", e.pr_link ? V.extLink(e.pr_link, e.pr_link.replace(/^https?:\/\/[^/]+\//, ""))
            : "an entry without pr-link", ` (${e.keys.join(", ")}): `,
          e.description.join(" "))));
    }
    if (step.status === "unexplained") {
      return el("div", { class: "why unexplained" }, el("strong", {}, "Unexplained: "),
        "no changelog entry added between these runs names this config (runner, driver or ",
        "infrastructure drift?).");
    }
    return el("div", { class: "why unknown" }, el("strong", {}, "Unknown: "), step.note);
  }

  function stepsList(doc) {
    if (!doc.steps.length) return el("p", {}, "No step: every series is one level over its history.");
    return el("ol", { class: "steps", id: "steps" }, doc.steps.map((step, i) =>
      el("li", { class: "step", "data-status": step.status, "data-run": V.run(step.run).id },
        el("strong", {}, `S${i + 1}`), " at ", V.runLink(step.run), " (after ", V.runLink(step.before),
        step.joint ? "; the whole config moved" : "", "): ", moved(step), explanation(step))));
  }

  /** One metric of the config over its runs: one line per concurrency, steps marked. */
  function metricChart(doc, metric, runs) {
    const concs = Object.keys(doc.series).map(Number).sort((a, b) => a - b);
    const shownRuns = new Set(runs);
    const measured = concs.some((c) => doc.series[c].m[metric.key].some((v, j) =>
      v !== null && shownRuns.has(doc.series[c].runs[j])));
    if (!measured) {
      // A client that reports no such number (an empty 0-to-1 frame read as a broken chart).
      return el("figure", { class: "figure unmeasured", "data-metric": metric.key },
        el("figcaption", {}, `${metric.label} (${metric.unit})`),
        el("p", { class: "notes" }, `Not measured: no run shown here reports ${metric.label} ` +
          "for this config."));
    }
    const place = new Map(runs.map((r, i) => [r, i]));
    const span = Math.max(runs.length - 1, 1);
    const unitX = (r) => (runs.length === 1 ? 0.5 : place.get(r) / span);
    let yMax = 0;
    for (const c of concs) {
      const s = doc.series[c];
      s.m[metric.key].forEach((v, j) => { if (v !== null && place.has(s.runs[j])) yMax = Math.max(yMax, v); });
    }
    const count = Math.min(6, runs.length);
    const xTicks = [];
    for (let k = 0; k < count; k++) {
      const i = count === 1 ? 0 : Math.round((k * (runs.length - 1)) / (count - 1));
      xTicks.push([unitX(runs[i]), V.run(runs[i]).date.slice(0, 10)]);
    }
    const f = C.frame({ title: `${metric.label} of ${doc.label} over main's runs`,
      desc: `${concs.length} concurrencies over ${runs.length} runs; y from zero.`,
      // a phone's chart has room for a short title only (the long one ran past its right edge)
      xLabel: C.roomFor() < 520 ? `${runs.length} main runs, oldest to newest`
        : `Main run, oldest to newest (${runs.length} runs; ticks: run date)`,
      yLabel: `${metric.label} (${metric.unit})`, xMax: 1, yMax: yMax * 1.05, xTicks,
      height: 300 });
    const x = (r) => f.margin.left + unitX(r) * (f.width - f.margin.left - f.margin.right);
    doc.steps.forEach((step, i) => {
      if (!place.has(step.run) || !place.has(step.before)) return;  // outside the zoom
      const at = (x(step.before) + x(step.run)) / 2;
      const g = C.sv("g", { class: "stepmark", "data-status": step.status });
      g.appendChild(C.sv("line", { x1: at, x2: at, y1: f.margin.top, y2: f.height - f.margin.bottom,
        "stroke-dasharray": STEP_STYLE[step.status] || null }));
      g.appendChild(C.sv("text", { x: at + 3, y: f.margin.top + 11 }, `S${i + 1}`));
      C.hover(g, [`S${i + 1}: ${step.status}`, moved(step)]);
      f.plot.appendChild(g);
    });
    const every = runs.length <= 60 ? 1 : Math.ceil(runs.length / 40);
    concs.forEach((conc, i) => {
      const colour = C.COLOURS[i % C.COLOURS.length];
      const shape = C.SHAPES[i % C.SHAPES.length];
      const s = doc.series[conc];
      const values = s.m[metric.key];
      const g = C.sv("g", { class: "series", "data-conc": conc });
      let path = "";
      s.runs.forEach((r, j) => {
        if (values[j] === null || !place.has(r)) return;
        path += `${path ? "L" : "M"}${x(r).toFixed(1)},${f.y(values[j]).toFixed(1)}`;
      });
      g.appendChild(C.sv("path", { d: path, stroke: colour, fill: "none", class: "line", "aria-hidden": "true" }));
      s.runs.forEach((r, j) => {
        if (values[j] === null || !place.has(r) || (j % every && j !== s.runs.length - 1)) return;
        const mark = C.marker(shape, x(r), f.y(values[j]), 3.6, { class: "hpt", fill: colour,
          stroke: colour, "data-run": r });
        const landed = (doc.landed || {})[r];
        C.hover(mark, [`conc ${conc}: ${fmt(values[j])} ${metric.unit}`, V.runText(r),
          `Image ${doc.images[s.images[j]]}`].concat(landed && landed.entries.length
          ? [`${landed.entries.length} changelog entry(ies) landed with this run: click for them`] : []));
        mark.addEventListener("click", () => { if (pickRun) pickRun(r); });
        g.appendChild(mark);
      });
      f.plot.appendChild(g);
    });
    const legend = C.legend(concs.map((c, i) => ({ shape: C.SHAPES[i % C.SHAPES.length],
      colour: C.COLOURS[i % C.COLOURS.length], label: `conc ${c}` })).concat(
      [{ dash: "", label: "step explained" }, { dash: "7 4", label: "step unexplained" },
        { dash: "2 3", label: "step unknown (commits not in git)" }]));
    const byRun = runs.map((r) => {
      const cells = [V.runLink(r)];
      let image = "";
      for (const c of concs) {
        const s = doc.series[c];
        const j = s.runs.indexOf(r);
        cells.push(j < 0 ? "–" : fmt(s.m[metric.key][j]));
        if (j >= 0) image = doc.images[s.images[j]];
      }
      cells.splice(1, 0, image);
      return cells;
    });
    const dataTable = C.table(`${metric.label} (${metric.unit}) per run and concurrency`,
      [{ label: "Run" }, { label: "Image" }].concat(concs.map((c) => ({ label: `conc ${c}`, num: true }))),
      byRun);
    return C.figure(`${metric.label} (${metric.unit})`, f.svg, legend, dataTable);
  }

  /** The metric charts with buttons that zoom them to the newest 20 or 50 runs, or all
   * (a zoom longer than the history is not offered; "all" resets). */
  function zoom(doc, runs) {
    const charts = el("div", { id: "metric-charts" });
    const spans = [20, 50].filter((n) => n < runs.length);
    const buttons = spans.concat([0]).map((n) => el("button", { type: "button", class: "zoom",
      "data-runs": n || "all", "aria-pressed": n ? "false" : "true",
      onclick: () => show(n) }, n ? `Last ${n} runs` : `All ${runs.length} runs`));
    function show(n) {
      C.hideTip();
      const shown = n ? runs.slice(-n) : runs;
      buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.getAttribute("data-runs") === String(n || "all"))));
      charts.replaceChildren(...doc.metrics.map((m) => metricChart(doc, m, shown)));
    }
    show(0);
    return [spans.length ? el("div", { class: "zoom-bar", role: "group", "aria-label": "Runs the charts show" },
      "Show: ", buttons) : null, charts];
  }

  let pickRun = null;  // the open config page's run picker, which a click on a point sets

  /** A run picker and a panel with the changelog entries naming this config that landed
   * with the picked run (added between the main run before it and its commit). */
  function changelogPanel(doc, runs) {
    const landed = doc.landed || {};
    const panel = el("div", { id: "landed", "aria-live": "polite" });
    const count = (r) => (landed[r] ? landed[r].entries.length : 0);
    const select = el("select", { id: "run-pick" }, runs.slice().reverse().map((r) =>
      el("option", { value: String(r) }, V.runText(r) + (count(r) ? ` · ${count(r)} changelog entry(ies)` : ""))));
    function show(r) {
      select.value = String(r);
      const found = landed[r];
      const head = el("p", {}, "With ", V.runLink(r), ": ");
      if (found && found.entries.length) {
        panel.replaceChildren(head, el("ul", { class: "landed" }, found.entries.map((e) => el("li", {},
          e.pr_link ? V.extLink(e.pr_link, e.pr_link.replace(/^https?:\/\/[^/]+\//, "")) : "an entry without pr-link",
          ` (${e.keys.join(", ")}): `, e.description.join(" ")))));
      } else if (found) {
        panel.replaceChildren(head, `unknown: ${found.note}`);
      } else {
        head.append(r === runs[0] ? "its first run." : "no changelog entry naming this config landed with it.");
        panel.replaceChildren(head);
      }
    }
    select.addEventListener("change", () => show(Number(select.value)));
    pickRun = (r) => { show(r); panel.scrollIntoView({ block: "nearest" }); };
    const newest = Object.keys(landed).map(Number).filter((r) => count(r)).pop();
    show(newest === undefined ? runs[runs.length - 1] : newest);
    return [el("h2", {}, "Changelog per run"),
      el("p", {}, "Pick a run, or click a point on a chart, for the changelog entries naming this ",
        `config that landed with it (the newest ${V.index().landed_runs || 60} main runs).`),
      el("label", {}, "Run ", select), panel];
  }

  function configView(doc) {
    const runs = [...new Set(Object.values(doc.series).flatMap((s) => s.runs))].sort((a, b) => a - b);
    const identity = Object.entries(doc.identity).map(([k, v]) =>
      [el("dt", {}, k), el("dd", {}, typeof v === "object" ? JSON.stringify(v) : String(v))]);
    const noise = Object.entries(doc.noise).map(([conc, n]) => [conc, `±${fmt(n.sigma)}`,
      `±${fmt(n.band)}`, n.assumed ? "yes" : "no"]);
    const stale = V.staleText(runs[runs.length - 1]);
    return el("section", {},
      el("h1", { tabindex: -1 }, doc.label),
      stale ? el("p", { class: "stale", id: "stale" }, el("strong", {}, "Stale"),
        ` (${stale.replace(/^stale: /, "")}): none of the newest ${V.index().stale_after} main runs `,
        "measured this config, so its numbers are not main's current ones.") : null,
      el("p", {}, `${runs.length} main run(s) measured it, from `, V.runLink(runs[0]), " to ",
        V.runLink(runs[runs.length - 1]), ". ",
        doc.kind === "throughput" ? V.pageLink(doc.page[0], doc.page[1], "Its Pareto page") : ""),
      el("details", {}, el("summary", {}, "Identity"), el("dl", { class: "identity" }, identity)),
      el("h2", {}, `Steps (${doc.steps.length})`),
      el("p", {}, "Change points of infx's noise model (each series cut on its own and with the ",
        "config's other series), each with the changelog entries added between the two runs' commits ",
        "that name this config's model, runner, framework and precision."),
      stepsList(doc),
      changelogPanel(doc, runs),
      doc.metrics.length ? [el("h2", {}, "Metrics over main's runs"), zoom(doc, runs)] : null,
      noise.length ? [el("h2", {}, "Noise"), C.table("Throughput scatter per concurrency (newest segment)",
        [{ label: "Conc", num: true }, { label: "σ (%)", num: true }, { label: "Verdict band (%)", num: true },
          { label: "Assumed" }], noise)] : null);
  }

  window.InfxHistory = { configView };
})();
