"""The noise model on histories nobody tuned it on: short ones, noisier ones, pure noise."""

from __future__ import annotations

import numpy as np

from infx.results.noise import single as noise
from infx.results.verdict.changes import detect
from infx.results.verdict.judge import compare
from infx.results.verdict.words import REGRESSED
from tests.results.simulate import Sweeps


def test_pure_noise_does_not_cut_a_config_at_a_shared_change_point() -> None:
    """40 series (8 points x 5 metrics) of 8 runs with nothing changed: a joint cut would
    make one or two runs main's level and forget the scatter the others showed."""
    rng = np.random.default_rng(3)
    cut = sum(
        bool(noise.joint_breaks([0.02 * rng.standard_normal(8) for _ in range(40)]))
        for _ in range(40)
    )
    assert cut <= 2, f"{cut} of 40 pure-noise histories cut"


def test_a_step_shared_by_a_config_in_its_newest_run_is_still_found() -> None:
    """From 7 runs on. With fewer, how much a config's points move together in one run is
    not known well enough (it is assumed to be RHO) to tell a 5 % step of one run from a
    run effect."""
    rng = np.random.default_rng(4)
    for n in (7, 8, 20):
        columns = [0.02 * rng.standard_normal(n) for _ in range(40)]
        for x in columns:
            x[-1] += np.log(0.95)
        assert noise.joint_breaks(columns) == (n - 1,), n


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
    """The MAD of a handful of values is often tiny: an ordinary value then looked like an
    outlier, was dropped, and the scatter it showed was forgotten (narrower bands, false
    alarms). A value 15 scatters off in twelve runs is still dropped."""
    rng = np.random.default_rng(5)
    dropped = 0
    for n in (3, 4, 5, 6, 8):
        for _ in range(400):
            x = 0.02 * rng.standard_normal(n)
            dropped += noise.level(x, ()).k < n
    assert dropped <= 10, f"{dropped} of 2000 pure-noise series lost a value"
    x = 0.02 * rng.standard_normal(12)
    x[5] += 0.3
    assert noise.level(x, ()).k == 11
