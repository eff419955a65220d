"""Main's history and this PR's runs as arrays: main's runs indexed once; each throughput
config's window (the newest `history_runs` main runs that hold it); and one array of log
values (configs, runs, concurrencies, metrics) over all of them, NaN where a run did not
measure a point, each config's runs aligned at its newest, plus the PR's pooled runs."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from infx.results.table.frame import Frame, Series, of_documents
from infx.results.table.keys import family_key, match, match_notes
from infx.results.table.metrics import CHECKS, NUMBERS
from infx.results.table.rows import ByConc, Identity, Row, RunInfo, Table

METRICS = (*(c.key for c in CHECKS), "intvty")
GATING = len(CHECKS)  # the first GATING metrics are judged; interactivity is shown only
# +1: higher is better (throughput, interactivity); -1: lower is (latencies)
# the metrics that decide (the rest are advisory lines, or shown only)
GATED = np.array([c.gates for c in CHECKS] + [False])
SIGNS = np.array([1.0 if c.higher_is_better else -1.0 for c in CHECKS] + [1.0])
_NAN = math.nan


@dataclass(frozen=True)
class Window:
    """One config's history as the model reads it: the runs of its window, oldest first
    (their index in the history, GitHub's run id, creation time), the concurrencies asked
    for, and the raw values (not logs) of `NUMBERS` at each; NaN where not measured."""

    runs: np.ndarray  # (n,) history index of each run, oldest first
    ids: np.ndarray  # (n,) run ids
    dates: np.ndarray  # (n,) datetime64[s], creation times (NaT: unknown)
    concs: np.ndarray  # (k,)
    values: np.ndarray  # (n, k, len(NUMBERS))


@dataclass(frozen=True)
class _Block:
    """A config's points (as matched), first per (run, concurrency), sorted by run and
    concurrency."""

    run: np.ndarray
    conc: np.ndarray
    point: np.ndarray  # index in the frame


class _RunPoints(Mapping[str, ByConc]):
    """One run's points as (kind|config) -> conc -> row, each config's rows made when it
    is first asked for (a comparison asks for main's newest run of each config only)."""

    def __init__(self, history: History, run: int, keys: list[str]) -> None:
        self._history, self._run, self._keys = history, run, keys
        self._made: dict[str, ByConc] = {}

    def __getitem__(self, key: str) -> ByConc:
        found = self._made.get(key)
        if found is None:
            if key not in self._history.blocks:
                raise KeyError(key)
            block = self._history.blocks[key]
            lo, hi = np.searchsorted(block.run, [self._run, self._run + 1])
            frame = self._history.frame
            found = self._made[key] = {
                int(c): frame.row(int(p))
                for c, p in zip(block.conc[lo:hi], block.point[lo:hi], strict=True)
            }
            if not found:
                raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in set(self._keys)


@dataclass
class History:
    """Main's runs indexed once, oldest first: per run, (kind|config) -> conc -> row; per
    config, the runs holding it and its points as arrays (`window`). Configs are matched
    per series (a config's points in one run), not per row."""

    runs: list[RunInfo]
    points: list[Mapping[str, ByConc]]
    families: list[dict[str, list[str]]]
    held: dict[str, list[int]] = field(default_factory=dict)  # key -> runs holding it
    frame: Frame = field(default_factory=Frame)
    blocks: dict[str, _Block] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        history: Frame | Sequence[Table],
        notes: list[str] | None = None,
        names: dict[str, str] | None = None,
    ) -> History:
        frame = history if isinstance(history, Frame) else of_documents(history)
        names = {} if names is None else names
        keys: list[str | None] = [None] * len(frame.series)
        families: list[dict[str, list[str]]] = []
        held: dict[str, list[int]] = {}
        in_run: list[list[str]] = []
        for i, series in enumerate(frame.held):
            fam: dict[str, list[str]] = {}
            seen: list[str] = []
            for s in series:
                found = frame.series[s]
                key = keys[s]
                if key is None:  # a series' notes are said once, where it first appears
                    key = keys[s] = series_key(found, names, notes)
                if key in seen:
                    continue
                seen.append(key)
                held.setdefault(key, []).append(i)
                fam.setdefault(family_key(found.kind, found.identity), []).append(key)
            families.append(fam)
            in_run.append(seen)
        made = cls(list(frame.runs), [], families, held, frame)
        made.blocks = _blocks(frame, keys)
        made.points = [_RunPoints(made, i, seen) for i, seen in enumerate(in_run)]
        return made

    def holding(self, key: str, limit: int | None = None) -> list[int]:
        """The runs that hold this config, oldest first: the newest `limit` of them."""
        found = self.held.get(key, [])
        return found[-limit:] if limit else list(found)

    def window(self, key: str, runs: Sequence[int], concs: Sequence[int]) -> Window:
        """The config's values at `runs` (history indices, oldest first) and `concs`."""
        values = np.full((len(runs), len(concs), len(NUMBERS)), _NAN)
        block = self.blocks.get(key)
        if block is not None and len(runs) and len(concs):
            at_run = np.full(len(self.runs), -1)
            at_run[list(runs)] = np.arange(len(runs))
            order = np.argsort(concs)
            ranked = np.asarray(concs)[order]
            j = np.minimum(np.searchsorted(ranked, block.conc), len(ranked) - 1)
            n = at_run[block.run]
            ok = (n >= 0) & (ranked[j] == block.conc)
            values[n[ok], order[j[ok]]] = self.frame.values[block.point[ok]]
        ids = [self.runs[i].get("id") for i in runs]
        dates = [str(self.runs[i].get("created_at") or "NaT").rstrip("Z") for i in runs]
        return Window(
            np.asarray(runs, dtype=np.int64),
            np.array([-1 if x is None else x for x in ids], dtype=np.int64),
            np.array(dates, dtype="datetime64[s]"),
            np.asarray(concs),
            values,
        )


def series_key(found: Series, names: dict[str, str], notes: list[str] | None) -> str:
    """The key a series' points are matched under (`keys.index` for a row), its notes
    said in `notes` when given."""
    key = match(found.kind, found.identity, found.measured_by, names)
    if notes is not None:
        notes += match_notes(found.kind, found.identity, found.measured_by, key, names, "main")
    return key


def _blocks(frame: Frame, keys: Sequence[str | None]) -> dict[str, _Block]:
    """Each key's points, first per (run, concurrency) in frame order."""
    if not len(frame.run):
        return {}
    names = sorted({k for k in keys if k is not None})
    number = {k: n for n, k in enumerate(names)}
    key_of = np.array([number[k] if k is not None else -1 for k in keys], dtype=np.int64)
    key = key_of[frame.of]
    order = np.lexsort((np.arange(len(key)), frame.conc, frame.run, key))
    key, run, conc = key[order], frame.run[order], frame.conc[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (key[1:] != key[:-1]) | (run[1:] != run[:-1]) | (conc[1:] != conc[:-1])
    order, key, run, conc = order[first], key[first], run[first], conc[first]
    bounds = np.searchsorted(key, np.arange(len(names) + 1))
    return {
        name: _Block(run[lo:hi], conc[lo:hi], order[lo:hi])
        for name, lo, hi in zip(names, bounds[:-1], bounds[1:], strict=True)
        if hi > lo
    }


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


def as_metrics(numbers: np.ndarray) -> np.ndarray:
    """`NUMBERS` (last axis) as METRICS: the checks, then interactivity (median, else
    mean)."""
    median, mean = NUMBERS.index("median_intvty"), NUMBERS.index("mean_intvty")
    intvty = np.where(np.isnan(numbers[..., median]), numbers[..., mean], numbers[..., median])
    return np.concatenate([numbers[..., :GATING], intvty[..., None]], axis=-1)


def _logs(found: list[list[float]] | np.ndarray) -> np.ndarray:
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
    tables: dict[int, list[int]] = field(default_factory=dict)  # conc -> table of each row


@dataclass(frozen=True)
class Arrays:
    """Every pending config's history and PR runs, one array each (log units)."""

    values: np.ndarray  # (configs, runs, conc, metrics); NaN: not measured
    window: np.ndarray  # (configs,) runs in each config's window
    run_of: np.ndarray  # (configs, runs) history index of each position, -1 before it
    concs: np.ndarray  # (configs, conc) concurrency values, NaN padding
    pr: np.ndarray  # (configs, PR runs, conc, metrics) logs of this PR's runs; NaN: none


def arrays(pending: Sequence[Pending], hist: History, tables: int = 1) -> Arrays:
    """Each pending config's window read from the history's arrays, and this PR's rows
    (one slice per table of this PR: its runs are pooled by the model, not here)."""
    configs = len(pending)
    runs = max((len(p.runs) for p in pending), default=1) or 1
    width = max((len(p.concs) for p in pending), default=1) or 1
    metrics = len(METRICS)
    values = np.full((configs, runs, width, metrics), _NAN)
    concs = np.full((configs, width), _NAN)
    run_of = np.full((configs, runs), -1, dtype=int)
    window = np.zeros(configs, dtype=int)
    pr_where: list[tuple[int, int, int]] = []
    pr_found: list[list[float]] = []
    for c, job in enumerate(pending):
        job.row = c
        slot = {conc: j for j, conc in enumerate(job.concs)}
        concs[c, : len(job.concs)] = job.concs
        offset = runs - len(job.runs)
        window[c] = len(job.runs)
        run_of[c, offset:] = job.runs
        found = hist.window(job.key, job.runs, job.concs).values
        values[c, offset:, : len(job.concs)] = _logs(as_metrics(found))
        for conc, rows in job.mine.items():
            j = slot.get(conc)
            if j is None:
                continue
            which = job.tables.get(conc) or list(range(len(rows)))
            for t, row in zip(which, rows, strict=True):
                pr_where.append((c, t, j))
                pr_found.append(metric_values(row))
    pr = np.full((configs, max(tables, 1), width, metrics), _NAN)
    if pr_where:
        at = np.array(pr_where)
        pr[at[:, 0], at[:, 1], at[:, 2]] = _logs(pr_found)
    return Arrays(values, window, run_of, concs, pr)
