"""The site's pure parts: shaping history rows into each view's document, without a
database, git or browser."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from infx.site.build import SiteFacts, build_site, repo_url, step_ranges
from infx.site.coverage import coverage_doc
from infx.site.explain import EXPLAINED, UNEXPLAINED, UNKNOWN, explain, explains
from infx.site.history_view import config_doc
from infx.site.model import (
    ChangelogEntry,
    ConfigHistory,
    HistoryFacts,
    Master,
    PointSeries,
    Range,
    Run,
    VerdictRecord,
)
from infx.site.pareto import curve_label, frontier, pages
from infx.site.shape import data_file, num, parallelism, scenario_name
from infx.site.steps import ConfigSteps, analyse_all
from infx.site.verdicts import verdicts_doc

IDENTITY = {
    "scenario": "fixed-seq-len",
    "runner": "h200",
    "hardware": "h200",
    "model": "synthetic/llama-1b",
    "model-prefix": "l1b",
    "framework": "vllm",
    "precision": "bf16",
    "multinode": False,
    "disagg": False,
    "spec-decoding": "none",
    "isl": 512,
    "osl": 128,
    "tp": 1,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "ep": 1,
    "dp-attn": False,
}


def config_steps(config: ConfigHistory) -> ConfigSteps:
    """One config read alone, as the site reads every config."""
    return analyse_all([config])[config.slug]


def runs(count: int) -> tuple[Run, ...]:
    return tuple(
        Run(i, 100 + i, 1, f"{i:040x}", f"https://github.com/acme/bench/actions/runs/{100 + i}",
            f"2026-01-{1 + i % 28:02d}T00:00:00Z")
        for i in range(count)
    )  # fmt: skip


def config(
    identity: dict[str, Any],
    measured: dict[int, list[int]],
    *,
    step_at: int | None = None,
    factor: float = 0.85,
    seed: int = 0,
    slug: str = "c1",
    by_run: Any = None,
) -> ConfigHistory:
    """A throughput config measured at `measured` (conc -> run indexes), 1 % noise, its
    throughput scaled by `factor` (latencies divided) from run `step_at` on, or by
    `by_run(run)` in each run."""
    rng = np.random.default_rng(seed)
    made = ConfigHistory(slug, json.dumps(identity, sort_keys=True), "throughput", identity,
                         f"label {slug}")  # fmt: skip
    for conc, at in measured.items():
        series = PointSeries(conc)
        for run in at:
            f = factor if step_at is not None and run >= step_at else 1.0
            f = by_run(run) if by_run is not None else f
            shock = np.exp(0.01 * rng.standard_normal(5))  # each metric its own noise
            tpot = 0.01 * (1 + conc / 100) / f * shock[1]
            series.add(run, "img:a" if f == 1 else "img:b",
                       (100.0 * conc * f * shock[0], 1 / tpot, 0.05 / f * shock[2],
                        0.1 / f * shock[3], tpot, 0.015 / f * shock[4]))  # fmt: skip
        made.points[conc] = series
    return made


def test_frontier_keeps_the_points_nothing_beats() -> None:
    points = [(10.0, 100.0), (20.0, 80.0), (15.0, 70.0), (30.0, 20.0), (5.0, 90.0)]
    assert frontier(points) == [(10.0, 100.0), (20.0, 80.0), (30.0, 20.0)]


def test_names_of_curves_and_pages() -> None:
    assert curve_label(IDENTITY) == "h200 · vllm · bf16"
    spec = IDENTITY | {"spec-decoding": "mtp", "runner": "cluster:h200", "disagg": True}
    assert curve_label(spec) == "h200 · vllm · bf16 · mtp · disagg · on cluster:h200"
    assert scenario_name(IDENTITY) == "512x128"
    assert scenario_name({"scenario": "agentic-coding"}) == "agentic-coding"
    assert parallelism(IDENTITY | {"tp": 8, "ep": 8, "dp-attn": True}) == "tp8 ep8 dpa"
    assert num(1234.5678) == 1235.0 and num(float("nan")) is None and num(None) is None


def test_a_data_file_cannot_end_its_script_element() -> None:
    text = data_file("config/x", {"image": "</script><script>alert(1)</script>"}).decode()
    assert "</script" not in text and "<" not in text
    assert text.startswith('(window.INFX_DATA=window.INFX_DATA||{})["config/x"]=')
    payload = json.loads(text.split("]=", 1)[1].rstrip(";\n"))
    assert payload == {"image": "</script><script>alert(1)</script>"}


def test_a_step_of_the_whole_config_is_found_where_it_happened() -> None:
    made = config(IDENTITY, {c: list(range(20)) for c in (1, 4, 16)}, step_at=12)
    found = config_steps(made)
    (step,) = found.steps
    assert (step.run, step.before, step.joint) == (12, 11, True)
    moved = {(m.conc, m.metric): m.change_pct for m in step.moved}
    assert moved[(16, "tput_per_gpu")] == pytest.approx(-15, abs=2)
    assert moved[(16, "median_tpot")] == pytest.approx(100 / 0.85 - 100, abs=2)
    assert set(found.noise) == {1, 4, 16}
    assert all(n.sigma_pct < 3 and not n.assumed for n in found.noise.values())


def test_a_quiet_history_has_no_step_and_a_short_one_assumes_its_scatter() -> None:
    assert config_steps(config(IDENTITY, {c: list(range(20)) for c in (1, 4)})).steps == ()
    short = config_steps(config(IDENTITY, {4: [0]}))
    assert short.steps == () and short.noise[4].assumed
    assert short.noise[4].sigma_pct == pytest.approx(2.0, abs=0.01)


def test_one_bad_run_is_an_outlier_not_a_step() -> None:
    """A flaky node: run 10 of 20 came out 30 % slow in every point and metric. Before, it
    showed as 3 or 4 unexplained steps; it is one outlier, and no step."""
    made = config(IDENTITY, {c: list(range(20)) for c in (1, 4, 16)},
                  by_run=lambda run: 0.7 if run == 10 else 1.0)  # fmt: skip
    found = config_steps(made)
    assert found.steps == () and found.outliers == (10,) and found.drift == ()
    assert all(n.sigma_pct < 3 for n in found.noise.values())  # the bad run is not noise


def test_a_drift_is_one_line_not_a_staircase() -> None:
    """Main slows 0.5 % a run for 30 runs (a machine wearing): before, 14 steps; now one
    drift, said per run, and no step."""
    made = config(IDENTITY, {c: list(range(30)) for c in (1, 4, 16)},
                  by_run=lambda run: 0.995**run)  # fmt: skip
    found = config_steps(made)
    assert found.steps == () and found.outliers == ()
    drift = dict(found.drift)
    assert drift["tput_per_gpu"] == pytest.approx(-0.5, abs=0.15)
    assert drift["median_tpot"] == pytest.approx(0.5, abs=0.15)


def test_a_step_spans_back_to_the_series_last_value() -> None:
    """A concurrency measured only in some runs: the range reaches back to its own last
    run, so an entry that landed between then and the step still explains it."""
    made = config(IDENTITY, {4: list(range(20)), 16: [0, 2, 4, 6, 8, 14, 16, 18]}, step_at=12)
    (step,) = config_steps(made).steps
    assert step.run == 12 and step.before == 8


def entry(keys: tuple[str, ...], masters: tuple[Master, ...], scenarios=()) -> ChangelogEntry:
    return ChangelogEntry("https://github.com/acme/bench/pull/9", ("Eager attention.",), keys,
                          scenarios, masters)  # fmt: skip


def test_an_entry_explains_the_configs_its_master_configs_describe() -> None:
    l1b = Master("l1b-bf16-h200-vllm", "l1b", "h200", "vllm", "bf16")
    other = Master("x", "l1b", "h200", "sglang", "bf16")
    assert explains(entry(("l1b-*",), (l1b,)), IDENTITY)
    assert explains(entry(("l1b-*",), (Master("k", "L1B ", "h200", "vLLM", "bf16"),)), IDENTITY)
    assert not explains(entry(("x",), (other,)), IDENTITY)
    assert not explains(entry(("l1b-*",), (l1b,), ("agentic-coding",)), IDENTITY)
    found = Range("a", "b", (entry(("x",), (other,)), entry(("l1b-*",), (l1b,))))
    why = explain(found, IDENTITY)
    assert why.status == EXPLAINED and [e.config_keys for e in why.entries] == [("l1b-*",)]
    assert explain(Range("a", "b", ()), IDENTITY).status == UNEXPLAINED
    gone = explain(Range("a", "b", None, "commit a is not in /repo"), IDENTITY)
    assert (gone.status, gone.note) == (UNKNOWN, "commit a is not in /repo")


def test_a_config_page_labels_each_step_with_its_range() -> None:
    history = runs(20)
    made = config(IDENTITY, {c: list(range(20)) for c in (1, 4)}, step_at=12)
    found = config_steps(made)
    facts = HistoryFacts(history, (made,), "test")
    # The step's range, and what landed with each run (a config page's changelog per run).
    pairs = {(history[r - 1].sha, history[r].sha) for r in range(1, 20)}
    assert step_ranges(facts, {made.slug: found}) == pairs
    assert step_ranges(facts, {}) == pairs
    l1b = Master("l1b-bf16-h200-vllm", "l1b", "h200", "vllm", "bf16")
    ranges = {(history[11].sha, history[12].sha): Range("", "", (entry(("l1b-*",), (l1b,)),))}
    doc = config_doc(made, history, found, ranges)
    (step,) = doc["steps"]
    assert step["status"] == "explained" and step["run"] == 12 and step["before"] == 11
    assert step["entries"] == [{"pr_link": "https://github.com/acme/bench/pull/9",
                                "description": ["Eager attention."], "keys": ["l1b-*"]}]  # fmt: skip
    assert doc["landed"] == {"12": {"entries": step["entries"], "note": ""}}  # that run only
    assert doc["images"] == ["img:a", "img:b"]
    assert len(doc["series"]["4"]["runs"]) == 20
    assert doc["series"]["4"]["m"]["median_tpot"][0] == pytest.approx(10.4, rel=0.05)  # ms
    assert config_doc(made, history, found, {})["steps"][0]["status"] == "unknown"


def test_pareto_pages_draw_each_config_at_its_latest_run() -> None:
    tp1 = config(IDENTITY, {1: [0, 1, 2], 4: [0, 1, 2], 16: [0, 1]}, slug="tp1")
    tp2 = config(IDENTITY | {"tp": 2}, {1: [0, 1, 2], 4: [1, 2]}, slug="tp2", seed=1)
    other = config(IDENTITY | {"hardware": "b200", "runner": "b200"}, {1: [2]}, slug="b200")
    agentic = config(IDENTITY | {"scenario": "agentic-coding"}, {1: [1]}, slug="ag")
    steps = {c.slug: config_steps(c) for c in (tp1, tp2, other, agentic)}
    found = {p.route: p for p in pages([tp1, tp2, other, agentic], steps)}
    assert set(found) == {"l1b/512x128", "l1b/agentic-coding"}
    curves = {c["label"]: c for c in found["l1b/512x128"].doc["curves"]}
    assert set(curves) == {"h200 · vllm · bf16", "b200 · vllm · bf16"}
    h200 = curves["h200 · vllm · bf16"]
    # tp1's conc 16 was not measured by its latest run (2): left out; every point is run 2's
    assert sorted((p["c"], p["conc"]) for p in h200["points"]) == [
        ("tp1", 1), ("tp1", 4), ("tp2", 1), ("tp2", 4)]  # fmt: skip
    assert {p["run"] for p in h200["points"]} == {2}
    assert [tuple(p) for p in h200["frontier"]] == frontier(
        [(p["x"], p["y"]) for p in h200["points"]]
    )
    assert all(p["sigma"] is not None and p["band"] >= 2 for p in h200["points"])


def test_coverage_names_dropped_points_and_configs_left_out() -> None:
    history = runs(4)
    tp1 = config(IDENTITY, {1: [0, 1, 3], 4: [0, 1]}, slug="tp1")
    tp2 = config(IDENTITY | {"tp": 2}, {1: [0, 1]}, slug="tp2")
    rows = {r["slug"]: r for r in coverage_doc([tp1, tp2], history)["configs"]}
    assert rows["tp1"] | {"label": None} == rows["tp1"] | {
        "label": None, "runs": 3, "first": 0, "last": 3, "behind": 0, "concs": [1],
        "dropped": [4], "left_out_by": None}  # fmt: skip
    assert rows["tp2"]["behind"] == 2 and rows["tp2"]["left_out_by"] == 3


def test_the_verdict_page_says_who_acknowledged_and_which_main_run_reused() -> None:
    history = (*runs(2), Run(2, 900, 1, "f" * 40, "u", "2026-02-01T00:00:00Z", reused_from=77))
    doc = {
        "verdict": "regressed",
        "gate": {"passed": True, "failing": True,
                 "acknowledged": {"by": "comment", "who": "maint", "url": "https://x/1"}},
        "points": {"improved": 0, "regressed": 2, "within-noise": 6, "new": 0, "missing": 0},
        "configs_by_verdict": {}, "method": {"history_runs": 10},
    }  # fmt: skip
    rows = verdicts_doc(
        [VerdictRecord(5, 77, "pr-5-run-77.json", doc), VerdictRecord(9, None, "pr-9.json", doc)],
        history,
    )["verdicts"]
    assert [(r["pr"], r["reused_by"]) for r in rows] == [(9, None), (5, 2)]
    assert rows[1]["ack"] == {"by": "comment", "who": "maint", "url": "https://x/1"}
    assert rows[1]["failing"] and rows[1]["passed"]


def test_a_site_splits_its_data_per_view() -> None:
    history = runs(6)
    made = config(IDENTITY, {1: list(range(6)), 4: list(range(6))})
    facts = SiteFacts(
        HistoryFacts(history, (made,), "sqlite:///h"), {made.slug: config_steps(made)}, {},
        "2026-12-01T00:00:00Z", verdicts=None, notes=("a note",),
    )  # fmt: skip
    site = build_site(facts)
    assert sorted(site.files) == [
        "data/config/c1.js", "data/coverage.js", "data/index.js", "data/pareto/l1b--512x128.js"]  # fmt: skip
    index = json.loads(site.files["data/index.js"].decode().split("]=", 1)[1].rstrip(";\n"))
    assert index["repo_url"] == "https://github.com/acme/bench"
    assert index["verdicts"] is None and index["notes"] == ["a note"]
    assert [p["points"] for p in index["pages"]] == [2]
    assert repo_url(runs(1)) == "https://github.com/acme/bench"
    assert "1 Pareto page(s), 1 config page(s), 0 PR overlay(s)" in site.describe()
