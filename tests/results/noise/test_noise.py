"""The noise model on histories nobody tuned it on: short ones, noisier ones, pure noise."""

from __future__ import annotations

import numpy as np

from infx.results.noise.model import STEPS, fit, outliers
from infx.results.noise.series import GATED
from infx.results.verdict.changes import detect
from infx.results.verdict.judge import compare
from infx.results.verdict.words import REGRESSED
from tests.results.simulate import Sweeps


def _configs(count: int, runs: int, noise: float, rng: np.random.Generator) -> np.ndarray:
    """(configs, runs, 8 points, 6 metrics) logs of pure noise, independent per value."""
    return noise * rng.standard_normal((count, runs, 8, len(GATED)))


def test_pure_noise_does_not_cut_a_config_at_a_step() -> None:
    """40 configs (8 points x 6 metrics) of 8 runs with nothing changed: a cut would make
    a few runs main's level and forget the scatter the others showed."""
    rng = np.random.default_rng(3)
    model = fit(_configs(40, 8, 0.02, rng), np.full(40, 8), GATED)
    cut = int((model.shape == STEPS).sum())
    assert cut <= 2, f"{cut} of 40 pure-noise histories cut"


def test_a_step_of_a_config_in_its_newest_run_is_seen_not_yet_its_level() -> None:
    """A 5 % step of every point in main's newest run: one run cannot tell a step from a
    flaky node, so it is main's provisional level (said, and checked against), never yet
    its level, from 7 runs on."""
    rng = np.random.default_rng(4)
    for n in (7, 8, 20):
        values = _configs(1, n, 0.02, rng)
        values[0, -1] += np.log(0.95)
        model = fit(values, np.array([n]), GATED)
        assert model.provisional[0].tolist() == [False] * (n - 1) + [True], n
        assert model.n[0] == n - 1 and model.k_moved[0] == 1
        moved = np.expm1(model.moved[0][:, GATED]).mean() * 100
        assert -7 < moved < -3, (n, moved)


def test_a_noisier_main_than_assumed_is_not_all_regressions() -> None:
    """Main scatters 5 % per point (not the assumed 2 %) over 8 runs: an A/A comparison
    must not call most configs regressed."""
    reports = _aa_with_five_percent_noise(runs=8)
    _few_regressed(reports)


def _aa_with_five_percent_noise(runs: int) -> list:
    """A/A comparisons of 10 configs against `runs` main runs scattering 5 % per point."""
    reports = []
    for seed in range(3):
        sweeps = Sweeps(10, seed=seed, noise=0.05)
        reports.append(compare(sweeps.run(9000)["rows"], sweeps.history(runs)))
    return reports


def _few_regressed(reports: list) -> None:
    regressed = sum(report.configs_with(REGRESSED) for report in reports)
    total = sum(len(report.configs) for report in reports)
    assert regressed <= total // 10, f"{regressed} of {total} configs judged regressed"


def test_ingesting_quiet_runs_reports_no_steps() -> None:
    """`results changes` after each ingest: nothing moved, so nothing to report."""
    found = [
        (step.label, step.conc, step.metric.key)
        for seed in range(4)
        for step in detect(Sweeps(10, seed=seed).history(12))
    ]
    assert len(found) <= 1, found


def test_a_short_history_shows_its_noise_through_the_configs_points() -> None:
    """Three main runs are too few for one series, but a config's eight points together
    show main scatters 5 %, not the assumed 2 %: an A/A comparison stays quiet, and the
    scatter is reported as measured."""
    reports = _aa_with_five_percent_noise(runs=3)
    for report in reports:
        tput = [c for cfg in report.configs for p in cfg.points for c in p.checks[:1]]
        assert not any(c.assumed for c in tput)
    _few_regressed(reports)


def test_one_main_run_assumes_the_default_noise_and_says_so() -> None:
    sweeps = Sweeps(2, seed=1)
    report = compare(sweeps.run(9000)["rows"], sweeps.history(1))
    assert all(c.assumed for cfg in report.configs for p in cfg.points for c in p.checks)
    assert all(cfg.level.assumed for cfg in report.configs)
    assert all("degrees of freedom" in (cfg.curve.why or "") for cfg in report.configs)


def test_a_short_quiet_history_still_flags_a_config_wide_drop() -> None:
    sweeps = Sweeps(4, seed=2)
    report = compare(
        sweeps.run(9000, lambda i, c: 0.9 if i == 0 else 1.0)["rows"], sweeps.history(3)
    )
    verdicts = {cfg.key: cfg.verdict for cfg in report.configs}
    assert sorted(verdicts.values()).count(REGRESSED) >= 1
    assert verdicts[next(k for k in verdicts if '"m0"' in k and '"tp": 1' in k)] == REGRESSED


def test_one_wild_value_in_mains_newest_run_is_not_a_new_level() -> None:
    """A bad node doubled one point's p99 TTFT in main's newest run: a step of one series,
    not of the config, so the other 39 series keep their runs (not that one alone), and a
    PR measured at the usual level is not an improvement everywhere."""
    sweeps = Sweeps(6, seed=8)
    history = sweeps.history(20)
    for row in history[-1]["rows"]:
        if row["identity"]["conc"] == 64:
            row["metrics"]["p99_ttft"] *= 2.0
    report = compare(sweeps.run(9000)["rows"], history)
    for config in report.configs:
        others = [c for p in config.points for c in p.checks[:5] if p.conc != 64]
        assert min(c.history for c in others) > 1, config.label
    assert report.configs_with(REGRESSED) + report.configs_with("improved") <= 1


def test_a_few_ordinary_runs_are_never_called_outliers() -> None:
    """The MAD of a handful of values is often tiny: an ordinary run then looked like an
    outlier, was dropped, and the scatter it showed was forgotten (narrower bands, false
    alarms). Each run is judged against the others' prediction interval instead, at 1 % a
    window: a run 15 scatters off in twelve runs is still dropped."""
    rng = np.random.default_rng(5)
    dropped = 0
    for n in (3, 4, 5, 6, 8):
        y = 0.02 * rng.standard_normal((400, n, 1))
        dropped += int(outliers(y, np.ones((400, n), dtype=bool)).any(axis=1).sum())
    assert dropped <= 30, f"{dropped} of 2000 pure-noise windows lost a run"
    y = 0.02 * rng.standard_normal((1, 12, 1))
    y[0, 5] += 0.3
    assert outliers(y, np.ones((1, 12), dtype=bool))[0].tolist() == [i == 5 for i in range(12)]
