"""Run this repository's workflow files as GitHub Actions would, as far as a test machine can.

From the YAML: triggers, job order and `needs`, `if:` (GitHub's own evaluator, with the
job-status functions computed from the results up the whole `needs` chain), matrices and
their 256-entry limit, reusable-workflow calls and their inputs, step `env:`, step and job
outputs, artifacts between jobs. `run:` steps run for real in bash, with the step's
environment, in a clone of a real git repository; `infx` is on PATH only after the job
installed it through this repository's action (`uses: ./`), and the GitHub API is the fake
server of tests/github. What cannot run here is recorded instead: a job on a self-hosted
(GPU) runner becomes a `Dispatch` (a test may play the GPU runner: `gpu=` decides each
job's outcome and writes what its upload step would), other actions are no-ops. Another
run's artifacts come through the fake API. A job with an `environment:` waits for its
required reviewers: `approvals` says whether they approved, rejected, or have not acted yet
(then it and every job that needs it never start, as in a run left waiting). A matrix with
`fail-fast` cancels its entries after the first failure.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.actions.expressions import Status, condition, render
from tests.conftest import load_yaml12
from tests.github.sigstore import Fulcio
from tests.step_files import read_step_file as _env_file

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
ACTION = ROOT / "action.yml"
DEFAULT_PR_TYPES = ("opened", "synchronize", "reopened")
HOSTED = ("ubuntu-latest",)
MATRIX_LIMIT = 256
INFX = Path(sys.executable).parent / "infx"
NO_API = "http://127.0.0.1:9"
FULCIO = Fulcio()  # GitHub's OIDC tokens and Sigstore, as the attest action meets them


def load(name: str) -> dict[str, Any]:
    return load_yaml12((WORKFLOWS / name).read_text())


def load_action() -> dict[str, Any]:
    return load_yaml12(ACTION.read_text())


def triggered(
    workflow: dict[str, Any], event_name: str, payload: dict[str, Any], changed: list[str]
) -> bool:
    on = workflow["on"]
    if event_name not in on:
        return False
    spec = on[event_name] or {}
    if event_name == "workflow_dispatch":
        return True
    if event_name == "workflow_run":
        return payload["action"] in spec.get("types", []) and payload["workflow_run"][
            "name"
        ] in spec.get("workflows", [])
    if event_name in ("pull_request", "pull_request_target") and payload["action"] not in spec.get(
        "types", DEFAULT_PR_TYPES
    ):
        return False
    if event_name == "pull_request_review" and payload["action"] not in spec.get(
        "types", ("submitted", "edited", "dismissed")
    ):
        return False
    if event_name == "issue_comment" and payload["action"] not in spec.get("types", []):
        return False
    if event_name == "push" and "branches" in spec:
        branch = payload["ref"].removeprefix("refs/heads/")
        if not any(fnmatch.fnmatchcase(branch, b) for b in spec["branches"]):
            return False
    if "paths" in spec:
        return any(
            fnmatch.fnmatchcase(path, pattern) for path in changed for pattern in spec["paths"]
        )
    return True


@dataclass
class World:
    """What a run sees: the repository actions/checkout gives, the API, a scratch folder."""

    workspace: Path
    tmp: Path
    api_url: str = NO_API
    api_requests: list[tuple[str, str]] | None = None
    repository: str = "acme/bench"
    token: str = "test-token"
    secrets: dict[str, str] = field(default_factory=dict)  # the repository's secrets


@dataclass
class Dispatch:
    """A job GitHub would start on a self-hosted runner, as it would start it."""

    job: str
    runner: str
    steps: list[dict[str, Any]]
    name: str = ""  # the job's display name, as the jobs API lists it
    result: str = "success"
    node: str = ""  # the runner node that took it (a GPU hook may say)

    @property
    def row(self) -> dict[str, Any]:
        (row,) = [json.loads(s["env"]["ROW"]) for s in self.steps if "ROW" in s.get("env", {})]
        return row

    @property
    def artifacts(self) -> list[str]:
        return [
            s["with"]["name"]
            for s in self.steps
            if str(s.get("uses", "")).startswith("actions/upload-artifact@")
        ]


# A test playing the GPU runner: the job's result and the artifacts its upload step would
# leave (name -> folder).
GpuRunner = Callable[[Dispatch], tuple[str, dict[str, Path]]]


@dataclass
class Run:
    jobs: dict[str, str] = field(default_factory=dict)  # success | failure | skipped | ...
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    dispatches: list[Dispatch] = field(default_factory=list)
    matrices: dict[str, int] = field(default_factory=dict)
    artifacts: dict[str, Path] = field(default_factory=dict)
    writes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    cancelled: list[Dispatch] = field(default_factory=list)  # GPU jobs fail-fast cancelled
    summaries: dict[str, str] = field(default_factory=dict)  # job -> its step summaries

    def ran(self, job: str) -> bool:
        return self.jobs.get(job) == "success"

    def log(self, job: str) -> str:
        return self.logs.get(job, "")


def _gh_cli(home: Path) -> Path:
    """GitHub's CLI as the hosted runner image has it, for what the workflows ask of it:
    `gh attestation trusted-root` prints the trusted root of the Sigstore this harness
    plays (FULCIO); anything else fails, as a command this harness does not know."""
    folder = home / "gh-cli"
    folder.mkdir(exist_ok=True)
    (folder / "trusted-root.jsonl").write_bytes(FULCIO.trusted_root())
    script = folder / "gh"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "attestation trusted-root" ]; then\n'
        f'  exec cat "{folder / "trusted-root.jsonl"}"\n'
        "fi\n"
        'echo "gh: not simulated: $*" >&2\nexit 1\n'
    )
    script.chmod(0o755)
    return folder


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _as_output(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _context(
    world: World,
    event_name: str,
    payload: dict[str, Any],
    head: str,
    run_id: int,
    workflow: str = "run-sweep.yml",
) -> dict[str, Any]:
    number = (payload.get("pull_request") or {}).get("number")
    if event_name == "pull_request":
        ref = f"refs/pull/{number}/merge"
    else:
        ref = payload.get("ref", "refs/heads/main")
    sha = payload.get("after") if event_name == "push" else head
    return {
        "github": {
            "event_name": event_name,
            "event": payload,
            "repository": world.repository,
            "repository_owner": world.repository.split("/")[0],
            "sha": sha,
            "ref": ref,
            "ref_name": ref.removeprefix("refs/heads/"),
            "run_id": run_id,
            "run_attempt": 1,
            "workflow_ref": f"{world.repository}/.github/workflows/{workflow}@{ref}",
            "workflow_sha": sha,
            "token": world.token,
            "server_url": "https://github.com",
            "api_url": world.api_url,
            "actor": "someone",
        },
        "inputs": payload.get("inputs", {}) if event_name == "workflow_dispatch" else {},
        "vars": {},
        "secrets": {"GITHUB_TOKEN": world.token, **world.secrets},
    }


class _Simulator:
    def __init__(
        self,
        world: World,
        event_name: str,
        payload: dict[str, Any],
        outcome: dict[str, str],
        cancel_after: str | None,
        gpu: GpuRunner | None = None,
        approvals: dict[str, bool | None] | None = None,
        run_id: int = 4242,
        workflow_file: str = "run-sweep.yml",
    ) -> None:
        self.world = world
        self.workflow_file = workflow_file
        self.event_name = event_name
        self.outcome = outcome
        self.cancel_after = cancel_after
        self.gpu = gpu
        self.approvals = approvals or {}
        self.run_id = run_id
        self.cancelled = False
        self.run = Run()
        self.jobs_started = 0
        self.home = Path(tempfile.mkdtemp(prefix="run-", dir=world.tmp))
        self.event_path = self.home / "event.json"
        self.event_path.write_text(json.dumps(payload))
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=world.workspace,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.ctx = _context(world, event_name, payload, head, run_id, workflow_file)
        venv = str(INFX.parent)
        self.system_path = os.pathsep.join(
            [str(_gh_cli(self.home)), *(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                        if p and p != venv)]
        )  # fmt: skip

    # --- workflows and jobs ---------------------------------------------------------------

    def workflow(self, workflow: dict[str, Any], inputs: dict[str, Any] | None, prefix: str):
        results: dict[str, str] = {}
        outputs: dict[str, dict[str, str]] = {}
        for job_id, job in workflow["jobs"].items():
            name = prefix + job_id
            needs = _as_list(job.get("needs"))
            ancestors = self._ancestors(workflow, job_id)
            status = Status(
                success=all(results[a] == "success" for a in ancestors),
                failure=any(results[a] == "failure" for a in ancestors),
                cancelled=self.cancelled,
            )
            ctx = {
                **self.ctx,
                "needs": {n: {"result": results[n], "outputs": outputs.get(n, {})} for n in needs},
            }
            if inputs is not None:
                ctx["inputs"] = inputs
            if any(results[a] == "waiting" for a in ancestors):
                results[job_id] = self.run.jobs[name] = "waiting"  # never started
                continue
            if not condition(job.get("if"), ctx, status):
                results[job_id] = self.run.jobs[name] = "skipped"
                continue
            environment = job.get("environment")
            if isinstance(environment, dict):  # its url may name steps: read after the job
                environment = environment.get("name")
            environment = render(environment, ctx)
            if environment:
                approved = self.approvals.get(str(environment))
                if approved is None:
                    results[job_id] = self.run.jobs[name] = "waiting"
                    continue
                if approved is False:
                    results[job_id] = self.run.jobs[name] = "failure"  # deployment rejected
                    continue
            if name in self.outcome:
                results[job_id] = self.run.jobs[name] = self.outcome[name]
                continue
            entries = self._matrix(job, ctx, name)
            if entries is None:
                results[job_id] = self.run.jobs[name] = "failure"
                continue
            result = "success"
            job_outputs: dict[str, str] = {}
            for index, (matrix, strategy) in enumerate(entries):
                entry_name = name if len(entries) == 1 and not matrix else f"{name}[{index}]"
                entry_ctx = {**ctx, "matrix": matrix, "strategy": strategy}
                if result != "success" and strategy["fail-fast"] is True:
                    self._cancel(workflow, job, entry_ctx, entry_name)
                    continue
                if "uses" in job:
                    entry_result = self._call(job, entry_ctx, entry_name)
                else:
                    entry_result, job_outputs = self._job(workflow, job, entry_ctx, entry_name)
                if entry_result == "waiting" or result == "waiting":
                    result = "waiting"
                elif entry_result != "success":
                    result = "failure"
            results[job_id] = self.run.jobs[name] = result
            outputs[job_id] = self.run.outputs[name] = job_outputs
            self.cancelled = self.cancelled or name == self.cancel_after
        return results

    @staticmethod
    def _ancestors(workflow: dict[str, Any], job_id: str) -> set[str]:
        found: set[str] = set()
        todo = _as_list(workflow["jobs"][job_id].get("needs"))
        while todo:
            need = todo.pop()
            if need not in found:
                found.add(need)
                todo.extend(_as_list(workflow["jobs"][need].get("needs")))
        return found

    def _matrix(self, job: dict[str, Any], ctx: dict[str, Any], name: str):
        strategy = job.get("strategy") or {}
        fail_fast = render(strategy.get("fail-fast", True), ctx)
        if "matrix" not in strategy:
            return [({}, {"fail-fast": fail_fast, "job-index": 0, "job-total": 1})]
        matrix = render(strategy["matrix"], ctx)
        if isinstance(matrix, str):
            matrix = json.loads(matrix)
        assert not {"include", "exclude"} & set(matrix), "include/exclude are not simulated"
        keys = list(matrix)
        if any(not isinstance(matrix[k], list) or not matrix[k] for k in keys):
            self.run.logs[name] = f"matrix vector has no values: {matrix}"
            return None
        combos = list(itertools.product(*(matrix[k] for k in keys)))
        self.run.matrices[name] = len(combos)
        if len(combos) > MATRIX_LIMIT:
            self.run.logs[name] = f"matrix of {len(combos)} jobs exceeds {MATRIX_LIMIT}"
            return None
        return [
            (
                dict(zip(keys, combo, strict=True)),
                {"fail-fast": fail_fast, "job-index": i, "job-total": len(combos)},
            )
            for i, combo in enumerate(combos)
        ]

    def _call(self, job: dict[str, Any], ctx: dict[str, Any], name: str) -> str:
        uses = str(job["uses"])
        assert uses.startswith(("$/", "./")), f"{name}: only local reusable workflows: {uses}"
        path = ROOT / uses[2:]
        called = load_yaml12(path.read_text())
        declared = (called["on"]["workflow_call"] or {}).get("inputs", {})
        given = render(job.get("with", {}), ctx)
        unknown = set(given) - set(declared)
        missing = {k for k, v in declared.items() if v.get("required") and k not in given}
        assert not unknown and not missing, f"{name}: inputs {unknown=} {missing=}"
        inputs = {k: given.get(k, spec.get("default")) for k, spec in declared.items()}
        for input_name, spec in declared.items():
            kind = {"string": str, "number": (int, float), "boolean": bool}[spec["type"]]
            if inputs[input_name] is not None:
                assert isinstance(inputs[input_name], kind), f"{name}: {input_name} is not {kind}"
        caller = render(job.get("name", ""), ctx) or name
        matrix = ctx.get("matrix") or {}
        shown = f"{caller} ({', '.join(str(v) for v in matrix.values())})" if matrix else caller
        saved, self.ctx = self.ctx, {**self.ctx, "_caller": f"{shown} / "}
        try:
            results = self.workflow(called, inputs, f"{name}/")
        finally:
            self.ctx = saved
        if "waiting" in results.values():
            return "waiting"
        return "failure" if "failure" in results.values() else "success"

    def _gpu_job(self, job: dict[str, Any], ctx: dict[str, Any], name: str) -> Dispatch:
        runs_on = render(job["runs-on"], ctx)
        runner = {"temp": "/runner/_temp", "os": "Linux", "name": f"{runs_on}_01"}
        step_ctx = {**ctx, "runner": runner, "steps": {}, "env": {}}
        steps = [
            {
                **step,
                "env": render(step.get("env", {}), step_ctx),
                "with": render(step.get("with", {}), step_ctx),
            }
            for step in job["steps"]
        ]
        title = render(job.get("name", ""), ctx) or name.rsplit("/", 1)[-1]
        caller = ctx.get("_caller", "")
        return Dispatch(name, runs_on, steps, f"{caller}{title}")

    def _cancel(
        self, workflow: dict[str, Any], job: dict[str, Any], ctx: dict[str, Any], name: str
    ):
        """A matrix entry fail-fast cancelled before it started."""
        self.run.jobs[name] = "cancelled"
        if "uses" not in job and render(job["runs-on"], ctx) not in HOSTED:
            dispatch = self._gpu_job(job, ctx, name)
            dispatch.result = "cancelled"
            self.run.cancelled.append(dispatch)

    def _job(self, workflow: dict[str, Any], job: dict[str, Any], ctx: dict[str, Any], name: str):
        runs_on = render(job["runs-on"], ctx)
        if runs_on not in HOSTED:
            dispatch = self._gpu_job(job, ctx, name)
            if self.gpu is not None:
                dispatch.result, uploads = self.gpu(dispatch)
                for artifact, folder in uploads.items():
                    target = self.home / "artifacts" / artifact
                    shutil.copytree(folder, target, dirs_exist_ok=True)
                    self.run.artifacts[artifact] = target
            self.run.dispatches.append(dispatch)
            return dispatch.result, {}
        self.jobs_started += 1
        home = self.home / f"job-{self.jobs_started}"
        workspace = home / "workspace"
        temp = home / "temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        env = {
            **{k: str(v) for k, v in render(workflow.get("env", {}), ctx).items()},
            **{k: str(v) for k, v in render(job.get("env", {}), ctx).items()},
        }
        job_state = _JobState(name, workspace, temp, env, dict(job.get("permissions") or {}))
        before = len(self.world.api_requests or [])
        steps: dict[str, Any] = {}
        failed = False
        for index, step in enumerate(job["steps"]):
            step_ctx = {
                **ctx,
                "steps": steps,
                "env": job_state.env,
                "runner": {"temp": str(temp), "os": "Linux", "name": "GitHub Actions 2"},
            }
            status = Status(success=not failed, failure=failed, cancelled=self.cancelled)
            if not condition(step.get("if"), step_ctx, status):
                outcome = conclusion = "skipped"
                outputs: dict[str, str] = {}
            else:
                ok, outputs = self._step(step, step_ctx, job_state, index)
                outcome = "success" if ok else "failure"
                tolerated = render(step.get("continue-on-error", False), step_ctx) is True
                conclusion = "success" if ok or tolerated else "failure"
                failed = failed or conclusion == "failure"
            if "id" in step:
                steps[step["id"]] = {
                    "outputs": outputs,
                    "outcome": outcome,
                    "conclusion": conclusion,
                }
        self.run.logs[name] = job_state.log
        requests = (self.world.api_requests or [])[before:]
        self.run.writes[name] = [r for r in requests if r[0] != "GET"]
        out_ctx = {**ctx, "steps": steps}
        job_outputs = {k: _as_output(render(v, out_ctx)) for k, v in job.get("outputs", {}).items()}
        return ("failure" if failed else "success"), job_outputs

    # --- steps -----------------------------------------------------------------------------

    def _step(self, step: dict[str, Any], ctx: dict[str, Any], job: _JobState, index: int):
        if "run" in step:
            return self._bash(step, ctx, job, index)
        uses = str(step["uses"])
        given = render(step.get("with", {}), ctx)
        if uses == "./":
            return self._install(given, job)
        action = uses.split("@", 1)[0]
        if action == "actions/checkout":
            assert given.get("persist-credentials") is False, "checkout must not keep the token"
            subprocess.run(
                ["git", "clone", "-q", str(self.world.workspace), str(job.workspace)],
                check=True,
                capture_output=True,
            )
            ref = given.get("ref")
            if ref:
                fetched = subprocess.run(
                    ["git", "fetch", "-q", "origin", f"+{ref}:refs/remotes/checkout"],
                    cwd=job.workspace,
                    capture_output=True,
                    text=True,
                )
                if fetched.returncode != 0:
                    job.log += f"checkout: cannot fetch {ref}: {fetched.stderr}"
                    return False, {}
                subprocess.run(
                    ["git", "checkout", "-q", "--detach", "refs/remotes/checkout"],
                    cwd=job.workspace,
                    check=True,
                    capture_output=True,
                )
            job.checked_out = True
            return True, {}
        if action == "actions/upload-artifact":
            return self._upload(given, job), {}
        if action == "actions/attest-build-provenance":
            return self._attest(given, job), {}
        if action == "actions/download-artifact":
            return self._download(given, job), {}
        return True, {}

    def _install(self, given: dict[str, Any], job: _JobState):
        if not job.checked_out:
            job.log += "uses: ./ before actions/checkout: there is no action.yml to run\n"
            return False, {}
        inputs = load_action()["inputs"]
        assert set(given) <= set(inputs), (
            f"unknown inputs of action.yml: {set(given) - set(inputs)}"
        )
        assert not given.get("command"), "the harness installs infx; run it in a run: step"
        bin_dir = job.temp / "infx-bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "infx").symlink_to(INFX)
        job.path.insert(0, str(bin_dir))
        return True, {}

    def _upload(self, given: dict[str, Any], job: _JobState) -> bool:
        source = job.workspace / str(given["path"])
        target = self.home / "artifacts" / str(given["name"])
        empty = source.is_dir() and not any(p.is_file() for p in source.rglob("*"))
        if not source.exists() or empty:
            if given.get("if-no-files-found", "warn") == "error":
                job.log += f"upload-artifact: no files at {source}\n"
                return False
            return True
        if target.exists():
            if given.get("overwrite") is not True:
                job.log += f"upload-artifact: an artifact named {given['name']} already exists\n"
                return False
            shutil.rmtree(target)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.mkdir(parents=True)
            shutil.copy(source, target / source.name)
        self.run.artifacts[str(given["name"])] = target
        self._register(str(given["name"]), target)
        return True

    def _register(self, name: str, folder: Path) -> None:
        """An artifact is listed by the API as soon as it is uploaded, while the run goes
        on: the fake API takes it for a run it knows (a test-only route)."""
        if self.world.api_url == NO_API:
            return
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    zf.write(path, path.relative_to(folder).as_posix())
        url = f"{self.world.api_url}/repos/{self.world.repository}/_uploads/{self.run_id}/{name}"
        request = urllib.request.Request(url, data=buffer.getvalue(), method="POST")
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=30).close()

    def _attest(self, given: dict[str, Any], job: _JobState) -> bool:
        """actions/attest-build-provenance as GitHub runs it: without `id-token: write` and
        `attestations: write` the job gets no OIDC token and the step fails; otherwise the
        file's digest is signed with a certificate carrying this run's identity (ref,
        commit, event, run) and stored through the attestations API."""
        from tests.github.sigstore import identity

        if (
            job.permissions.get("id-token") != "write"
            or job.permissions.get("attestations") != "write"
        ):
            job.log += "attest-build-provenance: no OIDC token (id-token and attestations: write)\n"
            return False
        source = job.workspace / str(given["subject-path"])
        if not source.is_file() or self.world.api_url == NO_API:
            job.log += f"attest-build-provenance: no subject at {source}\n"
            return False
        github = self.ctx["github"]
        digest = "sha256:" + hashlib.sha256(source.read_bytes()).hexdigest()
        fields = identity(self.world.repository, f".github/workflows/{self.workflow_file}",
                          github["ref"], str(github["sha"]), self.event_name, self.run_id)  # fmt: skip
        bundle = FULCIO.attest(digest, fields, source.name)
        url = f"{self.world.api_url}/repos/{self.world.repository}/attestations"
        body = json.dumps({"bundle": bundle}).encode()
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        urllib.request.urlopen(request, timeout=30).close()
        job.log += f"attest-build-provenance: attested {digest}\n"
        return True

    def _download(self, given: dict[str, Any], job: _JobState) -> bool:
        artifacts = self.run.artifacts
        if "run-id" in given:
            return self._download_run(given, job)
        dest = job.workspace / str(given.get("path") or ".")
        if "name" in given:
            source = artifacts.get(str(given["name"]))
            if source is None:
                job.log += f"download-artifact: no artifact named {given['name']}\n"
                return False
            shutil.copytree(source, dest, dirs_exist_ok=True)
            return True
        for name, source in artifacts.items():
            if fnmatch.fnmatchcase(name, str(given.get("pattern", "*"))):
                shutil.copytree(source, dest / name, dirs_exist_ok=True)
        return True

    def _download_run(self, given: dict[str, Any], job: _JobState) -> bool:
        """Another run's artifacts, as download-artifact fetches them: listed and downloaded
        through the API (a 302 to storage), each unzipped into a folder of its name."""
        if self.world.api_url == NO_API:
            job.log += "download-artifact: another run's artifacts need the fake API\n"
            return False
        base = f"{self.world.api_url}/repos/{self.world.repository}/actions"
        listing = f"{base}/runs/{given['run-id']}/artifacts?per_page=100"
        with urllib.request.urlopen(listing, timeout=30) as answer:
            artifacts = json.loads(answer.read())["artifacts"]
        dest = job.workspace / str(given.get("path") or ".")
        if "name" in given and given["name"] not in {a["name"] for a in artifacts}:
            job.log += f"download-artifact: run {given['run-id']} has no {given['name']}\n"
            return False
        for artifact in artifacts:
            if "name" in given and artifact["name"] != given["name"]:
                continue
            if not fnmatch.fnmatchcase(artifact["name"], str(given.get("pattern", "*"))):
                continue
            try:
                with urllib.request.urlopen(f"{base}/artifacts/{artifact['id']}/zip") as zipped:
                    data = zipped.read()
            except urllib.error.HTTPError as exc:
                job.log += f"download-artifact: {artifact['name']}: {exc.code}\n"
                return False
            target = dest if "name" in given else dest / artifact["name"]
            target.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                zf.extractall(target)
        return True

    def _bash(self, step: dict[str, Any], ctx: dict[str, Any], job: _JobState, index: int):
        files = {
            name: job.temp / f"{name.lower()}-{index}"
            for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")
        }
        for path in files.values():
            path.write_text("")
        script = job.temp / f"step-{index}.sh"
        script.write_text(str(step["run"]))
        github = self.ctx["github"]
        env = {
            **{k: v for k, v in os.environ.items() if k != "PATH"},
            "PATH": os.pathsep.join([*job.path, self.system_path]),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(self.event_path),
            "GITHUB_REPOSITORY": github["repository"],
            "GITHUB_REPOSITORY_OWNER": github["repository_owner"],
            "GITHUB_SHA": str(github["sha"]),
            "GITHUB_REF": github["ref"],
            "GITHUB_REF_NAME": github["ref_name"],
            "GITHUB_RUN_ID": str(github["run_id"]),
            "GITHUB_WORKFLOW_REF": github["workflow_ref"],
            "GITHUB_WORKFLOW_SHA": str(github["workflow_sha"]),
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKSPACE": str(job.workspace),
            "GITHUB_API_URL": self.world.api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_JOB": job.name,
            "RUNNER_TEMP": str(job.temp),
            "RUNNER_OS": "Linux",
            "RUNNER_NAME": "GitHub Actions 2",
            **job.env,
            **{k: _as_output(v) for k, v in render(step.get("env", {}), ctx).items()},
            **{k: str(v) for k, v in files.items()},
        }
        cwd = job.workspace / str(step.get("working-directory", "."))
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        job.log += done.stdout + done.stderr
        self.run.summaries[job.name] = (
            self.run.summaries.get(job.name, "") + files["GITHUB_STEP_SUMMARY"].read_text()
        )
        job.env.update(_env_file(files["GITHUB_ENV"]))
        job.path[:0] = reversed(files["GITHUB_PATH"].read_text().split())
        return done.returncode == 0, _env_file(files["GITHUB_OUTPUT"])


@dataclass
class _JobState:
    name: str
    workspace: Path
    temp: Path
    env: dict[str, str]
    permissions: dict[str, str] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)
    log: str = ""
    checked_out: bool = False


def simulate(
    world: World,
    workflow: str,
    event_name: str,
    payload: dict[str, Any],
    outcome: dict[str, str] | None = None,
    cancel_after: str | None = None,
    artifacts: dict[str, Path] | None = None,
    *,
    gpu: GpuRunner | None = None,
    approvals: dict[str, bool | None] | None = None,
    run_id: int = 4242,
) -> Run:
    """One run of `workflow` for the event. `outcome` forces the result of jobs that would
    run (e.g. {"canary": "failure"}); `cancel_after` cancels the run once that job is done
    (a newer push, or a maintainer pressing Cancel); `artifacts` (name -> folder) are
    uploaded before any job starts, as the GPU jobs that cannot run here would upload them;
    `gpu` plays the GPU runners instead; `approvals` answers environments' required
    reviewers (True, False, None: not yet)."""
    simulator = _Simulator(
        world, event_name, payload, outcome or {}, cancel_after, gpu, approvals, run_id, workflow
    )
    for name, folder in (artifacts or {}).items():
        target = simulator.home / "artifacts" / name
        shutil.copytree(folder, target)
        simulator.run.artifacts[name] = target
    simulator.workflow(load(workflow), None, "")
    return simulator.run


def plan_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Every matrix row of a plan or `canary` output, wherever it sits in it."""
    rows: list[dict[str, Any]] = []
    for name, value in payload.items():
        if name == "changelog_metadata":
            continue
        if isinstance(value, dict):
            rows += plan_rows(value)
        elif isinstance(value, list):
            rows += value
    return rows


