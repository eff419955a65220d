/* infx results site: routes (#/pareto/<model>/<scenario>, #/config/<slug>, #/pr/<n>,
 * #/verdicts, #/coverage) and the data each loads. Data files are <script> elements that
 * hand their document to window.INFX_DATA: fetch() is refused under file://, a script is not,
 * and every file lies inside the site folder. */
"use strict";

(function () {
  const C = window.InfxCharts;
  const V = window.InfxViews;
  const { el } = C;
  const SAFE = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
  const loading = new Map();

  function store() {
    return (window.INFX_DATA = window.INFX_DATA || {});
  }

  /** The document `key`, loading data/<file>.js once. */
  function load(key, file) {
    if (store()[key]) return Promise.resolve(store()[key]);
    if (!loading.has(key)) {
      loading.set(key, new Promise((resolve, reject) => {
        const script = el("script", { src: `data/${file}.js` });
        script.addEventListener("load", () => (store()[key] ? resolve(store()[key])
          : reject(new Error(`data/${file}.js holds no ${key}`))));
        script.addEventListener("error", () => {
          loading.delete(key);
          script.remove();
          reject(new Error(`no data file data/${file}.js: this build has no such page`));
        });
        document.head.appendChild(script);
      }));
    }
    return loading.get(key);
  }

  /** [view name, data key, data file] of a route, or null. */
  function route(parts) {
    if (!parts.every((p) => SAFE.test(p))) return null;
    const [name, a, b] = parts;
    if (!name || name === "overview") return ["overview", null, null];
    if (name === "pareto" && a && b && parts.length === 3) return ["pareto", `pareto/${a}/${b}`, `pareto/${a}--${b}`];
    if (name === "config" && a && parts.length === 2) return ["config", `config/${a}`, `config/${a}`];
    if (name === "pr" && /^\d+$/.test(a || "") && parts.length === 2) return ["pr", `pr/${a}`, `pr/${a}`];
    if ((name === "verdicts" || name === "coverage") && parts.length === 1) return [name, name, name];
    return null;
  }

  const VIEWS = {
    overview: () => V.overview(new URLSearchParams(location.hash.split("?")[1] || "")),
    pareto: (doc) => V.paretoView(doc),
    config: (doc) => window.InfxHistory.configView(doc),
    pr: (doc) => window.InfxOverlay.prView(doc),
    verdicts: (doc) => V.verdictsView(doc),
    coverage: (doc) => V.coverageView(doc),
  };

  function show(view, name) {
    const main = document.getElementById("view");
    C.hideTip();
    main.replaceChildren(view);
    main.setAttribute("data-ready", name);
    document.querySelectorAll("nav a").forEach((a) => {
      const here = location.hash.split("?")[0];
      if (a.getAttribute("href") === here || (!here && a.getAttribute("href") === "#/")) {
        a.setAttribute("aria-current", "page");
      } else {
        a.removeAttribute("aria-current");
      }
    });
    const heading = main.querySelector("h1");
    if (heading) {
      document.title = `${heading.textContent} · infx results`;
      if (document.activeElement && document.activeElement !== document.body) heading.focus();
    }
  }

  function failed(message) {
    show(el("section", { class: "error" }, el("h1", { tabindex: -1 }, "Page not found"),
      el("p", {}, message), el("p", {}, el("a", { href: "#/" }, "Back to the overview"))), "error");
  }

  function render() {
    const path = location.hash.split("?")[0];
    const parts = path.replace(/^#\/?/, "").split("/").filter(Boolean).map((p) => {
      try { return decodeURIComponent(p); } catch (e) { return "\u0000"; }
    });
    const found = route(parts);
    if (!store().index) {
      failed("data/index.js did not load: build the site with `infx site build`.");
      return;
    }
    if (!found) {
      failed(`No view at ${location.hash}.`);
      return;
    }
    const [name, key, file] = found;
    if (name === "verdicts" && store().index.verdicts === null) {
      show(el("section", {}, el("h1", { tabindex: -1 }, "Verdict history"),
        el("p", {}, "This build was given no verdict documents (infx site build --verdicts DIR).")),
      name);
      return;
    }
    if (!key) {
      try {
        show(VIEWS[name](), name);
      } catch (error) {
        failed(`this page could not be drawn: ${error.message}`);
      }
      return;
    }
    const asked = location.hash;
    document.getElementById("view").setAttribute("data-ready", "loading");
    load(key, file).then((doc) => {
      if (location.hash !== asked) return; // the reader moved on
      try {
        show(VIEWS[name](doc), name);
      } catch (error) {
        failed(`this page could not be drawn: ${error.message}`);
      }
    }, (error) => failed(error.message));
  }

  // The skip link moves focus to the view without changing the hash (the hash is the route).
  document.getElementById("skip").addEventListener("click", (event) => {
    event.preventDefault();
    const main = document.getElementById("view");
    (main.querySelector("h1") || main).focus();
  });
  window.addEventListener("hashchange", render);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", render);
  } else {
    render();
  }
})();
