"""The rate the gate runs at, held to the one the settings name on main's own runs."""

from __future__ import annotations

import numpy as np

from infx.results.render.model import calibration_line
from infx.results.verdict.calibration import Calibration, held
from infx.results.verdict.document import to_json
from infx.results.verdict.judge import compare
from tests.results.simulate import Runs


def _at(failures: dict[float, int], runs: int = 20):
    """Main's runs judged as PRs: how many fail at each rate (recorded, not computed)."""
    asked: list[float] = []

    def at(rate: float) -> Calibration:
        asked.append(rate)
        return Calibration(np.zeros(1), np.zeros(1), runs, failures[rate])

    return at, asked


def test_one_failure_in_a_short_history_is_chance_and_keeps_the_named_rate() -> None:
    at, asked = _at({0.05: 1}, runs=16)
    rate, cal = held(0.05, at)
    assert (rate, cal.sweeps_failed, asked) == (0.05, 1, [0.05])


def test_failures_beyond_chance_tighten_the_rate_until_they_are_not() -> None:
    """8 and then 5 of 20 are beyond chance at 5 % (binomial p < 0.05), 2 of 20 are not."""
    at, _ = _at({0.05: 8, 0.025: 5, 0.0125: 2, 0.00625: 0})
    rate, cal = held(0.05, at)
    assert (rate, cal.sweeps_failed) == (0.0125, 2)


def test_bad_runs_that_fail_at_any_rate_do_not_blind_the_gate() -> None:
    """Seven flaky runs of main fail whatever the rate: halving buys nothing, so the named
    rate stands (a floor of q/16 would only miss real regressions)."""
    at, asked = _at({0.05: 7, 0.025: 7})
    rate, _ = held(0.05, at)
    assert rate == 0.05 and asked == [0.05, 0.025]


def _heavy_tailed(seed: int) -> tuple[list[dict], dict]:
    """Main's runs where about a third scatter three times as wide as the rest."""
    runs = Runs(20, noise=0.02, seed=seed)
    logs = runs._logs(20)
    scale = np.where(np.random.default_rng(seed).random(20) < 0.35, 3.0, 1.0)
    history = [runs.table(1000 + r, logs[r] * scale[r]) for r in range(20)]
    (pr,) = runs.pr()
    return history, pr


def test_a_history_noisier_than_the_model_runs_the_gate_at_a_stricter_rate() -> None:
    history, pr = _heavy_tailed(1)
    report = compare(pr["rows"], history)
    assert report.q_held is not None and report.q_held < report.q
    assert to_json(report)["method"]["alpha_held"] == report.q_held
    line = calibration_line(report)
    assert f"so this verdict ran at {report.q_held:.2%}" in line
    assert not report.failing


def test_a_quiet_history_keeps_the_rate_named() -> None:
    runs = Runs(20, noise=0.02, seed=3)
    history = runs.history(20)
    (pr,) = runs.pr()
    report = compare(pr["rows"], history)
    assert report.q_held == report.q == 0.05
    assert "(the rate named: 5%)" in calibration_line(report)
