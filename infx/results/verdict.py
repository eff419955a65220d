"""A pull request's results against main's history: a verdict per check, point, config and
run, and whether the gate passes.

Pure: rows and results documents in, values out (`infx.results.report`). `history` is main's runs as results
documents (format infx-results/1, `doc["run"]` naming the run), oldest first.

- A **check** is one metric of one point (CHECKS: throughput per GPU, TTFT p50 and p99,
  TPOT p50 and p99). Main's level and scatter come from `infx.results.noise`; the change
  is within noise while it stays inside the band (the larger of `threshold` percent and the
  prediction interval); a change exactly on the band's edge is within noise.
- A **point** (config, concurrency) is regressed when any of its checks regressed, else
  improved when any improved, else within noise; `new` when main never measured it,
  `missing` when main's newest run of the config measured it and the PR did not.
- A **curve** compares throughput per GPU at matched interactivity: each PR point against
  main's Pareto frontier (through main's levels) interpolated at the point's interactivity,
  averaged over the points inside the frontier's range; and at equal concurrency: each PR
  point against its own level, averaged. Main's own runs measured the same way give each
  average's history, hence its level and scatter.
- A **config** is regressed (a point, its curve or an accuracy score regressed), else
  coverage lost (a point or score missing, or a config of the same family that main
  measured and the PR did not), else improved, else within noise; `new` without history.
- The **run** takes the worst config in that order; the gate fails on regressed or
  coverage lost unless acknowledged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from infx.results.compare import DEFAULT_THRESHOLD, NEW, index, point_names, variant_label
from infx.results.curves import aggregates
from infx.results.points import accuracy_config, lost_configs, throughput_config
from infx.results.report import SEVERITY, Config, Report, worst
from infx.results.series import CURVE_METRICS, History, Pending, levels, point_series


def compare(
    rows: Sequence[dict[str, Any]],
    history: Sequence[dict[str, Any]],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    trimmed: bool = False,
) -> Report:
    """Judge `rows` (this run) against `history` (main's runs, oldest first). A `trimmed`
    run measured each curve at its lowest concurrency only: the points it did not plan are
    missing, but not coverage lost."""
    notes: list[str] = []
    names = point_names([rows, *(d.get("rows", []) for d in history)])
    mine = index(rows, notes, "this run", names=names)
    hist = History.of(history, notes, names)
    series: list[np.ndarray] = []
    where: list[list[int]] = []
    pending: list[Pending] = []
    configs: list[Config] = []

    for key, points in mine.items():
        kind = key.split("|", 1)[0]
        ident = {k: v for k, v in next(iter(points.values()))["identity"].items() if k != "conc"}
        runs = hist.holding(key)
        if kind == "accuracy":
            configs.append(accuracy_config(key, ident, points, hist, runs))
            continue
        expected = set(hist.points[runs[-1]][key]) if runs else set()
        job = Pending(key, ident, points, runs, expected)
        for conc in sorted(set(points) | expected):
            if not runs:
                continue
            for metric, (values, at) in point_series(hist, runs, key, conc).items():
                if conc not in points and metric not in CURVE_METRICS:
                    continue  # a point the PR did not measure still draws main's curve
                job.slots[(conc, metric)] = len(series)
                series.append(values)
                where.append(at)
        pending.append(job)

    found = levels(series, where, pending)
    measures = aggregates(pending, found, hist, threshold)
    for job, (curve, level) in zip(pending, measures, strict=True):
        configs.append(throughput_config(job, found, hist, curve, level, threshold, trimmed))
    configs.extend(lost_configs(mine, hist))
    configs = [replace(c, label=variant_label(c.label, c.key)) for c in configs]
    configs.sort(key=lambda c: (SEVERITY.index(c.verdict), c.label, c.key))
    overall = worst([c.verdict for c in configs]) if configs else NEW
    return Report(tuple(configs), overall, threshold, len(history), tuple(dict.fromkeys(notes)))
