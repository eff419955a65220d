"""Who may spend GPU-hours through a pull request's labels, with run-sweep.yml as GitHub runs
it (the harness, the fake API): every sweep or modifier label event checks its sender, and
the PR's sweep labels as they stand must have been set by people who may push, whatever
the budget table holds; a sender without write permission neither starts, widens, restarts
nor cancels a sweep unapproved. Each case is an input a triager (GitHub reports the triage
role as read) or bad luck controls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.actions.conftest import SweepRepo
from tests.actions.expressions import render
from tests.actions.harness import (
    Run,
    World,
    load,
    plan_rows,
    planned,
    pr_payload,
    simulate,
)
from tests.conftest import entry, make_repo
from tests.github.fake_api import FakeGitHub, Fault

WORKFLOW = load("run-sweep.yml")
PRIMARY = "full-sweep-enabled"


def budgeted(tmp_path: Path, budget: float | None) -> SweepRepo:
    """A PR selecting the Llama configs (15 GPU-hours), with `budget` for its label at the
    base (None: no [budget] table at all)."""
    repo = make_repo(tmp_path / "repo")
    if budget is not None:
        repo.commit("budget", **{"infx.toml": f"[budget]\n{PRIMARY} = {budget}\n"})
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    head = repo.commit(
        "Tune every Llama FP8 config",
        **{"perf-changelog.yaml": repo.read().decode() + "\n" + entry(["llama-fp8-*"])},
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


def timeline(api: FakeGitHub, *changes: tuple[str, str, str]) -> None:
    """(action, label, actor) label events on PR 17, oldest first."""
    for minute, (action, label, actor) in enumerate(changes, 1):
        api.state.label(17, action, label, minute)
        api.state.timeline[17][-1]["actor"] = api.state.user(actor)


def people(api: FakeGitHub) -> None:
    api.state.permissions.update(
        {"maintainer": "write", "admin": "admin", "triager": "read", "outsider": "none"}
    )


def event(
    repo: SweepRepo, action: str, labels: list[str], label: str | None = None, sender: str = ""
) -> dict[str, Any]:
    payload = pr_payload(action, labels, label, head_sha=repo.head, base_sha=repo.base)
    if sender:
        payload["sender"] = {"login": sender}
    return payload


def sweep(
    api: FakeGitHub, tmp_path: Path, repo: SweepRepo, payload: dict[str, Any], **kwargs: Any
) -> Run:
    api.state.add_pull(17, head_sha=repo.head, commits=[repo.head], labels=[])
    world = World(repo.path, tmp_path / "world", api.url, api.state.requests)
    (tmp_path / "world").mkdir(exist_ok=True)
    return simulate(world, "run-sweep.yml", "pull_request", payload, **kwargs)


def held(run: Run, why: str) -> None:
    """Setup planned, the estimate says why it waits, and no GPU job started."""
    assert run.ran("setup"), run.log("setup")
    assert run.outputs["setup"]["over-budget"] == "true"
    assert why in run.log("setup"), run.log("setup")
    assert run.jobs["budget-approval"] == "waiting" and run.dispatches == []


def ran(run: Run) -> None:
    assert run.ran("setup"), run.log("setup")
    assert run.outputs["setup"]["over-budget"] == "false"
    assert len(run.dispatches) == len(plan_rows(planned(run))) > 0


# --- item 7: every sweep label, whatever the budget table holds ---------------------------------


@pytest.mark.parametrize("budget", [None, 1000.0, 1.0], ids=["no budget", "within", "over"])
def test_a_triagers_sweep_label_starts_nothing_unapproved_with_or_without_a_budget(
    api: FakeGitHub, tmp_path: Path, budget: float | None
) -> None:
    repo = budgeted(tmp_path, budget)
    people(api)
    payload = event(repo, "labeled", [PRIMARY], PRIMARY, sender="triager")
    run = sweep(api, tmp_path, repo, payload)
    held(run, f"label {PRIMARY} added by triager, who lacks write permission")
    ours = [s for s in api.state.statuses[repo.head] if s["context"] == "infx/gpu-budget"]
    assert ours[0]["state"] == "pending" and "waiting for approval" in ours[0]["description"]
    # A reviewer's approval is what lets it run.
    api.state.environment("gpu-budget", ["lead"])
    api.state.approve(4242, "lead", "gpu-budget")
    approved = sweep(api, tmp_path, repo, payload, approvals={"gpu-budget": True})
    assert len(approved.dispatches) == len(plan_rows(planned(approved))) > 0


@pytest.mark.parametrize("budget", [None, 1000.0], ids=["no budget", "within"])
def test_a_maintainers_sweep_label_runs_without_waiting(
    api: FakeGitHub, tmp_path: Path, budget: float | None
) -> None:
    repo = budgeted(tmp_path, budget)
    people(api)
    ran(sweep(api, tmp_path, repo, event(repo, "labeled", [PRIMARY], PRIMARY, "maintainer")))


# --- item 8: modifier labels and every label event check the sender ------------------------------


def test_a_triager_cannot_widen_or_restart_a_maintainers_sweep(
    api: FakeGitHub, tmp_path: Path
) -> None:
    """The maintainer's sweep is evals-only (2 jobs); a triager's `skip_queue`, `all-evals`
    or removing `evals-only` (11 jobs) is held for a reviewer, and a later push by the
    maintainer is held too while a label a triager set or removed stands."""
    repo = budgeted(tmp_path, None)
    people(api)
    maintainer = [("labeled", PRIMARY, "maintainer"), ("labeled", "evals-only", "maintainer")]
    cases = [
        ("labeled", [PRIMARY, "evals-only", "skip_queue"], "skip_queue", "added by triager"),
        ("labeled", [PRIMARY, "evals-only", "all-evals"], "all-evals", "added by triager"),
        ("unlabeled", [PRIMARY], "evals-only", "label evals-only removed by triager"),
    ]
    for action, labels, label, why in cases:
        api.state.timeline.clear()
        timeline(api, *maintainer)
        held(sweep(api, tmp_path, repo, event(repo, action, labels, label, "triager")), why)
    # The triager's removal is in the timeline now; the maintainer's push does not endorse it.
    api.state.timeline.clear()
    timeline(api, *maintainer, ("unlabeled", "evals-only", "triager"))
    push = sweep(api, tmp_path, repo, event(repo, "synchronize", [PRIMARY], sender="maintainer"))
    held(push, "label evals-only removed by triager, who lacks write permission")
    # Labels the maintainer set, as they stand: the push sweeps.
    api.state.timeline.clear()
    timeline(api, *maintainer, ("unlabeled", "evals-only", "maintainer"))
    ran(sweep(api, tmp_path, repo, event(repo, "synchronize", [PRIMARY], sender="maintainer")))


@pytest.mark.parametrize(
    ("action", "labels", "label", "sender", "why"),
    [
        ("ready_for_review", [PRIMARY], None, "triager", "marked ready for review by triager"),
        ("labeled", [PRIMARY], PRIMARY, "outsider", "added by outsider"),
        # A label no timeline event names (added before the timeline could say, or by an app).
        ("synchronize", [PRIMARY, "all-evals"], None, "maintainer", "all-evals: no one is known"),
    ],
)
def test_other_unauthorized_events_hold(
    api: FakeGitHub, tmp_path: Path, action: str, labels: list[str], label: str | None,
    sender: str, why: str,
) -> None:  # fmt: skip
    repo = budgeted(tmp_path, None)
    people(api)
    timeline(api, ("labeled", PRIMARY, "maintainer"))
    held(sweep(api, tmp_path, repo, event(repo, action, labels, label, sender)), why)


def test_when_the_permissions_cannot_be_read_the_sweep_holds(
    api: FakeGitHub, tmp_path: Path
) -> None:
    repo = budgeted(tmp_path, None)
    people(api)
    timeline(api, ("labeled", PRIMARY, "maintainer"))
    api.state.faults.append(Fault("/collaborators/", 502, times=100))
    run = sweep(api, tmp_path, repo, event(repo, "labeled", [PRIMARY], PRIMARY, "maintainer"))
    held(run, "could not be read")


# --- item 8: a label event cannot cancel a sweep unless its sender may push --------------------


def group(payload: dict[str, Any], event_name: str = "pull_request", run_id: int = 99) -> str:
    inputs = payload.get("inputs", {}) if event_name == "workflow_dispatch" else {}
    ctx = {
        "github": {"event_name": event_name, "event": payload, "sha": "f" * 40, "run_id": run_id},
        "inputs": inputs,
    }
    return render(WORKFLOW["concurrency"]["group"], ctx)


def cancels(payload: dict[str, Any], event_name: str = "pull_request") -> bool:
    inputs = payload.get("inputs", {}) if event_name == "workflow_dispatch" else {}
    ctx = {"github": {"event_name": event_name, "event": payload}, "inputs": inputs}
    return render(WORKFLOW["concurrency"]["cancel-in-progress"], ctx) is True


@pytest.mark.parametrize(
    ("action", "label"),
    [
        ("labeled", "skip_queue"),
        ("unlabeled", "evals-only"),
        ("labeled", PRIMARY),
        ("unlabeled", PRIMARY),
        ("labeled", "documentation"),
        ("ready_for_review", None),
    ],
)
def test_no_label_or_ready_event_shares_the_sweeps_concurrency_group(
    action: str, label: str | None
) -> None:
    """GitHub evaluates the group before any job could read the sender's permission: such an
    event's run has a group of its own, so it cancels nothing by itself (the `supersede`
    job cancels older sweeps, and only for a sender who may push)."""
    sweep_group = group(pr_payload("synchronize", [PRIMARY]))
    assert sweep_group == "run-sweep-17"
    mine = group(pr_payload(action, [PRIMARY], label), run_id=99)
    assert mine != sweep_group and mine != group(pr_payload(action, [PRIMARY], label), run_id=98)


def supersede(
    api: FakeGitHub, tmp_path: Path, repo: SweepRepo, payload: dict[str, Any]
) -> list[str]:
    """Run the workflow for the event with an older sweep of the PR in flight; the runs the
    event cancelled."""
    api.state.add_run(7000, head_sha=repo.head, minute=0, status="in_progress", conclusion=None)
    api.state.add_run(7001, head_sha="e" * 40, minute=1, status="waiting", conclusion=None,
                      event="workflow_dispatch")  # fmt: skip
    api.state.add_run(6999, head_sha=repo.head, minute=0, branch="other", status="in_progress",
                      conclusion=None)  # fmt: skip
    api.state.add_run(7100, head_sha=repo.head, minute=9, status="queued", conclusion=None)
    sweep(api, tmp_path, repo, payload, run_id=7050)
    return [path for method, path in api.state.requests if method == "POST" and "cancel" in path]


@pytest.mark.parametrize("sender", ["triager", "outsider"])
@pytest.mark.parametrize(
    ("action", "labels", "label"),
    [
        ("labeled", [PRIMARY, "skip_queue"], "skip_queue"),
        ("unlabeled", [PRIMARY], "evals-only"),
        ("unlabeled", [], PRIMARY),  # taking the label off: no new sweep, and no cancel either
        ("labeled", [PRIMARY, "sweep-enabled"], "sweep-enabled"),  # two labels: setup skipped
    ],
)
def test_a_triagers_label_toggle_cancels_no_sweep(
    api: FakeGitHub, tmp_path: Path, sender: str, action: str, labels: list[str], label: str
) -> None:
    repo = budgeted(tmp_path, None)
    people(api)
    timeline(api, ("labeled", PRIMARY, "maintainer"))
    cancelled = supersede(api, tmp_path, repo, event(repo, action, labels, label, sender))
    assert cancelled == []


@pytest.mark.parametrize(
    ("action", "labels", "label", "sender"),
    [
        ("labeled", [PRIMARY, "all-evals"], "all-evals", "maintainer"),
        ("unlabeled", [], PRIMARY, "admin"),  # a maintainer stops the sweep
        ("synchronize", [PRIMARY], None, "maintainer"),
        ("ready_for_review", [PRIMARY], None, "maintainer"),
    ],
)
def test_a_maintainers_event_cancels_the_prs_older_sweeps_only(
    api: FakeGitHub, tmp_path: Path, action: str, labels: list[str], label: str | None,
    sender: str,
) -> None:  # fmt: skip
    """Older runs of the workflow on the PR's branch (a sweep, a rerun waiting for approval);
    never a newer one, nor another branch's."""
    repo = budgeted(tmp_path, None)
    people(api)
    timeline(api, ("labeled", PRIMARY, "maintainer"))
    cancelled = supersede(api, tmp_path, repo, event(repo, action, labels, label, sender))
    assert cancelled == [
        "/repos/acme/bench/actions/runs/7000/cancel",
        "/repos/acme/bench/actions/runs/7001/cancel",
    ]


