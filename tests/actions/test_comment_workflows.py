"""The comment-command workflows as GitHub runs them: who can start a job, which job holds
which token, and that only the job acting on a checked decision writes to GitHub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.actions.expressions import condition, render
from tests.actions.harness import World, comment_payload, load, simulate, triggered
from tests.conftest import GitRepo
from tests.github.fake_api import REPO, FakeGitHub
from tests.github.scenario import RUN, green_pr

WRITE = {"write"}


def staged_pr(api: FakeGitHub) -> None:
    green_pr(api.state)
    api.state.pulls[7]["merged_at"] = None
    api.state.artifacts[RUN] = [
        {"id": 1, "name": "results_bmk", "expired": False},
        {"id": 2, "name": "changelog-metadata", "expired": False},
    ]


def reactions(api: FakeGitHub, comment: dict) -> list[str]:
    return [r["content"] for r in api.state.reactions.get(comment["id"], [])]


@pytest.mark.parametrize(
    ("workflow", "decide", "act"),
    [("reuse-sweep-run.yml", "decide", "react"), ("stage-results.yml", "decide", "act")],
)
def test_the_job_reading_the_comment_holds_read_only_tokens(workflow, decide, act) -> None:
    jobs = load(workflow)["jobs"]
    assert load(workflow)["permissions"] == {}
    assert not WRITE & set(jobs[decide]["permissions"].values())
    assert "--decide-only" in str(jobs[decide]["steps"])
    assert jobs[act]["needs"] == decide
    assert WRITE & set(jobs[act]["permissions"].values())
    # The acting job sees the comment only through infx's checks, never in an expression.
    assert "github.event.comment" not in json.dumps(jobs[act])


def pr_world(api: FakeGitHub, tmp_path: Path):
    """The PR of green_pr and a world whose checkout is main with every branch: the
    comment workflows' checkout (the default branch, full history)."""
    pr = green_pr(api.state)
    return pr, World(pr.at_main().path, tmp_path, api.url, api.state.requests)


def test_reuse_request_reacted_by_the_second_job_only(api: FakeGitHub, tmp_path: Path) -> None:
    pr, world = pr_world(api, tmp_path)
    comment = api.state.comments[-1]
    payload = comment_payload(comment)
    assert triggered(load("reuse-sweep-run.yml"), "issue_comment", payload, [])
    run = simulate(world, "reuse-sweep-run.yml", "issue_comment", payload)
    assert run.ran("decide") and run.ran("react"), run.logs
    assert run.outputs["decide"]["reaction"] == "+1"
    assert json.loads(run.outputs["decide"]["status"]) == {
        "sha": pr.sha1,
        "state": "success",
        "description": f"ready: run {RUN} measured exactly this",
    }
    assert run.writes["decide"] == []
    assert run.writes["react"] == [
        ("POST", f"/repos/acme/bench/issues/comments/{comment['id']}/reactions"),
        ("POST", f"/repos/acme/bench/statuses/{pr.sha1}"),
    ]
    assert reactions(api, comment) == ["+1"]
    assert api.state.statuses[pr.sha1][0]["state"] == "success"


def test_a_request_main_has_overtaken_is_not_ready(api: FakeGitHub, tmp_path: Path) -> None:
    """Main retunes the PR's config after its sweep: the comment gets -1 and the PR head
    says why, so the maintainer learns it before merging."""
    from tests.conftest import MASTER

    pr = green_pr(api.state)
    pr.branch.on_main(
        "retune", **{"configs__amd-master.yaml": MASTER.replace("conc-end: 32", "conc-end: 16")}
    )
    world = World(pr.at_main().path, tmp_path, api.url, api.state.requests)
    comment = api.state.comments[-1]
    run = simulate(world, "reuse-sweep-run.yml", "issue_comment", comment_payload(comment))
    assert run.outputs["decide"]["reaction"] == "-1"
    (status,) = api.state.statuses[pr.sha1]
    assert status["state"] == "failure"
    assert status["description"].startswith(f"not ready: run {RUN} did not measure what merges")
    assert "config llama-fp8-mi355x-vllm: scenarios.fixed-seq-len[0]" in status["description"]


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE"])
def test_outsiders_start_no_job(world: World, api: FakeGitHub, association: str) -> None:
    staged_pr(api)
    comment = api.state.add_comment(7, "drive-by", "/reuse-sweep-run\n", 300, association)
    for workflow in ("reuse-sweep-run.yml", "stage-results.yml"):
        body = "/stage-results" if workflow == "stage-results.yml" else comment["body"]
        run = simulate(world, workflow, "issue_comment", comment_payload({**comment, "body": body}))
        assert set(run.jobs.values()) == {"skipped"}
    assert api.state.requests == []