def key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def planned(run: Run) -> dict[str, Any]:
    """The plan the run's setup job uploaded."""
    return json.loads((run.artifacts["sweep-plan"] / "sweep.json").read_text())


def pr_payload(
    action: str,
    labels: list[str],
    event_label: str | None = None,
    draft: bool = False,
    fork: bool = False,
    number: int = 17,
    head_sha: str = "0" * 40,
    base_sha: str = "1" * 40,
    state: str = "open",
    sender: str | None = "maintainer",
) -> dict[str, Any]:
    """A pull_request event as GitHub sends it; `sender` did what it says (the world's
    maintainer has write permission, so the sweep trusts them)."""
    payload: dict[str, Any] = {
        "action": action,
        "number": number,
        "repository": {"full_name": "acme/bench"},
        "pull_request": {
            "number": number,
            "state": state,
            "draft": draft,
            "labels": [{"name": label} for label in labels],
            "head": {
                "sha": head_sha,
                "ref": "feature",
                "repo": {"full_name": "someone/bench" if fork else "acme/bench"},
            },
            "base": {"sha": base_sha, "ref": "main", "repo": {"full_name": "acme/bench"}},
        },
    }
    if event_label is not None:
        payload["label"] = {"name": event_label}
    if sender is not None:
        payload["sender"] = {"login": sender}
    return payload


def push_payload(before: str = "a" * 40, after: str = "b" * 40) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": before,
        "after": after,
        "repository": {"full_name": "acme/bench"},
    }


def comment_payload(comment: dict[str, Any], number: int = 7, on_pr: bool = True) -> dict[str, Any]:
    """An issue_comment `created` event for a comment as the API returns it."""
    issue: dict[str, Any] = {"number": number}
    if on_pr:
        issue["pull_request"] = {"url": f"https://api.github.com/repos/acme/bench/pulls/{number}"}
    return {
        "action": "created",
        "issue": issue,
        "comment": comment,
        "repository": {"full_name": "acme/bench"},
    }
