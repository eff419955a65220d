/* infx results site: a pull request's run drawn over main's curves, each point with the
 * verdict `infx results compare` gave it (shape and words, not colour alone). */
"use strict";

(function () {
  const C = window.InfxCharts;
  const V = window.InfxViews;
  const { el, fmt, pct } = C;

  // verdict -> [marker shape, colour]
  const LOOK = {
    regressed: ["down", "#B00020"],
    improved: ["triangle", "#00734A"],
    unconfirmed: ["cross", "#9A5B00"],
    "within-noise": ["circle", "#0072B2"],
    new: ["diamond", "#6A3D9A"],
    missing: ["square", "#000000"],
  };
  const MAIN = "#6B6B6B";

  /** Where a point's label goes: beside its mark, else moved down or up a line, else
   * nowhere (its numbers stay in the tooltip and the table), so no two labels overlap.
   * `placed` holds the boxes taken, [x0, y0, x1, y1]; text is about 6.6 px a character. */
  function place(placed, x, y, text) {
    const width = text.length * 6.6;
    for (const dy of [0, 14, -14, 28, -28, 42, -42]) {
      const box = [x, y + dy - 11, x + width, y + dy + 3];
      if (placed.every((b) => box[2] < b[0] || box[0] > b[2] || box[3] < b[1] || box[1] > b[3])) {
        placed.push(box);
        return y + dy;
      }
    }
    return null;
  }

  function configChart(config) {
    const placed = [];
    const points = config.points;
    const xs = [];
    const ys = [];
    for (const p of points) {
      for (const q of [p.main, p.pr]) if (q) { xs.push(q[0]); ys.push(q[1]); }
      if (p.main && p.band) ys.push(p.main[1] * (1 + p.band / 100));
    }
    for (const q of config.frontier) { xs.push(q[0]); ys.push(q[1]); }
    const f = C.frame({ title: `PR against main: ${config.label}`,
      desc: "Main's level per concurrency with its verdict band, and this run's points by verdict; both axes from zero.",
      xLabel: "Interactivity (tok/s/user)", yLabel: "Throughput per GPU (tok/s/GPU)",
      xMax: Math.max(...xs, 1) * 1.08, yMax: Math.max(...ys, 1) * 1.06 });
    const main = points.filter((p) => p.main).sort((a, b) => a.conc - b.conc);
    if (config.frontier.length > 1) {
      f.plot.appendChild(C.sv("polyline", { class: "line frontier", stroke: MAIN, fill: "none",
        "stroke-dasharray": "6 4", points: config.frontier.map((q) => `${f.x(q[0])},${f.y(q[1])}`).join(" "),
        "aria-hidden": "true" }));
    }
    f.plot.appendChild(C.sv("polyline", { class: "line", stroke: MAIN, fill: "none",
      points: main.map((p) => `${f.x(p.main[0])},${f.y(p.main[1])}`).join(" "), "aria-hidden": "true" }));
    for (const p of main) {
      if (p.band) {
        f.plot.appendChild(C.sv("line", { class: "errbar", stroke: MAIN, x1: f.x(p.main[0]),
          x2: f.x(p.main[0]), y1: f.y(p.main[1] * (1 - p.band / 100)),
          y2: f.y(p.main[1] * (1 + p.band / 100)), "aria-hidden": "true" }));
      }
      const mark = C.marker(p.status === "missing" ? "square" : "circle", f.x(p.main[0]), f.y(p.main[1]), 5,
        { class: "main-pt", fill: "#fff", stroke: p.status === "missing" ? "#000" : MAIN,
          "stroke-width": 1.6, "data-conc": p.conc });
      C.hover(mark, [`main · conc ${p.conc}`, `Throughput ${fmt(p.main[1])} tok/s/GPU`,
        `Interactivity ${fmt(p.main[0])} tok/s/user`,
        p.band ? `Verdict band ±${fmt(p.band)}%` : "no band", p.status === "missing" ? "this run did not measure it: missing" : ""]
        .filter(Boolean));
      f.plot.appendChild(mark);
      const at = p.status === "missing" && place(placed, f.x(p.main[0]) + 8, f.y(p.main[1]) + 4,
        `conc ${p.conc} missing`);
      if (at !== false && at !== null) {
        f.plot.appendChild(C.sv("text", { class: "pt-label", x: f.x(p.main[0]) + 8, y: at },
          `conc ${p.conc} missing`));
      }
    }
    const mine = points.filter((p) => p.pr).sort((a, b) => a.conc - b.conc);
    f.plot.appendChild(C.sv("polyline", { class: "line pr-line", stroke: "#222", fill: "none",
      "stroke-width": 0.8, points: mine.map((p) => `${f.x(p.pr[0])},${f.y(p.pr[1])}`).join(" "), "aria-hidden": "true" }));
    for (const p of mine) {
      const [shape, colour] = LOOK[p.verdict] || LOOK["within-noise"];
      const mark = C.marker(shape, f.x(p.pr[0]), f.y(p.pr[1]), 6.5, { class: "pr-pt", fill: colour,
        stroke: "#fff", "stroke-width": 1, "data-verdict": p.verdict, "data-conc": p.conc });
      const words = p.verdict.replace("-", " ");
      C.hover(mark, [`this run · conc ${p.conc}: ${words}`, `Throughput ${fmt(p.pr[1])} tok/s/GPU` +
        (p.change === null ? "" : ` (${pct(p.change)} against main's level, band ±${fmt(p.band)}%)`),
        `Interactivity ${fmt(p.pr[0])} tok/s/user`].concat(p.checks.filter((c) => c.verdict === "regressed" ||
        c.verdict === "improved").map((c) => `${c.label} ${fmt(c.before)} → ${fmt(c.after)} ${c.unit} (${pct(c.change)}): ${c.verdict}`)));
      f.plot.appendChild(mark);
      if (p.verdict !== "within-noise") {
        // The checks that made the verdict (the first two), as the comment's row says them.
        const why = p.checks.filter((c) => c.verdict === p.verdict).slice(0, 2)
          .map((c) => `${c.label} ${pct(c.change)}`).join(", ");
        const text = `conc ${p.conc} ${words}${why ? ": " + why : ""}`;
        const at = place(placed, f.x(p.pr[0]) + 9, f.y(p.pr[1]) - 7, text);
        if (at !== null) {
          f.plot.appendChild(C.sv("text", { class: "pt-label v-" + p.verdict, x: f.x(p.pr[0]) + 9,
            y: at }, text));
        }
      }
    }
    const legend = C.legend([
      { shape: "circle", colour: MAIN, hollow: true, label: "main's level (bar: verdict band)" },
      { shape: "down", colour: LOOK.regressed[1], label: "regressed" },
      { shape: "triangle", colour: LOOK.improved[1], label: "improved" },
      { shape: "cross", colour: LOOK.unconfirmed[1], label: "unconfirmed (suggestive: more runs would settle it)" },
      { shape: "circle", colour: LOOK["within-noise"][1], label: "within noise" },
      { shape: "diamond", colour: LOOK.new[1], label: "new (main never measured it)" },
      { shape: "square", colour: "#000", hollow: true, label: "missing (main measured it, this run did not)" }]);
    const checkCell = (p, key) => {
      const c = p.checks.find((k) => k.metric === key);
      return c ? `${fmt(c.before)} → ${fmt(c.after)}${c.change === null ? "" : ` (${pct(c.change)})`}` : "–";
    };
    const rows = points.map((p) => [String(p.conc), V.verdict(p.verdict), p.status,
      p.main ? fmt(p.main[1]) : "–", p.pr ? fmt(p.pr[1]) : "–", pct(p.change),
      p.band === null ? "–" : `±${fmt(p.band)}`, p.main ? fmt(p.main[0]) : "–", p.pr ? fmt(p.pr[0]) : "–",
      checkCell(p, "median_ttft"), checkCell(p, "p99_ttft"), checkCell(p, "median_tpot"), checkCell(p, "p99_tpot")]);
    const dataTable = C.table(`Points of ${config.label}: main against this run`, [{ label: "Conc", num: true },
      { label: "Verdict" }, { label: "Status" }, { label: "Main tput/GPU (tok/s/GPU)", num: true },
      { label: "This run (tok/s/GPU)", num: true }, { label: "Change", num: true }, { label: "Band (%)", num: true },
      { label: "Main interactivity (tok/s/user)", num: true }, { label: "This run (tok/s/user)", num: true },
      { label: "TTFT p50 (ms)" }, { label: "TTFT p99 (ms)" }, { label: "TPOT p50 (ms)" }, { label: "TPOT p99 (ms)" }], rows);
    return C.figure(`${config.label}: this run over main`, f.svg, legend, dataTable);
  }

  function measure(name, m) {
    if (!m) return null;
    return el("li", {}, `${name}: ${pct(m.change)} (band ±${fmt(m.band)}%) `, V.verdict(m.verdict));
  }

  function prView(doc) {
    const repo = V.index().repo_url;
    const gate = doc.gate;
    const ack = gate.acknowledged;
    const counts = doc.points;
    // Only the configs this run swept are drawn; the others (main measured them, this run
    // did not) are one collapsed line naming each with its verdict.
    const unswept = doc.configs.filter((config) => config.swept === false);
    const sections = doc.configs.filter((config) => config.swept !== false).map((config) => el("section", { class: "pr-config", "data-verdict": config.verdict },
      el("h2", {}, config.slug ? V.configLink(config.slug, config.label) : config.label, " ", V.verdict(config.verdict)),
      el("p", {}, `Main's history: ${config.history_runs} run(s).`, config.only_main ? " Main measured this config; this run did not." : ""),
      el("ul", {}, measure("Throughput per GPU at matched interactivity", config.curve),
        measure("Throughput per GPU at equal concurrency", config.level)),
      config.kind === "throughput" && config.points.some((p) => p.main || p.pr) ? configChart(config) : null,
      config.scores.length ? C.table(`Accuracy of ${config.label}`, [{ label: "Conc", num: true },
        { label: "Task" }, { label: "Metric" }, { label: "Main", num: true }, { label: "This run", num: true },
        { label: "Verdict" }], config.scores.map((s) => [String(s.conc), s.task, `${s.metric},${s.filter}`,
        fmt(s.before), fmt(s.after), V.verdict(s.verdict)])) : null));
    return el("section", {},
      el("h1", { tabindex: -1 }, `PR #${doc.pr} against main: `, V.verdict(doc.verdict)),
      el("p", {}, repo ? V.extLink(`${repo}/pull/${doc.pr}`, `Pull request #${doc.pr}`) : `Pull request #${doc.pr}`,
        doc.run.url ? [" · ", V.extLink(doc.run.url, `run ${doc.run.id}`)] : "",
        `. Gate: ${gate.passed ? "passes" : "fails"}`,
        ack ? ` (acknowledged by ${ack.by === "label" ? "label " + ack.who : "@" + ack.who})` : "",
        `. Points: ${counts.improved} improved · ${counts.regressed} regressed · ${counts["within-noise"]} ` +
        `within noise · ${counts.new} new · ${counts.missing} missing. Judged against ${doc.history_runs} ` +
        `main run(s) with a ${fmt(doc.threshold)}% floor, as \`infx results compare\` judges it.`),
      doc.notes.length ? el("ul", { class: "notes" }, doc.notes.map((n) => el("li", {}, n))) : null,
      sections,
      unswept.length ? el("details", { class: "unswept", id: "unswept" },
        el("summary", {}, `${unswept.length} config(s) of main's history this run did not sweep`),
        el("ul", {}, unswept.map((config) => el("li", {},
          config.slug ? V.configLink(config.slug, config.label) : config.label, " ",
          V.verdict(config.verdict))))) : null);
  }

  window.InfxOverlay = { prView };
})();
