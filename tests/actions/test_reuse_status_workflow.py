"""reuse-status.yml: a push to main re-decides the open PRs that ask for reuse, and each PR
head's infx/reuse status says what merging it now would get."""

from __future__ import annotations

from pathlib import Path

from tests.actions.harness import World, load, push_payload, simulate, triggered
from tests.conftest import MASTER
from tests.github.fake_api import FakeGitHub
from tests.github.scenario import RUN, green_pr

RETUNED = MASTER.replace("conc-end: 32", "conc-end: 16")


def statuses(api: FakeGitHub, sha: str) -> list[tuple[str, str]]:
    return [(s["state"], s["description"]) for s in api.state.statuses.get(sha, [])]


def test_a_push_to_main_that_changes_the_answer_flips_the_status(
    api: FakeGitHub, tmp_path: Path
) -> None:
    pr = green_pr(api.state)
    world = World(pr.at_main().path, tmp_path, api.url, api.state.requests)
    payload = push_payload()
    assert triggered(load("reuse-status.yml"), "push", payload, ["configs/amd-master.yaml"])
    run = simulate(world, "reuse-status.yml", "push", payload)
    assert run.ran("status"), run.logs
    assert statuses(api, pr.sha1) == [("success", f"ready: run {RUN} measured exactly this")]
    # Main retunes the config the PR's sweep measured: merging now would measure otherwise.
    pr.branch.on_main("retune", **{"configs__amd-master.yaml": RETUNED})
    world = World(pr.at_main().path, tmp_path, api.url, api.state.requests)
    run = simulate(world, "reuse-status.yml", "push", push_payload())
    state, description = statuses(api, pr.sha1)[0]
    assert state == "failure" and "config llama-fp8-mi355x-vllm" in description
    # The same answer again is not posted twice.
    before = api.state.count("POST")
    again = simulate(world, "reuse-status.yml", "push", push_payload())
    assert api.state.count("POST") == before and "already says" in again.logs["status"]


def test_prs_without_a_request_or_from_forks_are_left_alone(
    api: FakeGitHub, tmp_path: Path
) -> None:
    pr = green_pr(api.state)
    api.state.comments = [c for c in api.state.comments if "/reuse-sweep-run" not in c["body"]]
    world = World(pr.at_main().path, tmp_path, api.url, api.state.requests)
    run = simulate(world, "reuse-status.yml", "push", push_payload())
    assert run.ran("status") and "no authorized /reuse-sweep-run" in run.logs["status"]
    assert api.state.statuses == {} and run.writes["status"] == []


def test_the_job_holds_only_what_it_needs() -> None:
    workflow = load("reuse-status.yml")
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    writes = {k for k, v in job["permissions"].items() if v == "write"}
    assert writes == {"statuses"}
    assert list(workflow["on"]) == ["push"] and workflow["on"]["push"]["branches"] == ["main"]