def test_member_without_write_permission_gets_minus_one(world: World, api: FakeGitHub) -> None:
    """author_association is only a first filter: infx still checks the real permission."""
    staged_pr(api)
    comment = api.state.add_comment(7, "reader0", "/reuse-sweep-run", 300, "MEMBER")
    run = simulate(world, "reuse-sweep-run.yml", "issue_comment", comment_payload(comment))
    assert run.outputs["decide"]["reaction"] == "-1" and run.writes["decide"] == []
    assert run.outputs["decide"]["status"] == ""  # not a request: the PR's status is not its
    assert reactions(api, comment) == ["-1"]


def test_stage_results_dispatches_from_the_acting_job(world: World, api: FakeGitHub) -> None:
    staged_pr(api)
    comment = api.state.add_comment(7, "maintainer", f"/stage-results {RUN}", 300)
    run = simulate(world, "stage-results.yml", "issue_comment", comment_payload(comment))
    assert run.ran("decide") and run.ran("act"), run.logs
    assert run.writes["decide"] == []
    decided = json.loads(run.outputs["decide"]["dispatch"])
    assert decided["event_type"] == "stage-results"
    (dispatch,) = api.state.dispatches
    assert dispatch == decided
    assert dispatch["client_payload"]["run-id"] == RUN
    assert reactions(api, comment) == ["+1"]


def test_a_refused_stage_request_dispatches_nothing(world: World, api: FakeGitHub) -> None:
    staged_pr(api)
    comment = api.state.add_comment(7, "maintainer", "/stage-results please", 300)
    run = simulate(world, "stage-results.yml", "issue_comment", comment_payload(comment))
    assert run.outputs["decide"] == {"reaction": "-1", "dispatch": ""}
    assert api.state.dispatches == [] and reactions(api, comment) == ["-1"]


def test_no_decision_no_acting_job(world: World, api: FakeGitHub) -> None:
    staged_pr(api)
    comment = api.state.add_comment(7, "maintainer", "we could /use 12 later, inline", 300)
    run = simulate(world, "reuse-sweep-run.yml", "issue_comment", comment_payload(comment))
    assert run.ran("decide") and run.outputs["decide"] == {"reaction": "", "status": ""}
    assert run.jobs["react"] == "skipped" and api.state.count("POST") == 0


DISPATCH = {
    "event_type": "stage-results",
    "client_payload": {
        "pr-number": 7,
        "run-id": RUN,
        "run-attempt": 1,
        "requested-by": "maintainer",
        "artifacts": [{"id": 1, "name": "results_bmk", "staged-as": f"pr7-run{RUN}-results_bmk"}],
    },
}


@pytest.mark.parametrize(
    ("reaction", "dispatch", "message"),
    [
        ("+2", "", "reaction must be one of"),
        ("+1", json.dumps({**DISPATCH, "event_type": "deploy"}), "only the 'stage-results' event"),
        (
            "+1",
            json.dumps(
                {**DISPATCH, "client_payload": {**DISPATCH["client_payload"], "pr-number": 8}}
            ),
            "the comment is on #7",
        ),
        ("-1", json.dumps(DISPATCH), "only with an accepted (+1) command"),
        ("+1", "{not json", "dispatch is not JSON"),
        (
            "+1",
            json.dumps({**DISPATCH, "client_payload": {**DISPATCH["client_payload"], "extra": 1}}),
            "client_payload keys must be",
        ),
    ],
)
def test_apply_decision_refuses_what_was_not_decided_that_way(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path, reaction: str, dispatch: str, message: str
) -> None:
    staged_pr(api)
    comment = api.state.add_comment(7, "maintainer", f"/stage-results {RUN}", 300)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_payload(comment)))
    result = repo.infx(
        "apply-decision",
        env={
            "GITHUB_EVENT_NAME": "issue_comment",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_API_URL": api.url,
            "GITHUB_REPOSITORY": "acme/bench",
            "GITHUB_TOKEN": "test-token",
            "REACTION": reaction,
            "DISPATCH": dispatch,
        },
    )
    assert result.exit_code == 2 and message in result.output, result.output
    assert api.state.requests == []


