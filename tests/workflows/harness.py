"""Simulate a GitHub Actions run of our workflow files: triggers, `if:` gating, outputs.

Everything is read from the YAML files; expressions are evaluated by
infx.workflows.expressions, and `run:` steps that call infx run the real CLI.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from infx.cli import cli
from infx.workflows.expressions import condition, render
from infx.yamlio import strict_loader

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
DEFAULT_PR_TYPES = ("opened", "synchronize", "reopened")


def load(name: str) -> dict[str, Any]:
    return strict_loader().load((WORKFLOWS / name).read_text())


def triggered(
    workflow: dict[str, Any], event_name: str, payload: dict[str, Any], changed: list[str]
) -> bool:
    on = workflow["on"]
    if event_name not in on:
        return False
    spec = on[event_name] or {}
    if event_name == "pull_request" and payload["action"] not in spec.get(
        "types", DEFAULT_PR_TYPES
    ):
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


def context(
    event_name: str, payload: dict[str, Any], repository: str = "acme/bench"
) -> dict[str, Any]:
    return {
        "github": {
            "event_name": event_name,
            "event": payload,
            "repository": repository,
            "sha": payload.get("after") or "f00d" * 10,
            "run_id": 4242,
            "action": payload.get("action"),
        }
    }


@dataclass
class Run:
    jobs: dict[str, str] = field(default_factory=dict)  # job -> success | failure | skipped
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def ran(self, job: str) -> bool:
        return self.jobs.get(job) == "success"


def _infx(args: list[str], env: dict[str, str], tmp: Path) -> tuple[int, dict[str, str], str]:
    out_file = tmp / f"out-{len(list(tmp.iterdir()))}"
    out_file.write_text("")
    result = CliRunner().invoke(cli, args, env={**env, "GITHUB_OUTPUT": str(out_file)})
    values: dict[str, str] = {}
    lines = out_file.read_text().splitlines()
    i = 0
    while i < len(lines):
        key, _, delimiter = lines[i].partition("<<")
        body = []
        i += 1
        while lines[i] != delimiter:
            body.append(lines[i])
            i += 1
        values[key] = "\n".join(body)
        i += 1
    return result.exit_code, values, result.output


def simulate(
    workflow: dict[str, Any],
    event_name: str,
    payload: dict[str, Any],
    tmp: Path,
    plan: dict[str, Any],
    outcome: dict[str, str] | None = None,
    reuse: dict[str, str] | None = None,
) -> Run:
    """Run the jobs in file order. `setup` steps that call `infx sweep mode` run the real
    command on the event; the plan step's outputs come from `plan` through the real
    `infx sweep canary` / `infx sweep outputs` as the step script does. `outcome` forces
    the result of jobs that run (e.g. {"canary": "failure"}); `reuse` is what the
    `infx reuse gate` step answers (it needs the GitHub API; tests/github covers it)."""
    ctx = context(event_name, payload)
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(payload))
    env = {
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": ctx["github"]["repository"],
    }
    run = Run()
    for name, job in workflow["jobs"].items():
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else list(needs)
        needs_ctx = {n: {"result": run.jobs[n], "outputs": run.outputs.get(n, {})} for n in needs}
        status = "success" if all(run.jobs[n] == "success" for n in needs) else "failure"
        job_ctx = {**ctx, "needs": needs_ctx}
        if not condition(job.get("if"), job_ctx, status):
            run.jobs[name] = "skipped"
            continue
        if "steps" not in job or name in (outcome or {}):
            run.jobs[name] = (outcome or {}).get(name, "success")
            continue
        steps: dict[str, dict[str, Any]] = {}
        result = "success"
        for step in job["steps"]:
            step_ctx = {**job_ctx, "steps": steps}
            if not condition(step.get("if"), step_ctx):
                continue
            script = step.get("run", "")
            outputs: dict[str, str] = {}
            if "infx sweep mode" in script:
                code, outputs, text = _infx(["sweep", "mode"], env, tmp)
                if code != 0:
                    run.errors.append(text.strip())
                    result = "failure"
                    break
            elif "infx reuse gate" in script:
                outputs = dict(reuse or {"reuse-enabled": "false", "skip-pr-sweep": "false"})
            elif "infx sweep plan" in script:
                step_env = {k: render(str(v), step_ctx) for k, v in step.get("env", {}).items()}
                plan_file = tmp / "plan.json"
                plan_file.write_text(json.dumps(plan))
                if step_env.get("CANARY") == "true":
                    canary = CliRunner().invoke(
                        cli, ["sweep", "canary"], input=plan_file.read_text()
                    )
                    plan_file.write_text(canary.stdout)
                code, outputs, text = _infx(["sweep", "outputs", str(plan_file)], env, tmp)
                assert code == 0, text
            if "id" in step:
                steps[step["id"]] = {"outputs": outputs}
        run.jobs[name] = result
        if result == "success":
            out_ctx = {**job_ctx, "steps": steps}
            run.outputs[name] = {
                k: render(str(v), out_ctx) for k, v in job.get("outputs", {}).items()
            }
    return run


def pr_payload(
    action: str,
    labels: list[str],
    event_label: str | None = None,
    draft: bool = False,
    fork: bool = False,
    number: int = 17,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "action": action,
        "number": number,
        "repository": {"full_name": "acme/bench"},
        "pull_request": {
            "number": number,
            "draft": draft,
            "labels": [{"name": label} for label in labels],
            "head": {"repo": {"full_name": "someone/bench" if fork else "acme/bench"}},
        },
    }
    if event_label is not None:
        payload["label"] = {"name": event_label}
    return payload


def push_payload() -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": "a" * 40,
        "after": "b" * 40,
        "repository": {"full_name": "acme/bench"},
    }
