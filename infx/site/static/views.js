/* infx results site: the overview, Pareto, coverage and verdict views. Each view takes its
 * data document (see infx/site/*.py) and returns the element to show. */
"use strict";

(function () {
  const C = window.InfxCharts;
  const { el, fmt, pct } = C;

  const VERDICTS = {
    regressed: ["▼", "regressed"],
    improved: ["▲", "improved"],
    unconfirmed: ["✕", "unconfirmed"],
    "within-noise": ["●", "within noise"],
    new: ["◆", "new"],
    missing: ["□", "missing"],
    "coverage-lost": ["□", "coverage lost"],
    "n/a": ["–", "n/a"],
  };

  /** A verdict as symbol and words (never colour alone). */
  function verdict(name) {
    const [symbol, words] = VERDICTS[name] || ["?", String(name)];
    return el("span", { class: "verdict v-" + String(name).replace(/[^a-z-]/g, "") },
      el("span", { "aria-hidden": "true" }, symbol + " "), words);
  }

  function index() {
    return (window.INFX_DATA || {}).index;
  }

  function run(i) {
    const r = index().runs[i];
    return r ? { id: r[0], sha: r[1], date: r[2], url: r[3], reused: r[4], receipts: r[6] === true } : null;
  }

  /** A run whose rows the history holds without the receipts that vouch for them says so. */
  function runText(i) {
    const r = run(i);
    if (!r) return "run ?";
    const text = `run ${r.id} · ${r.date.slice(0, 10)} · ${r.sha.slice(0, 7)}`;
    return r.receipts ? text : `${text} · no receipt`;
  }

  /** A link, only to http(s) addresses (data never injects a javascript: URL). */
  function extLink(url, text) {
    if (typeof url === "string" && /^https?:\/\//.test(url)) {
      return el("a", { href: url, rel: "noopener noreferrer" }, text);
    }
    return el("span", {}, text);
  }

  function runLink(i) {
    const r = run(i);
    return r ? extLink(r.url, runText(i)) : el("span", {}, "run ?");
  }

  function pageLink(model, scenario, text) {
    return el("a", { href: `#/pareto/${encodeURIComponent(model)}/${encodeURIComponent(scenario)}` },
      text);
  }

  function configLink(slug, text) {
    return el("a", { href: `#/config/${encodeURIComponent(slug)}` }, text);
  }

  /** How many main runs have passed since run `last`, and whether that makes it stale
   * (none of the newest `stale_after` runs measured it; `infx site build` sets the count). */
  function staleness(last) {
    const data = index();
    const behind = last === null || last === undefined ? null : data.runs.length - 1 - last;
    return { behind, stale: behind !== null && behind >= (data.stale_after || Infinity) };
  }

  /** "stale: last measured 12 runs ago, 2026-03-01", or null for a current config. */
  function staleText(last) {
    const { behind, stale } = staleness(last);
    if (!stale) return null;
    const r = run(last);
    return `stale: last measured ${behind} run(s) ago, ${r ? r.date.slice(0, 10) : "?"}`;
  }

  const FACETS = [["hardware", "hw", "Hardware"], ["framework", "fw", "Framework"],
    ["precision", "prec", "Precision"]];

  // --- overview ----------------------------------------------------------------------
  /** The overview; `params` (URLSearchParams of the hash after "?") holds its filters, so
   * a link keeps them: #/?hw=h200&fw=vllm&prec=fp8&q=text. */
  function overview(params) {
    const data = index();
    const asked = params || new URLSearchParams();
    const newest = data.runs.length ? data.runs.length - 1 : null;
    const filter = el("input", { type: "search", id: "config-filter", value: asked.get("q") || "",
      placeholder: "filter configs", "aria-label": "Filter configs by name" });
    const facets = data.facets || {};
    const selects = FACETS.map(([name, key, label]) => {
      const values = (facets[name] || []).map((v, i) => [v, i]).sort((a, b) => a[0].localeCompare(b[0]));
      const select = el("select", { id: `f-${key}`, "data-facet": name },
        el("option", { value: "" }, `any ${label.toLowerCase()}`),
        values.map(([v]) => el("option", { value: v }, v)));
      select.value = values.some(([v]) => v === asked.get(key)) ? asked.get(key) : "";
      return [name, key, label, select];
    });
    const rows = data.configs.map((c) => {
      const stale = staleText(c.last);
      return [configLink(c.slug, c.label), c.kind,
        c.last === null ? "–" : el("span", {}, runText(c.last),
          stale ? [" · ", el("strong", { class: "stale" }, stale)] : ""), String(c.steps)];
    });
    const list = C.table("Every config in main's history", [{ label: "Config" },
      { label: "Kind" }, { label: "Last measured" }, { label: "Steps", num: true }], rows,
    { id: "configs" });
    const trs = list.querySelectorAll("tbody tr");
    data.configs.forEach((c, i) => { if (staleness(c.last).stale) trs[i].classList.add("stale"); });
    const count = el("p", { id: "shown-count", "aria-live": "polite" });
    function apply(write) {
      const needle = filter.value.toLowerCase();
      const query = new URLSearchParams();
      for (const [, key, , select] of selects) if (select.value) query.set(key, select.value);
      if (filter.value) query.set("q", filter.value);
      let shown = 0;
      data.configs.forEach((c, i) => {
        const f = c.f || [];
        const fits = selects.every(([name, , , select], k) => !select.value ||
          (facets[name] || [])[f[k]] === select.value);
        trs[i].hidden = !fits || (needle !== "" && !trs[i].textContent.toLowerCase().includes(needle));
        shown += !trs[i].hidden;
      });
      count.textContent = `${shown} of ${data.configs.length} config(s) shown.`;
      const text = query.toString();
      if (write) history.replaceState(null, "", "#/" + (text ? "?" + text : ""));
    }
    filter.addEventListener("input", () => apply(true));
    for (const [, , , select] of selects) select.addEventListener("change", () => apply(true));
    apply(false);
    const stale = data.configs.filter((c) => staleness(c.last).stale).length;
    return el("section", {},
      el("h1", { tabindex: -1 }, "Benchmark results on main"),
      el("p", {}, `${data.runs.length} main run(s)`,
        newest === null ? "" : [", the newest ", runLink(newest)],
        `. Built ${data.generated_at} from ${data.source}.`),
      data.notes.length ? el("ul", { class: "notes" }, data.notes.map((n) => el("li", {}, n))) : null,
      el("h2", {}, "Pareto frontiers"),
      data.pages.length ? el("ul", { class: "pages" }, data.pages.map((p) => el("li", {},
        pageLink(p.model, p.scenario, p.title), ` (${p.curves} curve(s), ${p.points} point(s))`)))
        : el("p", {}, "No throughput results in the history yet."),
      data.prs.length ? [el("h2", {}, "Pull request overlays"), el("ul", {}, data.prs.map((p) =>
        el("li", {}, el("a", { href: `#/pr/${p.pr}` }, `PR #${p.pr}`), ": ", verdict(p.verdict))))]
        : null,
      el("h2", {}, "Configs"),
      stale ? el("p", {}, `${stale} config(s) are stale: none of the newest ${data.stale_after} ` +
        "main runs measured them; their numbers are not main's current ones.") : null,
      el("div", { class: "filters" }, filter, selects.map(([, , label, select]) =>
        el("label", {}, label, " ", select))),
      count, list);
  }

  // --- Pareto ------------------------------------------------------------------------
  function paretoView(doc) {
    const curves = doc.curves;
    const all = curves.flatMap((c) => c.points);
    const sigmaOf = (p) => p.sigma / 100;
    const xMax = Math.max(...all.map((p) => p.x)) * 1.04;
    const yMax = Math.max(...all.map((p) => p.y * (1 + sigmaOf(p)))) * 1.04;
    const f = C.frame({ title: `Throughput per GPU against interactivity, ${doc.title}`,
      desc: `${curves.length} curve(s) of ${all.length} point(s); both axes from zero.`,
      xLabel: "Interactivity (tok/s/user)", yLabel: "Throughput per GPU (tok/s/GPU)",
      xMax, yMax });
    const rows = [];
    curves.forEach((curve, i) => {
      const colour = C.COLOURS[i % C.COLOURS.length];
      const shape = C.SHAPES[i % C.SHAPES.length];
      const g = C.sv("g", { class: "curve", "data-curve": curve.label });
      const edge = curve.points.filter((p) => p.front).sort((a, b) => a.x - b.x);
      if (edge.length > 1) {
        const upper = edge.map((p) => `${f.x(p.x)},${f.y(p.y * (1 + sigmaOf(p)))}`);
        const lower = edge.slice().reverse().map((p) => `${f.x(p.x)},${f.y(p.y * (1 - sigmaOf(p)))}`);
        g.appendChild(C.sv("polygon", { class: "band", points: upper.concat(lower).join(" "),
          fill: colour, "aria-hidden": "true" }));
      }
      g.appendChild(C.sv("polyline", { class: "line", stroke: colour, fill: "none",
        points: curve.frontier.map((p) => `${f.x(p[0])},${f.y(p[1])}`).join(" "), "aria-hidden": "true" }));
      for (const p of curve.points) {
        const s = sigmaOf(p);
        if (s > 0) {
          g.appendChild(C.sv("line", { class: "errbar", stroke: colour, x1: f.x(p.x), x2: f.x(p.x),
            y1: f.y(p.y * (1 - s)), y2: f.y(p.y * (1 + s)), "aria-hidden": "true" }));
        }
        const stale = staleText(p.run);
        const mark = C.marker(shape, f.x(p.x), f.y(p.y), 5.5, { class: stale ? "pt stale" : "pt",
          fill: p.front ? colour : "#fff", stroke: colour, "stroke-width": 1.6, "data-config": p.c,
          "data-conc": p.conc, "stroke-dasharray": stale ? "2 2" : null });
        C.hover(mark, [`${curve.label} · ${p.par} · conc ${p.conc}`,
          `Throughput ${fmt(p.y)} tok/s/GPU`, `Interactivity ${fmt(p.x)} tok/s/user`,
          `Run-to-run scatter ±${fmt(p.sigma)}%${p.assumed ? " (assumed: short history)" : ""}; ` +
          `a new run within ±${fmt(p.band)}% is judged noise`,
          `TTFT p50 ${fmt(p.ttft)} ms · TPOT p50 ${fmt(p.tpot)} ms`,
          `Image ${p.image}`, runText(p.run) + (p.front ? "" : " · not on the frontier")]
          .concat(stale ? [stale] : []));
        mark.addEventListener("click", () => { location.hash = `#/config/${p.c}`; });
        g.appendChild(mark);
        rows.push([el("span", {}, C.swatch(shape, colour, !p.front), " ", curve.label),
          configLink(p.c, p.par), String(p.conc), fmt(p.x), fmt(p.y),
          `±${fmt(p.sigma)}${p.assumed ? " (assumed)" : ""}`,
          `±${fmt(p.band)}`, fmt(p.ttft), fmt(p.tpot), p.front ? "yes" : "no", p.image,
          el("span", {}, runLink(p.run), stale ? [" · ", el("strong", { class: "stale" }, stale)] : "")]);
      }
      f.plot.appendChild(g);
    });
    const legend = C.legend(curves.map((c, i) => ({ shape: C.SHAPES[i % C.SHAPES.length],
      colour: C.COLOURS[i % C.COLOURS.length], label: c.label }))
      .concat([{ shape: "circle", colour: "#555", hollow: true, label: "hollow: not on its curve's frontier" }])
      .concat(all.some((p) => staleness(p.run).stale) ? [{ shape: "circle", colour: "#555", hollow: true,
        stale: true, label: `faded, dotted outline: stale (none of the newest ${index().stale_after} runs measured it)` }] : []));
    const dataTable = C.table(`Every point of ${doc.title}`, [{ label: "Curve" }, { label: "Config" },
      { label: "Conc", num: true }, { label: "Interactivity (tok/s/user)", num: true },
      { label: "Throughput/GPU (tok/s/GPU)", num: true }, { label: "Scatter σ (%)", num: true },
      { label: "Verdict band (%)", num: true }, { label: "TTFT p50 (ms)", num: true },
      { label: "TPOT p50 (ms)", num: true }, { label: "Frontier" }, { label: "Image" }, { label: "Run" }],
    rows);
    return el("section", {},
      el("h1", { tabindex: -1 }, `Pareto frontier: ${doc.title}`),
      el("p", {}, "Each curve is one hardware/framework/precision family: every config (parallelism) ",
        "at its latest main run, joined along its frontier. Bars and the shaded band: ±1 σ, the ",
        "run-to-run scatter of the point's throughput over main's history (infx's noise model; ",
        "assumed 2 % where the history is too short). Hover or focus a point for its numbers; ",
        "click it for its config's history (on a touch screen: tap for the numbers, tap again to open)."),
      C.figure(`Throughput per GPU against interactivity (${doc.title})`, f.svg, legend, dataTable),
      el("h2", {}, "Configs on this page"),
      el("ul", {}, curves.map((c) => el("li", {}, c.label, ": ",
        c.configs.map((cfg, j) => [j ? ", " : "", configLink(cfg.slug, cfg.par)])))));
  }

  // --- coverage ----------------------------------------------------------------------
  function coverageView(doc) {
    const configs = doc.configs;
    const behind = configs.filter((c) => c.behind > 0).length;
    const dropped = configs.filter((c) => c.dropped.length).length;
    const leftOut = configs.filter((c) => c.left_out_by !== null).length;
    const only = el("input", { type: "checkbox", id: "gaps-only" });
    const rows = configs.map((c) => [configLink(c.slug, c.label), c.kind, String(c.runs),
      runLink(c.first), runLink(c.last), String(c.behind), c.concs.join(", "),
      c.dropped.length ? el("strong", {}, c.dropped.join(", ")) : "–",
      c.left_out_by === null ? "–" : runLink(c.left_out_by)]);
    const list = C.table("What main measured, and what newer runs no longer cover",
      [{ label: "Config" }, { label: "Kind" }, { label: "Runs", num: true }, { label: "First" },
        { label: "Last" }, { label: "Runs since", num: true }, { label: "Concurrencies in its last run" },
        { label: "Points its last run dropped (conc)" }, { label: "Left out by a newer run of its family" }],
      rows, { id: "coverage" });
    const trs = list.querySelectorAll("tbody tr");
    only.addEventListener("change", () => configs.forEach((c, i) => {
      trs[i].hidden = only.checked && !(c.behind || c.dropped.length || c.left_out_by !== null);
    }));
    return el("section", {},
      el("h1", { tabindex: -1 }, "Coverage"),
      el("p", {}, `${configs.length} config(s) measured on main; ${behind} not in the newest run ` +
        `(${doc.newest === null ? "none" : runText(doc.newest)}); ${dropped} whose last run ` +
        `dropped points an earlier run measured; ${leftOut} left out by a newer run of their family.`),
      el("label", {}, only, " Only configs with a gap"), list);
  }

  // --- verdict history -----------------------------------------------------------------
  function verdictsView(doc) {
    const repo = index().repo_url;
    const overlays = new Set(index().prs.map((p) => p.pr));
    const rows = doc.verdicts.map((v) => {
      const ack = v.ack ? [v.ack.by === "label" ? `label ${v.ack.who}` : `comment by @${v.ack.who}`,
        v.ack.url ? [" (", extLink(v.ack.url, "link"), ")"] : ""] : (v.failing ? "no" : "–");
      const p = v.points;
      return [repo ? extLink(`${repo}/pull/${v.pr}`, `#${v.pr}`) : `#${v.pr}`,
        v.run === null ? "–" : (repo ? extLink(`${repo}/actions/runs/${v.run}`, String(v.run)) : String(v.run)),
        verdict(v.verdict), v.passed ? "passes" : el("strong", {}, "fails"), el("span", {}, ack),
        `${p.improved || 0} / ${p.regressed || 0} / ${p["within-noise"] || 0} / ${p.new || 0} / ${p.missing || 0}`,
        v.reused_by === null ? "–" : ["yes, by ", runLink(v.reused_by)],
        overlays.has(v.pr) ? el("a", { href: `#/pr/${v.pr}` }, "overlay") : "–", v.file];
    });
    const judged = new Set(doc.verdicts.map((v) => v.pr)).size;
    const regressed = doc.verdicts.filter((v) => v.verdict === "regressed").length;
    const acked = doc.verdicts.filter((v) => v.ack).length;
    return el("section", {},
      el("h1", { tabindex: -1 }, "Verdict history"),
      el("p", {}, `${doc.verdicts.length} verdict(s) of ${judged} pull request(s): ${regressed} ` +
        `regressed, ${acked} acknowledged.`),
      C.table("Pull requests judged against main", [{ label: "PR" }, { label: "Run" },
        { label: "Verdict" }, { label: "Gate" }, { label: "Acknowledged" },
        { label: "Points ▲ / ▼ / ● / new / missing" }, { label: "Reused on main" },
        { label: "Overlay" }, { label: "File" }], rows, { id: "verdicts" }));
  }

  window.InfxViews = { overview, staleness, staleText, paretoView, coverageView, verdictsView, verdict, run, runText,
    runLink, extLink, configLink, pageLink, index };
})();