COMMANDS = {
    "reuse-sweep-run.yml": "/reuse-sweep-run",
    "stage-results.yml": "/stage-results",
    "rerun-failed.yml": "/rerun-failed",
}


def comment(
    body: str, association: str = "MEMBER", on_pr: bool = True, login: str = "someone"
) -> dict:
    found = {
        "id": 4001 + sum(map(ord, login)),
        "body": body,
        "author_association": association,
        "user": {"login": login},
        "created_at": "2026-11-30T12:00:00Z",
        "updated_at": "2026-11-30T12:00:00Z",
    }
    return comment_payload(found, number=7, on_pr=on_pr)


def slots(workflow: str, payload: dict) -> list[str]:
    """The concurrency groups a run of `workflow` for this event takes a place in, as GitHub
    queues them: a workflow-level group for every run, whatever its jobs' `if:` say; a
    job's group only when the job starts (`decide` is the first; the acting job needs it).
    With cancel-in-progress off a group keeps one pending run, and a newer one replaces it."""
    found = load(workflow)
    actor = payload["comment"]["user"]["login"]  # who triggered the run: the commenter
    ctx = {
        "github": {
            "event_name": "issue_comment",
            "event": payload,
            "repository": REPO,
            "actor": actor,
        }
    }
    taken = []
    if "concurrency" in found:
        taken.append(render(found["concurrency"]["group"], ctx))
    decide = found["jobs"]["decide"]
    if condition(decide["if"], ctx) and "concurrency" in decide:
        taken.append(render(decide["concurrency"]["group"], ctx))
        (acting,) = [name for name in found["jobs"] if name != "decide"]
        taken.append(render(found["jobs"][acting]["concurrency"]["group"], ctx))
    return taken


FILTERED_OUT = {
    "an outsider's command": ("{command}", "NONE", True),
    "a contributor's command": ("{command} 1039", "CONTRIBUTOR", True),
    "a member's remark": ("looks good", "MEMBER", True),
    "an outsider's thanks": ("thanks!", "NONE", True),
    "a command on an issue": ("{command}", "MEMBER", False),
}


@pytest.mark.parametrize("workflow", COMMANDS)
@pytest.mark.parametrize(("body", "association", "on_pr"), FILTERED_OUT.values(), ids=FILTERED_OUT)
def test_a_comment_the_jobs_filter_out_takes_no_concurrency_slot(
    workflow: str, body: str, association: str, on_pr: bool
) -> None:
    """Otherwise anyone's comment would replace a member's pending command, which then
    never runs (an outsider's "thanks" cancelled a maintainer's pending /rerun-failed)."""
    payload = comment(body.format(command=COMMANDS[workflow]), association, on_pr)
    assert triggered(load(workflow), "issue_comment", payload, [])
    assert slots(workflow, payload) == []


@pytest.mark.parametrize("workflow", COMMANDS)
def test_a_members_command_queues_behind_only_their_own(workflow: str) -> None:
    """A pending command is replaced only by a newer one of the same commenter: a member
    without write permission (the triage role passes the association filter), or another
    maintainer, never cancels someone else's pending command or its acting job."""
    jobs = load(workflow)["jobs"]
    prefix = workflow.removesuffix(".yml")
    mine = slots(workflow, comment(f"{COMMANDS[workflow]} 1039", login="maintainer"))
    again = slots(workflow, comment(COMMANDS[workflow], login="maintainer"))
    theirs = slots(workflow, comment(f"{COMMANDS[workflow]} 1039", login="triager"))
    assert mine == [f"{prefix}-7-maintainer", f"{prefix}-apply-7-maintainer"]
    assert again == mine
    assert not set(mine) & set(theirs)
    for job in jobs.values():
        assert job["concurrency"]["cancel-in-progress"] is False
    assert "concurrency" not in load(workflow)
