"""Steps on main: which configs of main's history changed level in its newest runs, and
between which two runs (the last good and the first changed one).

Pure: results documents in (oldest first), steps out. Every config is read by the noise
model `results compare` judges with (`infx.results.noise.model`), all at once: a step is a
change point of the config's runs (its points and gated metrics together, MIN_SEGMENT runs
on each side), or main's newest runs standing apart from its level (provisional: one or
two runs are a step or an outlier, and the next run tells; such steps are not `strict`).
One bad run in the middle of the history is an outlier, never a step, and a drift is not
cut into steps. A step is reported in the series (concurrency and metric) that moved by
more than `threshold` percent and beyond their own scatter (two-sided SERIES_ALPHA),
when its first changed run is among the newest `recent` runs.
"""

from __future__ import annotations

import math

import numpy as np

from infx.results.noise.model import Model, fit
from infx.results.noise.segments import quiet
from infx.results.noise.series import GATED, History, Pending, arrays
from infx.results.noise.tdist import t_ppf
from infx.results.table.keys import config_label, point_names
from infx.results.table.metrics import CHECKS
from infx.results.table.rows import Table, config_identity
from infx.results.verdict.steps import Step
from infx.results.verdict.words import IMPROVED, REGRESSED

# The config's step is the discovery (found at the model's STEP_ALPHA, or an outlier run);
# this only says which of its series moved with it.
SERIES_ALPHA = 0.01


def _moves(model: Model, c: int) -> list[tuple[np.ndarray, np.ndarray, int, bool]]:
    """(runs before, runs after, first changed position, strict) of each change of config
    c: its cuts, then its provisional newest runs."""
    out = []
    ids = np.cumsum(model.cuts[c])
    kept = model.kept[c]
    for p in np.nonzero(model.cuts[c])[0]:
        out.append((kept & (ids == ids[p] - 1), kept & (ids == ids[p]), int(p), True))
    prov = model.provisional[c]
    if prov.any():
        out.append((model.level[c], prov, int(np.nonzero(prov)[0][0]), False))
    return out


def _series(
    model: Model, x: np.ndarray, c: int, j: int, m: int, before: np.ndarray, after: np.ndarray
) -> tuple[float, float] | None:
    """(level before, level after) of one series when it moved beyond its scatter."""
    a, b = x[after & np.isfinite(x)], x[before & np.isfinite(x)]
    if not len(a) or not len(b):
        return None
    sd, df = float(model.point_sd[c, j, m]), float(model.point_df[c, j, m])
    if CHECKS[m].gates:
        sd = math.hypot(float(model.run_sd[c, m]), sd)
        df = float(model.run_df[c, m])
    if not math.isfinite(sd):
        return None
    crit = float(t_ppf(np.array(1 - SERIES_ALPHA / 2), np.array(max(df, 1.0))))
    jump = float(a.mean() - b.mean())
    if abs(jump) <= crit * sd * math.sqrt(1 / len(a) + 1 / len(b)):
        return None
    return float(b.mean()), float(a.mean())


def detect(history: list[Table], recent: int = 3, threshold: float = 2.0) -> list[Step]:
    """Steps whose first changed run is among the newest `recent` runs of the history."""
    names = point_names(d.get("rows", []) for d in history)
    hist = History.of(history, names=names)
    pending = []
    for key, held in hist.held.items():
        if not key.startswith("throughput|") or len(held) < 3:
            continue
        if held[-1] < len(history) - recent:
            continue
        concs = sorted({conc for i in held for conc in hist.points[i][key]})
        row = next(iter(hist.points[held[-1]][key].values()))
        ident = config_identity(row["identity"])
        pending.append(Pending(key, ident, {}, list(held), set(), concs))
    if not pending:
        return []
    data = arrays(pending, hist)
    with quiet():
        model = fit(data.values, data.window, GATED)
    out: list[Step] = []
    for job in pending:
        c = job.row
        label = config_label({**job.identity, "conc": 0})
        for before, after, p, strict in _moves(model, c):
            bad = int(data.run_of[c, p])
            if bad < len(history) - recent or p == 0:
                continue
            good = int(data.run_of[c, p - 1])
            for j, conc in enumerate(job.concs):
                for m, metric in enumerate(CHECKS):
                    x = data.values[c, :, j, m]
                    found = _series(model, x, c, j, m, before, after)
                    if found is None:
                        continue
                    change = math.expm1(found[1] - found[0]) * 100
                    if abs(change) <= threshold:
                        continue
                    better = (change > 0) == metric.higher_is_better
                    out.append(
                        Step(
                            job.key,
                            label,
                            conc,
                            metric,
                            math.exp(found[0]),
                            math.exp(found[1]),
                            change,
                            hist.runs[good],
                            hist.runs[bad],
                            IMPROVED if better else REGRESSED,
                            strict,
                        )
                    )
    return out
