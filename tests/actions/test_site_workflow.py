"""site.yml: after main's sweep stored its results, the results site is built from the
history and deployed to GitHub Pages; only the deploy job may write to Pages, every action
is pinned by commit, and nothing of the triggering run reaches a script."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from infx.history import open_history
from tests.actions.expressions import Status, condition
from tests.actions.harness import WORKFLOWS, World, load, simulate
from tests.history.tables import curve, table

SITE = load("site.yml")
BUILD, DEPLOY = SITE["jobs"]["build"], SITE["jobs"]["deploy"]
PINS = {
    "actions/checkout": "11bd71901bbe5b1630ceea73d27597364c9af683",  # v4.2.2
    "actions/cache/restore": "5a3ec84eff668545956fd18022155c47e93e2684",  # v4.2.3
    "actions/upload-pages-artifact": "fc324d3547104276b827a68afc52ff2a11cc49c9",  # v5.0.0
    "actions/deploy-pages": "cd2ce8fcbc39b97be8ca5fce6e763baed58fa128",  # v5.0.0
}


def test_it_runs_after_sweeps_are_sealed_or_judged_and_by_hand() -> None:
    on = SITE["on"]
    assert set(on) == {"workflow_run", "workflow_dispatch"}
    assert on["workflow_run"] == {
        "workflows": ["sweep-receipt", "run-sweep"], "types": ["completed"]}  # fmt: skip
    assert load("run-sweep.yml")["name"] == "run-sweep"
    assert load("sweep-receipt.yml")["name"] == "sweep-receipt"


def _sealed(event: str, conclusion: str, branch: str = "main") -> dict:
    return {"name": "sweep-receipt", "display_title": f"seal run 4100 ({event})",
            "conclusion": conclusion, "head_branch": branch, "event": "workflow_run"}  # fmt: skip


def _judged(conclusion: str, repo: str = "acme/bench", event: str = "pull_request") -> dict:
    return {"name": "run-sweep", "event": event, "conclusion": conclusion,
            "head_branch": "feature", "head_repository": {"full_name": repo}}  # fmt: skip


@pytest.mark.parametrize(
    ("event", "run", "builds"),
    [
        ("workflow_run", _sealed("push", "success"), True),
        ("workflow_run", _sealed("push", "failure"), False),
        ("workflow_run", _sealed("push", "cancelled"), False),
        # the issuer sealed a pull request's sweep: nothing of main was stored
        ("workflow_run", _sealed("pull_request", "success"), False),
        ("workflow_run", _sealed("push", "success", branch="evil"), False),
        # a pull request's sweep judged in this repository: its verdict was recorded,
        # passed (success) or not (failure)
        ("workflow_run", _judged("success"), True),
        ("workflow_run", _judged("failure"), True),
        ("workflow_run", _judged("cancelled"), False),
        # a fork's pull request is never judged, whatever it calls its branch
        ("workflow_run", _judged("success", repo="fork/bench"), False),
        # run-sweep's own pushes build after the issuer sealed them, not before
        ("workflow_run", _judged("success", event="push"), False),
        ("workflow_dispatch", None, True),
    ],
)
def test_only_sealed_main_pushes_and_judged_pull_requests_build(
    event: str, run: dict | None, builds: bool
) -> None:
    payload = {"workflow_run": run, "repository": {"default_branch": "main"}} if run else {}
    ctx = {"github": {"event_name": event, "event": payload, "repository": "acme/bench"}}
    assert condition(BUILD["if"], ctx, Status()) is builds


def test_permissions_are_least_and_pages_only_on_deploy() -> None:
    assert SITE["permissions"] == {"contents": "read"}
    assert BUILD["permissions"] == {"contents": "read"}
    assert DEPLOY["permissions"] == {"pages": "write", "id-token": "write"}
    assert DEPLOY["environment"]["name"] == "github-pages"
    assert DEPLOY["needs"] == "build"
    assert SITE["concurrency"] == {"group": "site", "cancel-in-progress": False}


def test_actions_are_pinned_and_scripts_interpolate_nothing() -> None:
    text = (WORKFLOWS / "site.yml").read_text()
    uses = re.findall(r"(?m)^\s*(?:-\s*)?uses:\s*(\S+)", text)
    assert uses[0] == "actions/checkout@" + PINS["actions/checkout"]
    for found in uses:
        if found == "./":
            continue
        action, _, sha = found.partition("@")
        assert PINS[action] == sha, found
    for job in (BUILD, DEPLOY):
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step
            if "secrets." in str(step):
                assert set(step) >= {"run", "env"}, step  # secrets reach infx only, via env
    (checkout,) = [
        s for s in BUILD["steps"] if str(s.get("uses", "")).startswith("actions/checkout")
    ]
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert "ref" not in checkout["with"]  # the default branch, never the triggering run's code
    (install,) = [s for s in BUILD["steps"] if s.get("uses") == "./"]
    assert install["with"] == {"extras": "compare"}


def workflow_run_payload() -> dict:
    return {"action": "completed", "workflow_run": _sealed("push", "success") | {"id": 4100},
            "repository": {"default_branch": "main"}}  # fmt: skip


def test_without_a_history_nothing_is_published(world: World) -> None:
    run = simulate(world, "site.yml", "workflow_run", workflow_run_payload(),
                   approvals={"github-pages": True})  # fmt: skip
    assert run.jobs == {"build": "success", "deploy": "skipped"}, run.logs
    assert "no results history yet" in run.log("build")


def test_a_history_is_built_into_a_site_and_deployed(world: World, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    with open_history(f"sqlite:///{history}") as stored:
        for i in range(3):
            stored.ingest(table(6000 + i, curve(1000 + 10 * i), minute=60 * i))
    world.secrets["INFX_HISTORY_URL"] = f"sqlite:///{history}"
    run = simulate(world, "site.yml", "workflow_run", workflow_run_payload(),
                   approvals={"github-pages": True})  # fmt: skip
    assert run.jobs == {"build": "success", "deploy": "success"}, run.logs
    assert run.outputs["build"] == {"built": "true"}
    (index,) = world.tmp.glob("run-*/job-*/workspace/_site/data/index.js")
    doc = json.loads(index.read_text().split("]=", 1)[1].rstrip(";\n"))
    assert [r[0] for r in doc["runs"]] == [6000, 6001, 6002]
    assert (index.parents[1] / "index.html").is_file()
