"""A stand-in for the self-hosted GPU runners and for what GitHub keeps of a finished run.

`Cluster` plays the runners of a simulated run: each benchmark job lands on a node of its
pool (or on the node it is pinned to), writes its client's output in the client's real
format and turns it into `infx-result.json` with infx's own `process_job`, as the recipe
and `infx results process` would; the jobs a test names fail the way a lost runner, a
root-owned workspace or a broken recipe fail. GitHub's record of the jobs (names, nodes,
conclusions, failing step, timings, logs) goes to the fake API as it happens, so the run's
own collect job reads it. `publish` hands a finished run to the next one: its artifacts
for download-artifact, the run and its artifacts (as zips) for the API.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infx.results.ingest.files import process_job, write_json
from infx.results.ingest.process import RESULT_FILE
from tests.actions.conftest import SweepRepo
from tests.actions.harness import Dispatch, Run, World, simulate
from tests.github.fake_api import FakeGitHub, stamp
from tests.results.formats import lm_eval_result, vllm_result, write

LOGS = {
    "lost": None,  # the runner went before it uploaded a log
    "shutdown": "##[error]The runner has received a shutdown signal. This can happen when "
    "the runner service is stopped, or a manually started runner is canceled.\n",
    "workspace": "Deleting the contents of '/home/runner/actions-runner/_work/bench/bench'\n"
    "##[error]File was unable to be removed Error: EACCES: permission denied, rmdir "
    "'/home/runner/actions-runner/_work/bench/bench/results'\n",
    "recipe": "ValueError: unrecognized arguments: --enable-foo\n"
    "##[error]Process completed with exit code 1.\n",
}
STEPS = {"lost": "Run the recipe", "shutdown": "Run the recipe", "recipe": "Run the recipe",
         "workspace": "Run actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"}  # fmt: skip


def point(row: dict[str, Any]) -> tuple[str, Any, Any, Any, bool]:
    """What a test names a job by: framework, isl, tp, concurrency, eval or not."""
    return row["framework"], row.get("isl"), row.get("tp"), row["conc"], bool(row.get("run-eval"))


@dataclass
class Cluster:
    """The GPU runners of one simulated run."""

    api: FakeGitHub
    run_id: int
    pools: dict[str, list[str]]
    scratch: Path
    # point(row) -> (how it fails, on which node); "empty": succeeds but uploads no result.
    failures: dict[tuple[str, Any, Any, Any, bool], tuple[str, str]] = field(default_factory=dict)
    minutes: float = 20.0
    ran: list[Dispatch] = field(default_factory=list)
    _turn: dict[str, int] = field(default_factory=dict)

    def node_for(self, dispatch: Dispatch) -> str:
        if any(dispatch.runner in nodes for nodes in self.pools.values()):
            return dispatch.runner  # pinned to a node
        pool = self.pools[dispatch.runner]
        turn = self._turn.get(dispatch.runner, 0)
        self._turn[dispatch.runner] = turn + 1
        return pool[turn % len(pool)]

    def __call__(self, dispatch: Dispatch) -> tuple[str, dict[str, Path]]:
        if dispatch.result == "cancelled":
            self._record(dispatch, "cancelled", "", None)
            return "cancelled", {}
        row = dispatch.row
        mode, node = self.failures.get(point(row), ("", ""))
        dispatch.node = node or self.node_for(dispatch)
        self.ran.append(dispatch)
        folder = self.scratch / f"run{self.run_id}-job{len(self.ran)}"
        folder.mkdir(parents=True)
        (artifact,) = dispatch.artifacts
        if mode and mode != "empty":
            self._record(dispatch, "failure", STEPS[mode], mode)
            return "failure", {}
        if mode != "empty":
            self._measure(row, folder)
        else:
            (folder / "server.log").write_text("started\n")
        self._record(dispatch, "success", "", None)
        return "success", {artifact: folder}

    def _measure(self, row: dict[str, Any], folder: Path) -> None:
        if row.get("run-eval"):
            write(folder / "lm-eval/m/results_1.json", lm_eval_result(strict=0.95))
        else:
            # Two runs of one config never read the very same numbers on real GPUs; a
            # small offset per run keeps a repeat's table distinct from its source's.
            conc, wobble = row["conc"], (self.run_id % 97) / 1000
            write(folder / f"{row['exp-name']}.json", vllm_result(
                conc=conc, total=1000.0 * conc, output=400.0 * conc, ttft_ms=50 + wobble,
                tpot_ms=10, itl_ms=10, e2el_ms=900))  # fmt: skip
        write_json(folder / RESULT_FILE, process_job(row, folder, runner_name=""))

    def _record(self, dispatch: Dispatch, conclusion: str, failed: str, mode: str | None) -> None:
        jobs = self.api.state.jobs.setdefault(self.run_id, [])
        job_id = self.run_id * 1000 + len(jobs) + 1
        steps = [
            {"number": 1, "name": "Set up job", "status": "completed", "conclusion": "success"}
        ]
        if failed:
            steps.append(
                {"number": 2, "name": failed, "status": "completed", "conclusion": "failure"}
            )
        started = len(jobs) * 0.1
        jobs.append(
            {
                "id": job_id,
                "run_id": self.run_id,
                "run_attempt": 1,
                "name": dispatch.name,
                "status": "completed",
                "conclusion": conclusion,
                "started_at": stamp(started),
                "completed_at": stamp(started + (self.minutes if conclusion != "cancelled" else 0)),
                "runner_name": dispatch.node or None,
                "labels": [dispatch.runner],
                "steps": steps if conclusion != "cancelled" else [],
            }
        )
        if mode is not None and LOGS[mode] is not None:
            self.api.state.logs[job_id] = LOGS[mode].encode()


def _zip(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def publish(
    api: FakeGitHub,
    world: World,
    run: Run,
    run_id: int,
    *,
    head_sha: str,
    conclusion: str,
    jobs: list[dict[str, Any]] | None = None,
    logs: dict[int, bytes] | None = None,
    event: str = "pull_request",
    branch: str = "feature",
    minute: float = 60,
) -> None:
    """A finished run as GitHub keeps it: the run, its artifacts (zips, which the next run's
    download-artifact steps fetch), jobs and logs, in the API."""
    keep = world.tmp / f"published-{run_id}"
    for name, folder in run.artifacts.items():
        shutil.copytree(folder, keep / name, dirs_exist_ok=True)
    api.state.add_run(
        run_id, head_sha=head_sha, minute=minute, branch=branch, conclusion=conclusion,
        event=event, artifacts=sorted(run.artifacts),
    )  # fmt: skip
    for artifact in api.state.artifacts[run_id]:
        api.state.blobs[artifact["id"]] = _zip(keep / artifact["name"])
    if jobs is not None:
        api.state.jobs[run_id] = json.loads(json.dumps(jobs))
    api.state.logs.update(logs or {})


def pr_merge_ref(repo: Path, number: int = 17) -> None:
    """GitHub's refs/pull/N/merge, pointing at the repository's HEAD (the merge commit)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    subprocess.run(["git", "update-ref", f"refs/pull/{number}/merge", head], cwd=repo, check=True)


