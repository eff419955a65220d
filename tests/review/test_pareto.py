"""Pareto coverage on real result rows (as `infx results process` writes them): which
points are on the frontier, what a curve is, and when the check passes; then the command
on a results table and a plan, with the check run it reports."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from infx.results.ingest.clients import ClientRun
from infx.results.ingest.process import document, throughput_row
from infx.review.pareto import coverage, frontier
from tests.conftest import GitRepo
from tests.github.fake_api import FakeGitHub
from tests.results.formats import fixed_row


def row(conc: int, e2el_s: float, tput_per_gpu: float, **changes: object) -> dict:
    base = fixed_row(conc=conc, **changes)
    run = ClientRun(
        "vllm-bench-serve",
        total_tput=tput_per_gpu * base["tp"],
        output_tput=tput_per_gpu,
        completed=10,
        latencies_ms={"median_e2el": e2el_s * 1000, "median_tpot": 20.0, "median_ttft": 100.0},
    )
    return throughput_row(base, run, conc, f"{conc}.json")


def curve(n: int, **changes: object) -> list[dict]:
    """`n` points each faster and slower than the last: all on the frontier."""
    return [row(2**i, 1.0 + i, 100.0 * (i + 1), **changes) for i in range(n)]


def test_the_frontier_keeps_what_no_other_point_beats() -> None:
    points = [(1.0, 100.0), (2.0, 90.0), (2.0, 150.0), (3.0, 150.0), (3.0, 150.0), (4.0, 300.0)]
    # (2, 90) is beaten by (1, 100); (3, 150) has no more throughput than (2, 150).
    assert frontier(points) == [(1.0, 100.0), (2.0, 150.0), (4.0, 300.0)]


def test_five_frontier_points_pass_and_four_do_not() -> None:
    assert coverage(curve(5)).passed
    four = coverage(curve(4))
    assert not four.passed and len(four.curves[0].frontier) == 4


def test_dominated_points_do_not_count() -> None:
    rows = [*curve(4), row(64, 9.0, 50.0)]  # slower and less throughput than all others
    found = coverage(rows)
    assert found.curves[0].measured == 5 and len(found.curves[0].frontier) == 4
    assert not found.passed


def test_an_invalid_point_keeps_the_curve_from_passing() -> None:
    rows = curve(5)
    rows[0]["metrics"]["median_e2el"] = 0.0
    found = coverage(rows)
    assert found.curves[0].invalid == 1 and not found.passed


def test_each_precision_and_runner_is_a_curve_of_its_own_and_parallelisms_share_one() -> None:
    rows = curve(3, tp=4) + curve(3, tp=8)  # one curve: tp 4 and 8 together
    rows += curve(5, precision="fp4") + curve(5, runner="mi300x")
    found = coverage(rows)
    labels = {c.label: len(c.frontier) for c in found.curves}
    assert len(labels) == 3 and labels["llama70b · 1024x1024 · mi355x · vllm · fp8"] >= 3
    assert labels["llama70b · 1024x1024 · mi355x · vllm · fp4"] == 5


def test_a_planned_curve_that_measured_nothing_counts_zero() -> None:
    from infx.results.ingest.process import identity

    planned = [identity(fixed_row(precision="fp4"), 0)]
    found = coverage(curve(5), planned)
    assert not found.passed
    assert {c.label.split(" · ")[-1]: len(c.frontier) for c in found.curves} == {"fp8": 5, "fp4": 0}


def test_no_curve_at_all_proves_nothing() -> None:
    assert not coverage([]).passed


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, True])
def test_not_a_number_is_invalid(bad: object) -> None:
    rows = curve(5)
    rows[2]["metrics"]["tput_per_gpu"] = bad
    assert coverage(rows).curves[0].invalid == 1


def test_the_command_reports_a_neutral_check_when_short(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    table = tmp_path / "results.json"
    table.write_text(json.dumps(document(curve(4), None)))
    out = tmp_path / "coverage.json"
    done = repo.infx("review", "pareto-coverage", str(table), "--json", str(out),
                     "--check-sha", "a" * 40)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "4/5" in done.output
    verdict = json.loads(out.read_text())
    assert verdict["status"] == "warn" and verdict["curves"][0]["frontier"] == 4
    (check,) = api.state.check_runs["a" * 40]
    assert check["name"] == "infx/pareto-coverage" and check["conclusion"] == "neutral"
    passing = repo.infx("review", "pareto-coverage", str(table), "--points", "4")
    assert passing.exit_code == 0 and "every curve (1) has at least 4" in passing.output


def test_an_unreadable_table_is_a_usage_error(repo: GitRepo, tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{"rows": 3}')
    done = repo.infx("review", "pareto-coverage", str(bad))
    assert done.exit_code == 1 and "not an infx results file" in done.output
