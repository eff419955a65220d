"""The values the site is built from, read once through the edges (`read`, `changelog`,
`verdicts`) and shaped by the pure views: main's runs, each config's points over them,
changelog entries, PR verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infx.results.table.rows import Table

# Metrics the site shows, in the units results rows store them (seconds for latencies).
# `intvty` is interactivity (tok/s/user): median, else mean, as `results compare` reads it.
METRICS = ("tput_per_gpu", "intvty", "median_ttft", "p99_ttft", "median_tpot", "p99_tpot")
# Metrics whose steps count (interactivity is TPOT p50 again: shown, never counted twice).
STEP_METRICS = ("tput_per_gpu", "median_ttft", "p99_ttft", "median_tpot", "p99_tpot")


@dataclass(frozen=True)
class Run:
    """One main run of the history; `index` is its place, oldest first."""

    index: int
    id: int
    attempt: int
    sha: str
    url: str
    created_at: str  # ISO 8601, UTC, "Z"
    reused_from: int | None = None
    receipts: bool = False  # the receipts that vouch for its rows are stored beside them


def vouched(kinds: set[str], reused_from: int | None) -> bool:
    """Whether a run's stored receipts (`kinds`: run, merge, main) are all that vouch for its
    rows: the run receipt, and for a reused merge its merge receipt and main's own. Stored
    is not verified (`infx results provenance` recomputes them); missing is unvouched."""
    wanted = {"run"} if reused_from is None else {"run", "merge", "main"}
    return wanted <= kinds


@dataclass
class PointSeries:
    """One point (config, concurrency) over the main runs that measured it, oldest first."""

    conc: int
    runs: list[int] = field(default_factory=list)  # Run.index of each value
    images: list[str] = field(default_factory=list)
    values: dict[str, list[float | None]] = field(default_factory=dict)  # metric -> value

    def add(self, run: int, image: str, values: tuple[float | None, ...]) -> None:
        """One run's values, in METRICS order."""
        self.runs.append(run)
        self.images.append(image)
        if not self.values:
            self.values = {metric: [] for metric in METRICS}
        for metric, value in zip(METRICS, values, strict=True):
            self.values[metric].append(value)


@dataclass
class ConfigHistory:
    """One config of the history (identity without concurrency) and one kind of row."""

    slug: str  # short, stable, URL-safe name: the page #/config/<slug>
    key: str  # the history's config key (canonical JSON of the identity)
    kind: str  # throughput | accuracy
    identity: dict[str, Any]
    label: str
    points: dict[int, PointSeries] = field(default_factory=dict)  # conc -> series

    @property
    def runs(self) -> list[int]:
        """Every run that measured any of its points, oldest first."""
        return sorted({r for s in self.points.values() for r in s.runs})


@dataclass(frozen=True)
class HistoryFacts:
    runs: tuple[Run, ...]
    configs: tuple[ConfigHistory, ...]
    source: str  # the kind of history read (never its path, host or user)


@dataclass(frozen=True)
class Master:
    """What the explanation rule needs of a master config."""

    key: str
    model_prefix: str
    runner: str
    framework: str
    precision: str


@dataclass(frozen=True)
class ChangelogEntry:
    """An entry added to the changelog, with its config keys resolved to master configs."""

    pr_link: str | None
    description: tuple[str, ...]
    config_keys: tuple[str, ...]  # as written (patterns allowed)
    scenario_types: tuple[str, ...]  # empty: every scenario
    masters: tuple[Master, ...]  # the master configs its keys name at the range's end


@dataclass(frozen=True)
class Range:
    """The changelog entries added between two main runs' commits; `entries` is None when
    git could not tell (a commit missing from the repository, an unreadable changelog)."""

    base: str
    head: str
    entries: tuple[ChangelogEntry, ...] | None
    note: str = ""


@dataclass(frozen=True)
class VerdictRecord:
    """One `infx results compare --format json` document, with the PR and run it judged."""

    pr: int
    run_id: int | None
    name: str  # the file it came from
    doc: dict[str, Any]
    attempt: int = 0  # the run attempt judged (0: not known)
    head_sha: str = ""  # the PR head it judged ("" : not known)


@dataclass(frozen=True)
class PrResults:
    """A PR's results table (`--pr-results`) and main's history for its configs."""

    number: int
    table: Table
    history: list[Table]
    name: str  # the file it came from