def moved_base(
    repo: SweepRepo,
    tmp_path: Path,
    files: dict[str, str],
    message: str = "Settings",
    *,
    merged: dict[str, str] | None = None,
) -> SweepRepo:
    """A copy of `repo` (its tests share the original) whose default branch has moved on
    since the PR's sweep: `files` in one commit `message`, and GitHub's merge ref a fresh
    merge of the PR into it; `merged` are files the merge takes as the PR has them."""
    path = tmp_path / "repo"
    shutil.copytree(repo.path, path)

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=path, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("checkout", "-q", "-b", "main-2", repo.base)
    for name, text in files.items():
        (path / name).write_text(text)
    git("add", *files)
    git("commit", "-qm", message)
    base = git("rev-parse", "HEAD")
    git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    if merged:
        for name, text in merged.items():
            (path / name).write_text(text)
        git("add", *merged)
        git("commit", "-q", "--amend", "--no-edit")
    pr_merge_ref(path)
    return SweepRepo(path, base, repo.head, git("rev-parse", "HEAD"))


def dispatch_repeat(
    world: World, gpu: Cluster, rerun_of: int, approvals: dict[str, bool | None] | None = None
) -> Run:
    """Run `rerun_of`'s repeat for PR 17 as the repeat job dispatches it (on the PR's branch),
    run by `gpu` and under its run id; `approvals` answer the environments' reviewers."""
    event = {"ref": "refs/heads/feature", "repository": {"full_name": "acme/bench"},
             "inputs": {"rerun-of": str(rerun_of), "scope": "repeat", "pr-number": 17}}  # fmt: skip
    return simulate(world, "run-sweep.yml", "workflow_dispatch", event, gpu=gpu,
                    approvals=approvals, run_id=gpu.run_id)  # fmt: skip
