"""A pull request's results against main's history: a verdict per check, point, config and
run, and whether the gate passes.

Pure: rows and main's history in, values out (`infx.results.verdict.report`). `history` is
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

from infx.results.noise.model import fit
from infx.results.noise.pool import pool
from infx.results.noise.series import GATED, History, Pending, arrays
from infx.results.table.frame import Frame, of_documents
from infx.results.table.keys import config_label, index, matched, measured, variant_label
from infx.results.table.metrics import CHECKS
from infx.results.table.rows import Identity, Row, Table, config_identity
from infx.results.verdict.accuracy import accuracy_config
from infx.results.verdict.calibration import calibrate, held
from infx.results.verdict.curves import Measured
from infx.results.verdict.decide import SHARE, Q, decide
from infx.results.verdict.paired import paired
from infx.results.verdict.points import Judged, lost_configs, throughput_config
from infx.results.verdict.power import power
from infx.results.verdict.report import SEVERITY, Config, Point, Report, Shift, worst
from infx.results.verdict.words import DEFAULT_THRESHOLD, IMPROVED, NEW, NOISE, REGRESSED

Mine = dict[str, dict[int, list[Row]]]


def pooled(
    tables: Sequence[Sequence[Row]], notes: list[str], names: dict[str, str]
) -> tuple[Mine, dict[str, dict[int, list[int]]]]:
    """(kind|config) -> conc -> this PR's rows of it, one per table that measured it; and
    the table each row came from."""
    out: Mine = {}
    which: dict[str, dict[int, list[int]]] = {}
    for n, rows in enumerate(tables):
        side = "this run" if len(tables) == 1 else f"this run ({n + 1} of {len(tables)})"
        for key, points in index(rows, notes, side, names=names).items():
            for conc, row in points.items():
                out.setdefault(key, {}).setdefault(conc, []).append(row)
                which.setdefault(key, {}).setdefault(conc, []).append(n)
    return out, which


def compare(
    rows: Sequence[Row],
    history: Frame | Sequence[Table],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    trimmed: bool = False,
    history_runs: int | None = None,
    repeats: Sequence[Sequence[Row]] = (),
    q: float = Q,
    beside: Sequence[Sequence[Row]] = (),
) -> Report:
    """Judge `rows` (this run; with `repeats`, more runs of the same head) against `history`
    (main's runs, oldest first), at the false-fail rate `q`. A `trimmed` run measured each
    curve at its lowest concurrency only: the points it did not plan are missing, but not
    coverage lost. `beside`: runs of main's image measured in the same session as this PR's
    newest runs (one per run, the last len(beside) of `rows` and `repeats`, in order): the
    configs they measured are judged on those pairs alone, as paired differences
    (`infx.results.verdict.paired`), main's history giving the scatter only; every other
    config on all of this PR's runs against main's history, as without them."""
    notes: list[str] = []
    tables = [rows, *repeats]
    frame = history if isinstance(history, Frame) else of_documents(history)
    names = matched([*(measured(t) for t in (*tables, *beside)), *frame.measured()])
    mine, which = pooled(tables, notes, names)
    partners = pooled(beside, [], names) if beside else None
    halves = pooled(tables[len(tables) - len(beside) :], [], names) if beside else None
    hist = History.of(frame, notes, names)
    configs: list[Config] = []
    pending: list[Pending] = []
    paired_pending: list[Pending] = []
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
        if partners is not None and halves is not None and _paired(key, points, partners, halves):
            # Judged on its pairs: this PR's rows of the paired runs only.
            ours = halves[0][key]
            concs = sorted(set(ours) | expected)
            paired_pending.append(
                Pending(key, ident, ours, runs, expected, concs, tables=halves[1][key])
            )
            continue
        concs = sorted(set(points) | expected)
        pending.append(Pending(key, ident, points, runs, expected, concs, tables=which[key]))
    shifts: tuple[Shift, ...] = ()
    sweep_verdict = NEW
    calibration = None
    rate = q
    # Paired configs and the others are judged apart, each pass at its share of `q` by
    # configs, so that the verdict as a whole still fails unchanged sweeps at most at `q`
    # (each config's own level is what one pass over all of them would give it).
    total = len(paired_pending) + len(pending)
    with warnings.catch_warnings():  # all-NaN slices: series a run did not measure
        warnings.simplefilter("ignore", RuntimeWarning)
        paired_rate = 0.0
        if paired_pending:
            # Its pairs measured every point this PR's runs did (`_paired`): a point main
            # measured and they did not is lost as without pairs.
            share = q * len(paired_pending) / total
            shifts, sweep_verdict, calibration, paired_rate = _judge(
                paired_pending, hist, threshold, trimmed, configs, share, partners
            )
            rate = paired_rate
        if pending:
            share = q * len(pending) / total
            shifts, sweep_verdict, calibration, rate = _judge(
                pending, hist, threshold, trimmed, configs, share
            )
            rate += paired_rate
    if beside:
        notes.append(
            f"paired: this PR's {len(beside)} run(s) against {len(beside)} run(s) of main's "
            f"image measured beside them, for {len(paired_pending)} config(s) (judged on their "
            "pairs alone); main's history gives the scatter only"
            + (f"; {len(tables)} run(s) of this PR for the others" if pending else "")
        )
    configs.extend(lost_configs(mine, hist))
    configs = [replace(c, label=variant_label(c.label, c.key)) for c in configs]
    configs.sort(key=lambda c: (SEVERITY.index(c.verdict), c.label, c.key))
    verdicts = [c.verdict for c in configs] + ([sweep_verdict] if shifts else [])
    overall = worst(verdicts) if configs else NEW
    return Report(
        tuple(configs),
        overall,
        threshold,
        len(frame),
        tuple(dict.fromkeys(notes)),
        sweep=shifts,
        sweep_verdict=sweep_verdict,
        pr_runs=len(tables),
        pairs=len(beside) if paired_pending else 0,
        paired_configs=len(paired_pending),
        q=q,
        q_configs=rate / 2 if shifts else rate,
        q_held=rate,
        calibration=calibration,
    )


def _paired(
    key: str, points: dict[int, list[Row]],
    partners: tuple[Mine, dict[str, dict[int, list[int]]]],
    halves: tuple[Mine, dict[str, dict[int, list[int]]]],
) -> bool:  # fmt: skip
    """Whether a config is judged on its pairs: they measured every point this PR's runs
    did. A pair of one concurrency, beside a run that regressed at the others, left those
    missing (not coverage lost) and the gate passed: such a config is judged on all of
    this PR's runs against main's history, as without pairs."""
    beside, ours = partners[0].get(key), halves[0].get(key)
    return beside is not None and ours is not None and set(points) <= set(beside) & set(ours)


def _judge(
    pending: list[Pending], hist: History, threshold: float, trimmed: bool,
    configs: list[Config], q: float,
    partners: tuple[Mine, dict[str, dict[int, list[int]]]] | None = None,
) -> tuple[tuple[Shift, ...], str, tuple[int, int], float]:  # fmt: skip
    """Every pending config judged at once (appended to `configs`) at the rate main's own
    runs, judged as PRs (leave one out), hold to `q`; that calibration and the rate."""
    tables = 1 + max((i for job in pending for t in job.tables.values() for i in t), default=0)
    data = arrays(pending, hist, tables)
    model = fit(data.values, data.window, GATED)
    fitted = model
    mine = pool(model, data.pr, GATED)
    run_of = data.run_of
    if partners is not None:
        rows, which = partners
        beside = [
            Pending(
                j.key,
                j.identity,
                rows.get(j.key, {}),
                j.runs,
                j.expected,
                j.concs,
                tables=which.get(j.key, {}),
            )
            for j in pending
        ]
        count = 1 + max((i for j in beside for t in j.tables.values() for i in t), default=0)
        theirs = pool(model, arrays(beside, hist, count).pr, GATED)
        model, mine = paired(model, mine, theirs)
        run_of = np.full(run_of.shape, -1)  # no sweep-wide effect: the session cancels
    rate, cal = held(q, lambda r: calibrate(fitted, data.values, data.run_of, threshold, r))
    measured = Measured(pending, data, model, mine)
    have = np.isfinite(mine.value[:, :, GATED]).any(axis=1).sum(axis=1)
    alpha = rate / max(len(pending), 1) * SHARE / (have + 1)
    curve_tests = measured.tests(model, alpha)
    dec = decide(model, mine, threshold, curve_tests, run_of, rate, partners is not None)
    pw = power(dec, model, threshold)
    judged = Judged(model, dec, pw, measured, mine.value, threshold)
    configs += [
        replace(
            throughput_config(job, judged, hist, trimmed),
            loo=(int(cal.judged[job.row]), int(cal.failed[job.row])),
        )
        for job in pending
    ]
    wide = dec.shift
    shifts = tuple(
        Shift(CHECKS[m], float(wide.change[m]), float(wide.band[m]), _shift_verdict(wide, m))
        for m in range(len(CHECKS))
        if wide.active[m]
    )
    verdict = NEW
    if wide.active.any():
        verdict = REGRESSED if wide.flagged[0] else IMPROVED if wide.flagged[1] else NOISE
    return shifts, verdict, (cal.runs, cal.sweeps_failed), rate


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
