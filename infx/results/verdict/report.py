"""What a comparison returns: a verdict per check, point, curve, accuracy score, config and
run, and how the run's gate stands (acknowledged or not). Values only; `infx.results.verdict.judge`
makes them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import NamedTuple

from infx.results.table.metrics import Metric
from infx.results.table.rows import Identity, PointRecipe, Row, RunInfo
from infx.results.verdict.words import (
    COMPARED,
    COVERAGE_LOST,
    IMPROVED,
    NEW,
    NOISE,
    REGRESSED,
    UNCONFIRMED,
    UNKNOWN,
)

FORMAT = "infx-verdict/1"
# Order of severity: the run and a config take the first that applies. Unconfirmed does
# not fail the gate; it asks for more runs of the PR.
SEVERITY = (REGRESSED, COVERAGE_LOST, UNCONFIRMED, IMPROVED, NOISE, NEW)
# Why a config or check is unconfirmed.
NEEDS_RUNS = "needs-runs"  # beyond the threshold, suggestive, not significant in this sweep
MAIN_MOVED = "main-moved"  # significant against main's level, not against its newest runs
# significant only at points main measured in fewer than 3 runs (a concurrency added lately)
FEW_RUNS = "main-few-runs"


class Check(NamedTuple):
    """One metric of one point, as judged. A named tuple rather than a frozen dataclass:
    a comparison builds one per metric and point (16,000 for 2,000 points), and a frozen
    dataclass's `__init__` (one `object.__setattr__` per field) took 5 µs of each, 1 µs
    here; it is as immutable, and compares and hashes by its values alike."""

    metric: Metric
    before: float | None  # main's level (stored units)
    after: float | None
    change_pct: float | None
    band_pct: float | None
    noise_pct: float | None  # main's relative scatter, percent
    history: int  # main's runs behind the level (newest segment)
    assumed: bool  # scatter assumed (DEFAULT_NOISE): history too short
    verdict: str
    p_value: float | None = None  # one-sided, in the direction it moved
    detectable_pct: float | None = None  # the smallest change flagged with 80 % power
    moved_pct: float | None = None  # main's provisional newest runs against its level
    moved_runs: int = 0  # how many runs moved so (0: none)
    runs: int = 1  # this PR's runs behind the value
    advisory: bool = False  # a line that never gates (TTFT, tails): its verdict is not counted
    beyond: bool = False  # an advisory line beyond its own band: worth a look, not a failure


@dataclass(frozen=True)
class Point:
    conc: int
    status: str  # compared | new | missing
    verdict: str
    checks: tuple[Check, ...] = ()
    main: Row | None = None  # main's newest row (missing points: its numbers)
    # checks: CHECKS, then interactivity, shown only (it is TPOT p50 again, never counted)
    pr: Row | None = None


@dataclass(frozen=True)
class Curve:
    matched: int  # PR points inside main's interactivity range
    change_pct: float | None
    band_pct: float | None
    noise_pct: float | None
    history: int
    assumed: bool
    verdict: str
    frontier: tuple[tuple[float, float], ...] = ()  # main's (interactivity, tput/GPU)
    p_value: float | None = None
    detectable_pct: float | None = None
    why: str | None = None  # why the measure says nothing (None: it is meaningful)
    advisory: bool = False  # said, never counted (matched interactivity)


@dataclass(frozen=True)
class Score:
    conc: int
    task: str
    metric: str
    filter: str
    status: str
    before: float | None
    before_stderr: float | None
    after: float | None
    after_stderr: float | None
    verdict: str
    rule: str = "stderr"  # stderr | samples (binomial) | tolerance (absolute change alone)


@dataclass(frozen=True)
class Repeats:
    """More runs of this PR that would settle an unconfirmed config."""

    runs: int  # this PR's runs in all that would do (0: more than infx asks for)
    count: int  # runs to add
    rows: tuple[PointRecipe, ...]  # what reruns: each point's identity and recipe
    gpu_hours: float  # of all `count` runs of them
    source: str  # how the job minutes were estimated


@dataclass(frozen=True)
class Power:
    """What one metric of a config could have shown: a config-wide change flagged with 80 %
    power, and its points' smallest such changes."""

    metric: Metric
    config_pct: float | None
    points: tuple[tuple[int, float], ...]  # (conc, percent)


