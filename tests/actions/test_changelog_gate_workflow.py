"""changelog-gate.yml run for real on a pull request's merge commit."""

from __future__ import annotations

from tests.actions.conftest import SweepRepo
from tests.actions.harness import World, load, pr_payload, simulate, triggered


def test_gate_checks_the_pull_requests_entries(world: World, sweep_repo: SweepRepo) -> None:
    payload = pr_payload("synchronize", [], head_sha=sweep_repo.head, base_sha=sweep_repo.base)
    assert triggered(load("changelog-gate.yml"), "pull_request", payload, ["perf-changelog.yaml"])
    assert not triggered(load("changelog-gate.yml"), "pull_request", payload, ["README.md"])
    run = simulate(world, "changelog-gate.yml", "pull_request", payload)
    assert run.ran("check-changelog"), run.log("check-changelog")
    assert "ok (1 appended entr" in run.log("check-changelog")
