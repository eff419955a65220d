"""The issuer after a simulated sweep: GitHub marks the sweep run completed and starts
sweep-receipt.yml (workflow_run, the default branch's file), which seals the run and, for a
push to main, stores its results."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.actions.harness import Run, World, simulate
from tests.github.fake_api import FakeGitHub

ISSUER = ".github/workflows/sweep-receipt.yml"


def completed(api: FakeGitHub, run_id: int, conclusion: str = "success") -> dict:
    """The run as GitHub records it once its last job finished."""
    run = next(r for r in api.state.runs if r["id"] == run_id)
    run["status"], run["conclusion"] = "completed", conclusion
    return run


def issuer_run(api: FakeGitHub, world: World, run_id: int, conclusion: str = "success") -> Run:
    """sweep-receipt.yml for the completed run `run_id` (the issuer's run is `run_id` + 50),
    in a checkout of the default branch's tip (the world's HEAD)."""
    run = completed(api, run_id, conclusion)
    tip = subprocess.run(["git", "rev-parse", "HEAD"], cwd=world.workspace, capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    issuer_id = run_id + 50
    api.state.runs[:] = [r for r in api.state.runs if r["id"] != issuer_id]
    api.state.add_run(issuer_id, head_sha=tip, minute=1000, branch="main", event="workflow_run",
                      path=ISSUER, status="in_progress", conclusion=None, artifacts=[],
                      title=f"seal run {run_id} ({run['event']})")  # fmt: skip
    payload = {
        "action": "completed",
        "workflow_run": {
            "id": run_id,
            "run_attempt": run["run_attempt"],
            "name": "run-sweep",
            "event": run["event"],
            "head_branch": run["head_branch"],
            "conclusion": conclusion,
        },
        "repository": {"full_name": world.repository, "default_branch": "main"},
    }
    return simulate(world, "sweep-receipt.yml", "workflow_run", payload, run_id=issuer_id)


def stored_history(world: World) -> Path:
    """The SQLite history the issuer's ingest job left in its workspace."""
    (stored,) = world.tmp.glob("run-*/job-*/workspace/.infx/history.sqlite")
    return stored
