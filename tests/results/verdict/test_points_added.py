"""A concurrency added to a config's sweep lately: main's newest runs measured it, the older
ones did not. Its mean and scatter rest on the runs that measured it, never on the config's
run count: one run's residual divided by the config's n - 1 read as a scatter near 0, and
every unchanged pull request failed at that point (found by benchmarks/bench_noise_stress.py
on the real H200 runs: 8 of 8 unchanged runs failing with concurrency 16 in main's newest
run only)."""

from __future__ import annotations

import pytest

from infx.results.verdict.judge import compare
from tests.results.simulate import Sweeps

CONCS = (4, 8, 16, 32, 64)


@pytest.mark.parametrize("newest", [1, 2, 3])
def test_a_concurrency_main_measured_lately_does_not_fail_unchanged_runs(newest: int) -> None:
    sweeps = Sweeps(1, seed=11, concs=CONCS)
    runs = 16
    history = [
        sweeps.run(1000 + r, keep=lambda i, c, r=r: c != 64 or r >= runs - newest)
        for r in range(runs)
    ]
    full = [sweeps.run(1000 + r) for r in range(runs)]
    unchanged = [sweeps.run(9000 + k)["rows"] for k in range(40)]
    # 2 % noise per point: the full history fails 2 of these 40 by chance (of 80, 7); the
    # points' scatter differs when one is missing from most runs, so give or take 3; before
    # the fix, 13 to 40 of them failed
    failing = sum(compare(rows, history).failing for rows in unchanged)
    by_chance = sum(compare(rows, full).failing for rows in unchanged)
    assert failing <= by_chance + 3, f"{failing} of 40 unchanged runs failed ({by_chance})"


def test_a_concurrency_main_measured_lately_still_catches_a_drop_there() -> None:
    sweeps = Sweeps(1, seed=12, concs=CONCS)
    history = [sweeps.run(1000 + r, keep=lambda i, c, r=r: c != 64 or r >= 13) for r in range(16)]
    pr = sweeps.run(9000, factor=lambda i, c: 0.7 if c == 64 else 1.0)
    report = compare(pr["rows"], history)
    point = next(p for c in report.configs for p in c.points if p.conc == 64)
    assert report.failing and point.verdict == "regressed"


@pytest.mark.parametrize("newest", [1, 2])
def test_a_drop_only_at_a_concurrency_main_measured_in_fewer_than_3_runs_is_unconfirmed(
    newest: int,
) -> None:
    """Main's level there rests on 1 or 2 runs, and a level needs 3: the drop is said,
    with why, and the gate does not fail on it; the comment names the point."""
    sweeps = Sweeps(1, seed=12, concs=CONCS)
    history = [
        sweeps.run(1000 + r, keep=lambda i, c, r=r: c != 64 or r >= 16 - newest) for r in range(16)
    ]
    pr = sweeps.run(9000, factor=lambda i, c: 0.7 if c == 64 else 1.0)
    report = compare(pr["rows"], history)
    config = report.configs[0]
    point = next(p for p in config.points if p.conc == 64)
    assert not report.failing
    assert config.verdict == point.verdict == "unconfirmed"
    assert config.why == "main-few-runs"
    assert f"main measured conc 64 in {newest} run(s) only" in " ".join(config.moved)
    everywhere = compare(sweeps.run(9001, factor=lambda i, c: 0.7)["rows"], history)
    assert everywhere.failing  # a drop at every point still fails on the others


@pytest.mark.parametrize("newest", [1, 2])
def test_in_pairs_a_drop_at_a_concurrency_main_measured_lately_is_regressed(newest: int) -> None:
    """With main's image measured beside this PR's runs (--baseline-repeat), the level is
    the pairs', not main's history's: a concurrency main's history measured in 1 or 2 runs
    has 3 runs of main beside it, and a drop there fails the gate as it did before
    main-few-runs, without saying it waits for main's runs."""
    sweeps = Sweeps(1, seed=12, concs=CONCS)
    history = [
        sweeps.run(1000 + r, keep=lambda i, c, r=r: c != 64 or r >= 16 - newest) for r in range(16)
    ]
    prs = [
        sweeps.run(9000 + k, factor=lambda i, c: 0.7 if c == 64 else 1.0)["rows"] for k in range(3)
    ]
    beside = [sweeps.run(9100 + k)["rows"] for k in range(3)]
    report = compare(prs[0], history, repeats=prs[1:], beside=beside)
    config = report.configs[0]
    point = next(p for p in config.points if p.conc == 64)
    assert report.failing and config.verdict == point.verdict == "regressed", config.why
    assert not any("main measured conc 64" in words for words in config.moved)