def test_a_label_event_on_another_label_starts_no_job_that_may_cancel(
    api: FakeGitHub, tmp_path: Path
) -> None:
    repo = budgeted(tmp_path, None)
    people(api)
    payload = event(repo, "labeled", [PRIMARY, "documentation"], "documentation", "maintainer")
    assert supersede(api, tmp_path, repo, payload) == []


# --- item 9: the budget holds only where a reviewer approved -----------------------------------


@pytest.mark.parametrize(
    ("environment", "why"),
    [
        ("missing", "gpu-budget does not exist"),
        ("unprotected", "gpu-budget has no required reviewers"),
        ("wait timer only", "gpu-budget has no required reviewers"),
        ("no approval recorded", "no reviewer's approval of gpu-budget is recorded"),
        ("another environment approved", "no reviewer's approval of gpu-budget is recorded"),
        ("protected", None),
    ],
)
def test_an_over_budget_sweep_passes_only_a_reviewers_approval(
    api: FakeGitHub, tmp_path: Path, environment: str, why: str | None
) -> None:
    """GitHub creates an environment a job names when it is missing, unprotected: the
    approval job then starts at once. It reads the environment's required reviewers and this
    run's recorded approval, and without both it fails, starting no GPU job and never
    saying "approved"."""
    repo = budgeted(tmp_path, 1.0)
    people(api)
    timeline(api, ("labeled", PRIMARY, "maintainer"))
    if environment == "unprotected":
        api.state.environment("gpu-budget", None)
    elif environment == "wait timer only":
        api.state.environment("gpu-budget", None, wait=5)
    elif environment != "missing":
        api.state.environment("gpu-budget", ["lead"], teams=["gpu-owners"])
    if environment == "protected":
        api.state.approve(7060, "lead", "gpu-budget")
    elif environment == "another environment approved":
        api.state.approve(7060, "lead", "production")
    payload = event(repo, "synchronize", [PRIMARY], sender="maintainer")
    # The job starts as GitHub starts it: at once without reviewers, after one with them.
    run = sweep(api, tmp_path, repo, payload, approvals={"gpu-budget": True}, run_id=7060)
    assert run.outputs["setup"]["over-budget"] == "true"
    ours = [s for s in api.state.statuses[repo.head] if s["context"] == "infx/gpu-budget"]
    if why is None:
        assert run.ran("budget-approval") and len(run.dispatches) > 0
        assert ours[0]["state"] == "success"
        assert ours[0]["description"].startswith("approved by lead in gpu-budget: over budget")
        return
    assert run.jobs["budget-approval"] == "failure" and run.dispatches == []
    assert why in run.log("budget-approval")
    assert ours[0]["state"] == "failure" and ours[0]["description"].startswith("held: ")
    assert not any("approved" in s["description"] for s in ours)


