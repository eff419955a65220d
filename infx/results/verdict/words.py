"""The words a verdict is said in (improved, regressed, within noise, new, missing, ...), the
default threshold, and the accuracy rule: when a score's change counts."""

from __future__ import annotations

import math

IMPROVED, REGRESSED, NOISE, UNKNOWN = "improved", "regressed", "within-noise", "n/a"
COMPARED, NEW, MISSING = "compared", "new", "missing"
COVERAGE_LOST = "coverage-lost"
UNCONFIRMED = "unconfirmed"
DEFAULT_THRESHOLD = 2.0
_Z95 = 1.96
# An accuracy score with no standard error and no sample count (lm-eval's "N/A") is
# judged on its change alone: beyond this many points of the score (0.02 = 2 points of a
# rate) it moved.
ACCURACY_TOLERANCE = 0.02


def judge_score(
    before: float, before_se: float | None, after: float, after_se: float | None
) -> str:
    """An accuracy change counts beyond 1.96 combined standard errors (95 %); without a
    standard error on either side, beyond ACCURACY_TOLERANCE (a score's absolute change)."""
    diff = after - before
    if before_se is None or after_se is None:
        if abs(diff) <= ACCURACY_TOLERANCE + 1e-12:
            return NOISE
        return IMPROVED if diff > 0 else REGRESSED
    spread = math.sqrt(before_se**2 + after_se**2)
    if spread == 0:
        return NOISE if diff == 0 else (IMPROVED if diff > 0 else REGRESSED)
    if abs(diff) <= _Z95 * spread:
        return NOISE
    return IMPROVED if diff > 0 else REGRESSED
