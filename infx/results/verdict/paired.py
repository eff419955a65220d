"""A and B in one session: this PR's runs judged against main's image measured beside them.

Repeats of a PR alone share what their session shares (a runner, a day, a driver) and main's
history does not: a slow session reads as a regression however many repeats are pooled
(Chrome's Pinpoint and Meta's ServiceLab measure A and B interleaved on one machine for
this reason). With `--baseline-repeat`, each run of this PR has a partner, a run of main's
image on the same runner in the same session; the verdict is on their differences:

- this PR's runs and main's are each pooled robustly (`infx.results.noise.pool`, on the
  scatter main's history shows), and main's pooled level replaces its history's level;
- a config's change is its pooled run deviation less main's, against s_b sqrt(2/K) for K
  pairs, and a point's its residual less main's, against s_j sqrt(2/K): main's history
  gives the scatter only (its run scatter includes the sessions' own, so this is
  conservative), with its degrees of freedom;
- nothing of main's history's level, steps, drift or provisional runs applies, and no
  sweep-wide effect is taken out: the session's effect cancels in each pair.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from infx.results.noise.model import Model
from infx.results.noise.pool import Pooled


def paired(model: Model, mine: Pooled, theirs: Pooled) -> tuple[Model, Pooled]:
    """The model and pool that judge this PR's runs against main's runs beside them."""
    configs = model.center.shape[0]
    runs = np.minimum(mine.runs, theirs.runs)
    dev_runs = np.minimum(mine.dev_runs, theirs.dev_runs)
    pairs = np.maximum(dev_runs.max(axis=1, initial=0), 1)
    value = np.where(runs > 0, mine.value, np.nan)
    return (
        replace(
            model,
            center=theirs.value,
            offset=np.zeros_like(model.offset),
            n=pairs,
            moved=np.full(model.moved.shape, np.nan),
            k_moved=np.zeros(configs, dtype=int),
            recent=np.zeros(configs, dtype=bool),
        ),
        Pooled(
            value=value,
            runs=runs,
            dev=mine.dev - theirs.dev,
            dev_runs=dev_runs,
            resid=mine.resid - theirs.resid,
        ),
    )