def test_a_rerun_of_a_sweep_held_for_who_labeled_it_waits_for_approval_too(
    api: FakeGitHub, tmp_path: Path
) -> None:
    """A triager's label held the sweep, within budget; a reviewer approved that one run.
    Its reruns (the automatic infra retry, a repeat, /rerun-failed) are dispatched with the
    workflow's token: nothing said who asked for their GPU-hours, and within budget they
    started unapproved. The record a rerun carries says the lineage waited, and why."""
    from tests.actions.gpu import pr_merge_ref, publish
    from tests.actions.harness import World

    repo = budgeted(tmp_path, 1000.0)
    pr_merge_ref(repo.path)
    people(api)
    api.state.environment("gpu-budget", ["lead"])
    api.state.approve(7100, "lead", "gpu-budget")
    payload = event(repo, "labeled", [PRIMARY], PRIMARY, sender="triager")
    first = sweep(api, tmp_path, repo, payload, approvals={"gpu-budget": True}, run_id=7100)
    assert first.outputs["setup"]["over-budget"] == "true" and first.dispatches
    world = World(repo.path, tmp_path / "world", api.url, api.state.requests)
    publish(api, world, first, 7100, head_sha=repo.head, conclusion="failure", jobs=[])
    dispatch = {"ref": "refs/heads/feature", "repository": {"full_name": "acme/bench"},
                "inputs": {"rerun-of": "7100", "scope": "missing", "pr-number": 17}}  # fmt: skip
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", dispatch, run_id=7101)
    assert rerun.ran("setup"), rerun.log("setup")
    assert rerun.outputs["setup"]["over-budget"] == "true", rerun.log("setup")
    says = f"run 7100's sweep waited for approval: label {PRIMARY} added by triager"
    assert says in rerun.log("setup"), rerun.log("setup")
    assert rerun.jobs["budget-approval"] == "waiting" and rerun.dispatches == []