@dataclass(frozen=True)
class Shift:
    """This PR's sweep-wide shift of one metric (every config moved alike)."""

    metric: Metric
    change_pct: float
    band_pct: float | None
    verdict: str


@dataclass(frozen=True)
class Config:
    key: str
    kind: str
    label: str
    identity: Identity  # without conc
    verdict: str
    points: tuple[Point, ...] = ()
    scores: tuple[Score, ...] = ()
    curve: Curve | None = None  # throughput per GPU at matched interactivity
    level: Curve | None = None  # throughput per GPU at equal concurrency, over the points
    runs: int = 0  # main runs in the window that measured this config
    baseline: RunInfo | None = None  # the newest of them: doc["run"]
    only_main: bool = False  # main measured it; the PR did not
    p_value: float | None = None  # regression: Bonferroni over its tests (None: untested)
    p_improved: float | None = None
    tests: int = 0
    alpha: float | None = None  # the level a discovery needed in this sweep
    why: str | None = None  # unconfirmed: NEEDS_RUNS, MAIN_MOVED or FEW_RUNS
    repeats: Repeats | None = None
    power: tuple[Power, ...] = ()
    pr_runs: int = 1  # this PR's runs behind it
    moved: tuple[str, ...] = ()  # what main's provisional newest runs did, in words
    # main's own runs of it judged as PRs against the others: (judged, would have failed)
    loo: tuple[int, int] | None = None

    def count(self, verdict: str) -> int:
        """Points with this verdict; accuracy scores count as points."""
        return sum(1 for p in self.points if p.verdict == verdict) + sum(
            1 for s in self.scores if score_verdict(s) == verdict
        )


@dataclass(frozen=True)
class Ack:
    by: str  # "label" or "comment"
    who: str  # the label's name or the commenter
    url: str | None = None
    comment_id: int | None = None  # the acknowledging comment
    at: datetime | None = None  # when it was given (the label's event, the comment)


@dataclass(frozen=True)
class Report:
    configs: tuple[Config, ...]
    verdict: str
    threshold: float
    runs: int  # main runs in the history
    notes: tuple[str, ...] = field(default_factory=tuple)
    ack: Ack | None = None
    sweep: tuple[Shift, ...] = ()  # the sweep-wide shift per metric, when estimated
    sweep_verdict: str = NOISE  # regressed | improved | within-noise (or new: not tested)
    pr_runs: int = 1  # this PR's tables pooled
    pairs: int = 0  # runs of main's image beside this PR's newest (`beside`) that paired
    paired_configs: int = 0  # configs judged on those pairs
    q: float = 0.05  # the false-fail rate named ([results] false-fail)
    q_configs: float | None = None  # the rate the configs were judged at (None: q)
    q_held: float | None = None  # q, or tighter when main's own runs fail too often at q
    # main's runs judged as PRs against the others (leave one out): (judged, would have
    # failed the gate); None: no history to judge
    calibration: tuple[int, int] | None = None

    @property
    def failing(self) -> bool:
        """Regressed or coverage lost: the gate fails unless acknowledged."""
        return self.verdict in (REGRESSED, COVERAGE_LOST)

    @property
    def passed(self) -> bool:
        return not self.failing or self.ack is not None

    def points(self, verdict: str) -> int:
        """Points (not metric cells) with this verdict; accuracy scores count as points."""
        return sum(c.count(verdict) for c in self.configs)

    def configs_with(self, verdict: str) -> int:
        return sum(1 for c in self.configs if c.verdict == verdict)


def score_verdict(score: Score) -> str:
    if score.status != COMPARED:
        return score.status
    return score.verdict if score.verdict != UNKNOWN else NOISE


def worst(verdicts: Sequence[str]) -> str:
    for verdict in SEVERITY:
        if verdict in verdicts:
            return verdict
    return NEW


def acknowledged(report: Report, ack: Ack | None) -> Report:
    return replace(report, ack=ack) if report.failing and ack is not None else report
