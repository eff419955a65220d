"""codeowner-signoff.yml and review-submitted.yml run as GitHub would run them: the default
branch's code only, the commit status and one comment written with the token, and a review
event that decides nothing itself (its run on a fork's PR has a read-only token, and runs
the PR's own copy of the workflow)."""

from __future__ import annotations

from infx.review.signoff import STATUS_CONTEXT
from tests.actions.conftest import SweepRepo
from tests.actions.harness import World, load, pr_payload, simulate, triggered
from tests.github.fake_api import FakeGitHub

SIGNOFF = load("codeowner-signoff.yml")
REVIEWED = load("review-submitted.yml")
BASE = "1" * 40


def owned_pr(api: FakeGitHub, head: str) -> None:
    """PR 17 (the world's) changes the AMD master config, which @amd-owner owns at its base."""
    api.state.pulls[17]["base"]["sha"] = BASE
    api.state.changed(17, "configs/amd-master.yaml")
    api.state.contents[(".github/CODEOWNERS", BASE)] = b"configs/ @amd-owner\n"
    api.state.permissions["amd-owner"] = "write"


def states(api: FakeGitHub, sha: str) -> list[str]:
    return [s["state"] for s in api.state.statuses.get(sha, []) if s["context"] == STATUS_CONTEXT]


def test_the_workflows_hold_only_what_they_need() -> None:
    assert SIGNOFF["permissions"] == {} and REVIEWED["permissions"] == {}
    (job,) = SIGNOFF["jobs"].values()
    assert job["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "statuses": "write",
        "checks": "read",
    }
    checkout = job["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@") and "ref" not in checkout["with"]
    assert all("${{" not in step.get("run", "") for step in job["steps"])
    assert "secrets." not in str(SIGNOFF)
    (noted,) = REVIEWED["jobs"].values()
    assert "permissions" not in noted and [s.get("uses") for s in noted["steps"]] == [None]
    assert SIGNOFF["on"]["workflow_run"]["workflows"] == [REVIEWED["name"]]


def test_a_push_to_the_pr_checks_it_again(
    world: World, api: FakeGitHub, sweep_repo: SweepRepo
) -> None:
    head = sweep_repo.head
    owned_pr(api, head)
    api.state.review(17, "amd-owner", "APPROVED", "9" * 40, 5)  # the head before this push
    payload = pr_payload("synchronize", [], head_sha=head, base_sha=BASE)
    assert triggered(SIGNOFF, "pull_request_target", payload, [])
    run = simulate(world, "codeowner-signoff.yml", "pull_request_target", payload)
    assert run.ran("signoff"), run.logs
    assert states(api, head) == ["failure"]
    (posted,) = api.state.comments
    assert "waiting for a code-owner sign-off" in posted["body"]
    assert {w[0] for w in run.writes["signoff"]} == {"POST"}  # one status, one comment


def test_a_review_reaches_the_signoff_through_workflow_run(
    world: World, api: FakeGitHub, sweep_repo: SweepRepo
) -> None:
    head = sweep_repo.head
    owned_pr(api, head)
    api.state.review(17, "amd-owner", "APPROVED", head, 5)
    review = {**pr_payload("submitted", []), "review": {"state": "approved"}}
    assert triggered(REVIEWED, "pull_request_review", review, [])
    noted = simulate(world, "review-submitted.yml", "pull_request_review", review)
    assert noted.ran("noted") and noted.writes["noted"] == []
    payload = {  # a fork's PR: GitHub lists no pull request for the run, its head names it
        "action": "completed",
        "workflow_run": {"name": "review-submitted", "head_sha": head, "pull_requests": []},
    }
    assert triggered(SIGNOFF, "workflow_run", payload, [])
    run = simulate(world, "codeowner-signoff.yml", "workflow_run", payload)
    assert run.ran("signoff"), run.logs
    assert states(api, head) == ["success"]


def test_a_review_of_a_same_repository_pr_names_it(
    world: World, api: FakeGitHub, sweep_repo: SweepRepo
) -> None:
    head = sweep_repo.head
    owned_pr(api, head)
    api.state.add_pull(18, head_sha=head)  # another open PR at the same head
    api.state.review(17, "amd-owner", "APPROVED", head, 5)
    payload = {
        "action": "completed",
        "workflow_run": {"name": "review-submitted", "head_sha": head,
                         "pull_requests": [{"number": 17}]},
    }  # fmt: skip
    run = simulate(world, "codeowner-signoff.yml", "workflow_run", payload)
    assert run.ran("signoff"), run.logs
    assert states(api, head) == ["success"]
