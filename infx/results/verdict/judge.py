"""A pull request's results against main's history: a verdict per check, point, config and
run, and whether the gate passes.

Pure: rows and results documents in, values out (`infx.results.verdict.report`). `history` is
main's runs as results documents (format infx-results/1, `doc["run"]` naming the run),
oldest first; `repeats` are more tables of the same PR head, pooled with `rows`.

- Each config is judged on the newest `history_runs` main runs that hold it (all of them
  when None): the history may hold the union of several configs' windows.
- The noise model (`fit`: levels, change points, scatter shrunk toward the config's trend;
  `effects`: run-level effects) and the tests (`decide`: per config, Benjamini-Hochberg
  across configs, Holm inside; `power`: what could have been seen) run over every series
  of every config at once.
- A **point** (config, concurrency) is regressed when any of its checks is, else
  unconfirmed, else improved, else within noise; `new` when main never measured it,
  `missing` when main's newest run of the config measured it and the PR did not.
- A **config** is regressed (its tests flagged it), else coverage lost (a point or score
  missing, or a config of the same family that main measured and the PR did not), else
  unconfirmed (suggestive, or main moved too), else improved, else within noise; `new`
  without history.
- The **run** takes the worst config (and the sweep-wide shift's verdict); the gate fails
  on regressed or coverage lost unless acknowledged.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from infx.results.noise.effects import effects
from infx.results.noise.fit import fit
from infx.results.noise.series import GATING, History, Pending, arrays
from infx.results.table.keys import config_label, index, point_names, variant_label
from infx.results.table.metrics import CHECKS
from infx.results.table.rows import Identity, Row, Table, config_identity
from infx.results.verdict.curves import Measured
from infx.results.verdict.decide import Q, decide, sweep
from infx.results.verdict.points import Judged, accuracy_config, lost_configs, throughput_config
from infx.results.verdict.power import power
from infx.results.verdict.report import SEVERITY, Config, Point, Report, Shift, worst
from infx.results.verdict.words import DEFAULT_THRESHOLD, IMPROVED, NEW, NOISE, REGRESSED


def pooled(
    tables: Sequence[Sequence[Row]], notes: list[str], names: dict[str, str]
) -> dict[str, dict[int, list[Row]]]:
    """(kind|config) -> conc -> this PR's rows of it, one per table that measured it."""
    out: dict[str, dict[int, list[Row]]] = {}
    for n, rows in enumerate(tables):
        side = "this run" if len(tables) == 1 else f"this run ({n + 1} of {len(tables)})"
        for key, points in index(rows, notes, side, names=names).items():
            for conc, row in points.items():
                out.setdefault(key, {}).setdefault(conc, []).append(row)
    return out


def compare(
    rows: Sequence[Row],
    history: Sequence[Table],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    trimmed: bool = False,
    history_runs: int | None = None,
    repeats: Sequence[Sequence[Row]] = (),
) -> Report:
    """Judge `rows` (this run; with `repeats`, more runs of the same head) against `history`
    (main's runs, oldest first). A `trimmed` run measured each curve at its lowest
    concurrency only: the points it did not plan are missing, but not coverage lost."""
    notes: list[str] = []
    tables = [rows, *repeats]
    names = point_names([*tables, *(d.get("rows", []) for d in history)])
    mine = pooled(tables, notes, names)
    hist = History.of(history, notes, names)
    configs: list[Config] = []
    pending: list[Pending] = []
    for key, points in mine.items():
        kind = key.split("|", 1)[0]
        first = next(iter(points.values()))[0]
        ident = config_identity(first["identity"])
        runs = hist.holding(key, history_runs)
        if kind == "accuracy":
            configs.append(accuracy_config(key, ident, points, hist, runs))
            continue
        if not runs:
            configs.append(_new(key, ident, points))
            continue
        expected = set(hist.points[runs[-1]][key])
        concs = sorted(set(points) | expected)
        pending.append(Pending(key, ident, points, runs, expected, concs))
    shifts: tuple[Shift, ...] = ()
    sweep_verdict = NEW
    q = Q
    if pending:
        with warnings.catch_warnings():  # all-NaN slices: series a run did not measure
            warnings.simplefilter("ignore", RuntimeWarning)
            shifts, sweep_verdict, q = _judge(pending, hist, threshold, trimmed, configs)
    configs.extend(lost_configs(mine, hist))
    configs = [replace(c, label=variant_label(c.label, c.key)) for c in configs]
    configs.sort(key=lambda c: (SEVERITY.index(c.verdict), c.label, c.key))
    verdicts = [c.verdict for c in configs] + ([sweep_verdict] if shifts else [])
    overall = worst(verdicts) if configs else NEW
    return Report(
        tuple(configs),
        overall,
        threshold,
        len(history),
        tuple(dict.fromkeys(notes)),
        sweep=shifts,
        sweep_verdict=sweep_verdict,
        pr_runs=len(tables),
        q=q,
    )


def _judge(
    pending: list[Pending], hist: History, threshold: float, trimmed: bool, configs: list[Config]
) -> tuple[tuple[Shift, ...], str, float]:
    """Every pending config judged at once (appended to `configs`); the sweep-wide shift."""
    data = arrays(pending, hist)
    found = fit(data.values, data.window, data.concs, GATING)
    run_fx = effects(found.resid, data.run_of, found.segments)
    measured = Measured(pending, data, found)
    curve_tests = measured.tests(found, len(pending), _tests_per_config(data))
    dec = decide(found, run_fx, data.pr, data.repeats, threshold, curve_tests)
    pw = power(dec, found, run_fx, curve_tests, threshold)
    judged = Judged(found, run_fx, dec, pw, measured, data.pr, threshold)
    configs += [throughput_config(job, judged, hist, trimmed) for job in pending]
    wide = sweep(dec.base, found, run_fx, threshold)
    shifts = tuple(
        Shift(CHECKS[m], float(wide.change[m]), float(wide.band[m]), _shift_verdict(wide, m))
        for m in range(GATING)
        if wide.active[m]
    )
    verdict = NEW
    if wide.active.any():
        verdict = REGRESSED if wide.flagged[0] else IMPROVED if wide.flagged[1] else NOISE
    return shifts, verdict, dec.base.q


def _tests_per_config(data: Any) -> Any:
    """Tests a config's family will hold before the curve's: two per judged metric."""

    have = np.isfinite(data.pr[:, :, :GATING]).any(axis=1)
    return have.sum(axis=1) * 2


def _shift_verdict(wide: Any, m: int) -> str:
    sign = 1 if CHECKS[m].higher_is_better else -1
    if wide.flagged[0] and sign * wide.change[m] < 0:
        return REGRESSED
    if wide.flagged[1] and sign * wide.change[m] > 0:
        return IMPROVED
    return NOISE


def _new(key: str, ident: Identity, points: dict[int, list[Row]]) -> Config:

    return Config(
        key=key,
        kind="throughput",
        label=config_label(ident),
        identity=ident,
        verdict=NEW,
        points=tuple(Point(c, NEW, NEW, pr=rows[0]) for c, rows in sorted(points.items())),
    )
