"""Verdicts on pull requests nobody wrote the model for: shifted concurrencies, mixed
changes, broken numbers."""

from __future__ import annotations

from infx.results.compare import COVERAGE_LOST, NOISE, REGRESSED
from infx.results.verdict import compare
from tests.results.simulate import Sweeps

SHIFTED = (6, 12, 24, 48, 96, 192, 384)  # between main's 4, 8, ..., 512


def test_a_curve_measured_at_other_concurrencies_is_compared_at_matched_interactivity() -> None:
    """The PR measured none of main's concurrencies: its points are judged against main's
    whole curve, so a 20 % slower config is regressed (not only coverage lost), and an
    unchanged one is not."""
    history = Sweeps(2, seed=1).history(20)
    shifted = Sweeps(2, seed=2, concs=SHIFTED)
    report = compare(shifted.run(9000, lambda i, c: 0.8 if i == 0 else 1.0)["rows"], history)
    slow, same = sorted(report.configs, key=lambda c: c.identity["tp"])
    assert slow.curve is not None and slow.curve.matched >= 4
    assert slow.curve.verdict == REGRESSED and slow.verdict == REGRESSED
    assert same.curve is not None and same.curve.verdict == NOISE
    assert same.verdict == COVERAGE_LOST
