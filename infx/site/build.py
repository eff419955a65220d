"""`infx site build` as a plain function: the facts read from the history, git, the PR's
results and the verdict documents in; the site's data files out (one per view, so the
first page loads only the index and a config's history loads when it is opened)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from infx.site.coverage import coverage_doc
from infx.site.history_view import config_doc, step_range
from infx.site.model import ConfigHistory, HistoryFacts, PrResults, Range, Run, VerdictRecord
from infx.site.overlay import newest_per_pr, overlay_doc, record_overlay
from infx.site.pareto import pages
from infx.site.shape import data_file
from infx.site.steps import HISTORY_RUNS, ConfigSteps, analyse_all
from infx.site.verdicts import verdicts_doc

INDEX = "data/index.js"
# A config none of the newest STALE_AFTER main runs measured is stale: the site marks it (the
# index, its page, its points on a Pareto page) rather than draw it as current.
STALE_AFTER = 10
FACETS = ("hardware", "framework", "precision")  # the overview's filters
LANDED_RUNS = 60  # the newest runs whose changelog a config page lists
_RUN_PATH = re.compile(r"/actions/runs/\d+/?$")


def analyse(
    history: HistoryFacts, history_runs: int = HISTORY_RUNS, q: float = 0.05
) -> dict[str, ConfigSteps]:
    """Every throughput config's steps and noise (the noise model over its whole history,
    and its bands over the newest `history_runs` runs, as `results compare` judges)."""
    configs = [
        c
        for c in history.configs
        if c.kind == "throughput" and any(s.runs for s in c.points.values())
    ]
    return analyse_all(configs, history_runs=history_runs, q=q)


def step_ranges(history: HistoryFacts, steps: Mapping[str, ConfigSteps]) -> set[tuple[str, str]]:
    """The commit ranges whose changelog entries could explain a step, and what landed with
    each of the newest LANDED_RUNS runs (a config page's per-run changelog; older runs are
    left out to keep the build's git reads bounded)."""
    newest = range(max(1, len(history.runs) - LANDED_RUNS), len(history.runs))
    return {
        step_range(history.runs, step.before, step.run)
        for found in steps.values()
        for step in found.steps
    } | {step_range(history.runs, run - 1, run) for run in newest}


@dataclass(frozen=True)
class SiteFacts:
    history: HistoryFacts
    steps: dict[str, ConfigSteps]
    ranges: dict[tuple[str, str], Range]
    generated_at: str
    prs: tuple[PrResults, ...] = ()
    verdicts: tuple[VerdictRecord, ...] | None = None  # None: no verdict documents given
    notes: tuple[str, ...] = ()
    threshold: float = 2.0
    stale_after: int = STALE_AFTER


@dataclass(frozen=True)
class Site:
    files: dict[str, bytes]  # path under the output folder -> data file
    pareto_pages: int
    configs: int
    prs: tuple[int, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        size = sum(len(data) for data in self.files.values())
        return (
            f"{self.pareto_pages} Pareto page(s), {self.configs} config page(s), "
            f"{len(self.prs)} PR overlay(s); {len(self.files)} data file(s), "
            f"{size / 1e6:.1f} MB; the first page loads {len(self.files[INDEX]) / 1e3:.0f} kB "
            "of data"
        )


def repo_url(runs: Sequence[Run]) -> str | None:
    """The repository's web address, from the newest run's URL (…/actions/runs/ID)."""
    for run in reversed(runs):
        if _RUN_PATH.search(run.url):
            return _RUN_PATH.sub("", run.url)
    return None


def facet(identity: Mapping[str, Any], name: str) -> str:
    """A config's hardware, framework or precision (hardware: its runner when unnamed)."""
    value = identity.get(name) or (identity.get("runner") if name == "hardware" else None)
    return str(value or "?")


def _config_row(
    config: ConfigHistory, facts: SiteFacts, facets: dict[str, list[str]]
) -> dict[str, Any]:
    last = max(config.runs) if config.points else None
    values = []
    for name in FACETS:
        value = facet(config.identity, name)
        if value not in facets[name]:
            facets[name].append(value)
        values.append(facets[name].index(value))
    return {
        "slug": config.slug,
        "label": config.label,
        "kind": config.kind,
        "last": last,
        "f": values,  # index into the index's facets, in FACETS order
        "steps": len(facts.steps[config.slug].steps) if config.slug in facts.steps else 0,
    }


def _index(facts: SiteFacts, pareto: list[Any], prs: list[dict[str, Any]]) -> dict[str, Any]:
    history = facts.history
    facets: dict[str, list[str]] = {name: [] for name in FACETS}
    configs = [_config_row(c, facts, facets) for c in history.configs]
    return {
        "generated_at": facts.generated_at,
        "source": history.source,
        "repo_url": repo_url(history.runs),
        "runs": [
            [r.id, r.sha, r.created_at, r.url, r.reused_from, r.attempt, r.receipts]
            for r in history.runs
        ],
        "pages": [
            {
                "model": p.model,
                "scenario": p.scenario,
                "title": p.title,
                "curves": len(p.doc["curves"]),
                "points": sum(len(c["points"]) for c in p.doc["curves"]),
            }
            for p in pareto
        ],
        "configs": configs,
        "facets": facets,
        "stale_after": facts.stale_after,
        "landed_runs": LANDED_RUNS,
        "prs": [{"pr": p["pr"], "verdict": p["verdict"], "run": p["run"]} for p in prs],
        "verdicts": None if facts.verdicts is None else len(facts.verdicts),
        "notes": list(facts.notes),
    }


def _overlays(facts: SiteFacts) -> list[dict[str, Any]]:
    """One overlay per PR: a results table given to the build, else the PR's newest recorded
    verdict (the history's verdicts table, or `--verdicts`), so every PR whose comment links
    its overlay has one, in every build."""
    known = {c.slug for c in facts.history.configs}
    given = [overlay_doc(pr, known, facts.threshold) for pr in facts.prs]
    have = {doc["pr"] for doc in given}
    recorded = [
        record_overlay(record, known)
        for record in newest_per_pr(facts.verdicts or ())
        if record.pr not in have
    ]
    repo = repo_url(facts.history.runs)
    for doc in recorded:
        if repo and "id" in doc["run"]:
            doc["run"]["url"] = f"{repo}/actions/runs/{doc['run']['id']}"
    return sorted(given + recorded, key=lambda doc: -int(doc["pr"]))


def build_site(facts: SiteFacts) -> Site:
    history = facts.history
    files: dict[str, bytes] = {}
    pareto = pages(history.configs, facts.steps)
    for page in pareto:
        files[f"data/pareto/{page.model}--{page.scenario}.js"] = data_file(
            f"pareto/{page.route}", page.doc
        )
    for config in history.configs:
        doc = config_doc(config, history.runs, facts.steps.get(config.slug), facts.ranges)
        files[f"data/config/{config.slug}.js"] = data_file(f"config/{config.slug}", doc)
    files["data/coverage.js"] = data_file("coverage", coverage_doc(history.configs, history.runs))
    if facts.verdicts is not None:
        files["data/verdicts.js"] = data_file(
            "verdicts", verdicts_doc(facts.verdicts, history.runs)
        )
    overlays = _overlays(facts)
    for doc in overlays:
        files[f"data/pr/{doc['pr']}.js"] = data_file(f"pr/{doc['pr']}", doc)
    files[INDEX] = data_file("index", _index(facts, pareto, overlays))
    return Site(
        files,
        len(pareto),
        len(history.configs),
        tuple(doc["pr"] for doc in overlays),
        facts.notes,
    )
