"""Several runs of one PR head pooled into one value per series, robustly.

A mean of logs lets one outlying repeat (a flaky node) carry the pooled value while the
band shrinks by sqrt(R). The pool is Huber's M-estimate of location with the scale known
from main's history (a run's scatter for the config's run deviation, a point's residual
scatter for its residual): with every repeat inside HUBER scales of the others it is
their mean; a repeat further out weighs HUBER / |its distance| as much. With two repeats
it is always their mean (nothing tells which one is off).

Per config and metric, each repeat's run deviation y_k (the mean over its points of its
deviation from main's level) is pooled with scale s_b, and each point's residual after its
run's deviation with scale s_j: the pooled point is main's level + pooled y + pooled
residual, so one repeat's bad node moves neither.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infx.results.noise.median import nanmedian
from infx.results.noise.model import Model, deviations
from infx.results.noise.segments import quiet

# Huber's tuning constant: 95 % of the mean's efficiency when nothing is off (Huber 1964).
HUBER = 1.345
_STEPS = 30  # iterations of the reweighted mean (converged long before, for 2 to 10 runs)
_TINY = 1e-12


def huber(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Huber's location of `values` along their last axis (NaN: absent), with a known
    `scale` (values.shape[:-1]); NaN where no value."""
    seen = np.isfinite(values)
    with quiet():
        mu = nanmedian(values, axis=-1)
    s = np.maximum(np.nan_to_num(scale, nan=1.0), _TINY)[..., None]
    v = np.where(seen, values, 0.0)
    for _ in range(_STEPS):
        r = np.abs(v - mu[..., None]) / s
        w = np.where(seen, np.minimum(1.0, HUBER / np.maximum(r, _TINY)), 0.0)
        total = w.sum(axis=-1)
        mu = np.where(total > 0, (w * v).sum(axis=-1) / np.where(total > 0, total, 1.0), np.nan)
    out: np.ndarray = mu
    return out


@dataclass(frozen=True)
class Pooled:
    """This PR's runs pooled per series; (C, J, M) unless said. Log units."""

    value: np.ndarray  # the pooled value (NaN: not measured)
    runs: np.ndarray  # PR runs behind it (0: none)
    dev: np.ndarray  # (C, M) pooled run deviation from main's level points (`Model.base`)
    dev_runs: np.ndarray  # (C, M) PR runs behind it
    resid: np.ndarray  # pooled residual after the run deviation


def pool(model: Model, pr: np.ndarray, gated: np.ndarray) -> Pooled:
    """`pr` (C, K, J, M): this PR's K runs (NaN: a run did not measure the point)."""
    seen = np.isfinite(pr)
    runs = seen.sum(axis=1)
    y = deviations(pr, model.base, model.weight)  # (C, K, M)
    y_runs = np.isfinite(y).sum(axis=1)
    dev = huber(np.moveaxis(y, 1, 2), model.run_sd)  # (C, M)
    r = pr - model.base[:, None] - y[:, :, None, :]
    resid = huber(np.moveaxis(r, 1, 3), model.point_sd)  # (C, J, M)
    # metrics that do not gate: each series pooled alone, on its own scatter
    own = huber(np.moveaxis(pr - model.base[:, None], 1, 3), model.point_sd)
    value = np.where(gated[None, None, :], model.base + dev[:, None, :] + resid, model.base + own)
    # no level (a point main never measured): the runs' plain mean, shown only
    with quiet():
        plain = np.nanmean(pr, axis=1)
    value = np.where(np.isfinite(model.base), value, plain)
    value = np.where(runs > 0, value, np.nan)
    return Pooled(value=value, runs=runs, dev=dev, dev_runs=y_runs, resid=resid)
