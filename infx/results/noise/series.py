"""Main's history and this PR's runs as arrays: main's runs indexed once; each throughput
config's window (the newest `history_runs` main runs that hold it); and one array of log
values (configs, runs, concurrencies, metrics) over all of them, NaN where a run did not
measure a point, each config's runs aligned at its newest, plus the PR's pooled runs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from infx.results.table.keys import family_key, index
from infx.results.table.metrics import CHECKS
from infx.results.table.rows import Identity, Indexed, Row, RunInfo, Table, run_of

METRICS = (*(c.key for c in CHECKS), "intvty")
GATING = len(CHECKS)  # the first GATING metrics are judged; interactivity is shown only
# +1: higher is better (throughput, interactivity); -1: lower is (latencies)
SIGNS = np.array([1.0 if c.higher_is_better else -1.0 for c in CHECKS] + [1.0])
_NAN = math.nan


@dataclass
class History:
    """Main's runs indexed once: per run (oldest first), (kind|config) -> conc -> row."""

    runs: list[RunInfo]
    points: list[Indexed]
    families: list[dict[str, list[str]]]
    held: dict[str, list[int]] = field(default_factory=dict)  # key -> runs holding it

    @classmethod
    def of(
        cls,
        docs: Sequence[Table],
        notes: list[str] | None = None,
        names: dict[str, str] | None = None,
    ) -> History:
        names = {} if names is None else names
        runs, points, families = [], [], []
        held: dict[str, list[int]] = {}
        for i, doc in enumerate(docs):
            indexed = index(doc.get("rows", []), notes, "main", twice=False, names=names)
            runs.append(run_of(doc))
            points.append(indexed)
            fam: dict[str, list[str]] = {}
            for key, by_conc in indexed.items():
                held.setdefault(key, []).append(i)
                row = next(iter(by_conc.values()))
                fam.setdefault(family_key(row["kind"], row["identity"]), []).append(key)
            families.append(fam)
        return cls(runs, points, families, held)

    def holding(self, key: str, limit: int | None = None) -> list[int]:
        """The runs that hold this config, oldest first: the newest `limit` of them."""
        found = self.held.get(key, [])
        return found[-limit:] if limit else list(found)


def metric_values(row: Row) -> list[float]:
    """A row's METRICS (interactivity: median, else mean), NaN where absent; `arrays` makes
    those not > 0 NaN too (the schema has checked they are numbers)."""
    get = row.get("metrics", {}).get
    return [
        get("tput_per_gpu", _NAN),
        get("median_ttft", _NAN),
        get("p99_ttft", _NAN),
        get("median_tpot", _NAN),
        get("p99_tpot", _NAN),
        get("median_intvty", get("mean_intvty", _NAN)),
    ]


assert METRICS == ("tput_per_gpu", "median_ttft", "p99_ttft", "median_tpot", "p99_tpot", "intvty")


def _logs(found: list[list[float]]) -> np.ndarray:
    """Logs of the values > 0; NaN for the rest (and for null)."""
    values = np.array(found, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), _NAN)
    return out


def measured(row: Row, key: str) -> float | None:
    """The PR's value as judged: 0 too (a throughput of 0 is a regression, not n/a)."""
    value = row.get("metrics", {}).get(key)
    return value if isinstance(value, int | float) and value >= 0 else None


@dataclass
class Pending:
    """A throughput config with history, judged with all others at once."""

    key: str
    identity: Identity  # without conc
    mine: dict[int, list[Row]]  # conc -> this PR's rows (one per run of it)
    runs: list[int]  # main's runs in its window, oldest first
    expected: set[int]  # concurrencies main's newest run of it measured
    concs: list[int] = field(default_factory=list)  # its concurrency axis in the arrays
    row: int = 0  # its index in the arrays


@dataclass(frozen=True)
class Arrays:
    """Every pending config's history and PR runs, one array each (log units)."""

    values: np.ndarray  # (configs, runs, conc, metrics); NaN: not measured
    window: np.ndarray  # (configs,) runs in each config's window
    run_of: np.ndarray  # (configs, runs) history index of each position, -1 before it
    concs: np.ndarray  # (configs, conc) concurrency values, NaN padding
    pr: np.ndarray  # (configs, conc, metrics) mean log over this PR's runs; NaN: none
    repeats: np.ndarray  # (configs, conc, metrics) this PR's runs behind each mean


def arrays(pending: Sequence[Pending], hist: History) -> Arrays:
    """One pass over the history rows the pending configs hold."""
    configs = len(pending)
    runs = max((len(p.runs) for p in pending), default=1) or 1
    width = max((len(p.concs) for p in pending), default=1) or 1
    metrics = len(METRICS)
    values = np.full((configs, runs, width, metrics), _NAN)
    concs = np.full((configs, width), _NAN)
    run_of = np.full((configs, runs), -1, dtype=int)
    window = np.zeros(configs, dtype=int)
    where: list[tuple[int, int, int]] = []
    found: list[list[float]] = []
    pr_where: list[tuple[int, int]] = []
    pr_found: list[list[float]] = []
    for c, job in enumerate(pending):
        job.row = c
        slot = {conc: j for j, conc in enumerate(job.concs)}
        concs[c, : len(job.concs)] = job.concs
        offset = runs - len(job.runs)
        window[c] = len(job.runs)
        run_of[c, offset:] = job.runs
        for n, i in enumerate(job.runs, start=offset):
            for conc, row in hist.points[i][job.key].items():
                j = slot.get(conc)
                if j is not None:
                    where.append((c, n, j))
                    found.append(metric_values(row))
        for conc, rows in job.mine.items():
            j = slot.get(conc)
            if j is None:
                continue
            for row in rows:
                pr_where.append((c, j))
                pr_found.append(metric_values(row))
    if where:
        at = np.array(where)
        values[at[:, 0], at[:, 1], at[:, 2]] = _logs(found)
    pr_sum = np.zeros((configs, width, metrics))
    pr_count = np.zeros((configs, width, metrics))
    if pr_where:
        at = np.array(pr_where)
        logs = _logs(pr_found)
        seen = ~np.isnan(logs)
        np.add.at(pr_sum, (at[:, 0], at[:, 1]), np.where(seen, logs, 0.0))
        np.add.at(pr_count, (at[:, 0], at[:, 1]), seen)
    with np.errstate(invalid="ignore", divide="ignore"):
        pr = np.where(pr_count > 0, pr_sum / pr_count, _NAN)
    return Arrays(values, window, run_of, concs, pr, pr_count)
