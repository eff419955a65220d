"""A merged PR with a green full sweep and an authorized /reuse-sweep-run, ready to tweak."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from infx.cli import cli
from tests.github.fake_api import FakeGitHub, State

SHA0, SHA1, SHA2 = "a0" * 20, "a1" * 20, "a2" * 20
MERGE_SHA = "c" * 40
RUN = 1039


def green_pr(state: State, *, comments: int = 3, runs: int = 3) -> None:
    state.add_pull(
        7, head_sha=SHA1, labels=["full-sweep-fail-fast"], merged=True, commits=[SHA0, SHA1]
    )
    state.commit_pulls[MERGE_SHA] = [7]
    state.label(7, "labeled", "full-sweep-fail-fast", 10)
    for i in range(comments):
        state.add_comment(7, f"reader{i % 4}", f"looks good {i}", 20 + i * 0.1, "CONTRIBUTOR")
    for i in range(runs - 1):
        state.add_run(RUN - runs + 1 + i, head_sha=SHA0, minute=30 + i)
    state.add_run(RUN, head_sha=SHA1, minute=60)
    state.permissions.update({"maintainer": "write", "owner": "admin", "reader0": "read"})
    state.add_comment(7, "maintainer", "Green sweep.\n/reuse-sweep-run\n", 100)


def gate(event: str = "push", sha: str = MERGE_SHA, **extra: str) -> tuple[Result, dict]:
    args = [
        "reuse",
        "gate",
        "--repo",
        "acme/bench",
        "--commit-sha",
        sha,
        "--event-name",
        event,
        "--ref",
        extra.pop("ref", "refs/heads/main"),
    ]
    for key, value in extra.items():
        args += [f"--{key.replace('_', '-')}", value]
    result = CliRunner().invoke(cli, args)
    outputs = json.loads(result.stdout) if result.exit_code == 0 else {}
    return result, outputs


def comment_event(
    tmp: Path, comment: dict, *, action: str = "created", on_pr: bool = True, number: int = 7
) -> dict[str, str]:
    issue = {"number": number, **({"pull_request": {"url": "x"}} if on_pr else {})}
    payload = {
        "action": action,
        "issue": issue,
        "comment": comment,
        "repository": {"full_name": "acme/bench"},
    }
    path = tmp / "event.json"
    path.write_text(json.dumps(payload))
    return {"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(path)}


def invoke(args: list[str], env: dict[str, str]) -> Result:
    return CliRunner().invoke(cli, args, env=env)


__all__ = [
    "MERGE_SHA",
    "RUN",
    "SHA0",
    "SHA1",
    "SHA2",
    "FakeGitHub",
    "comment_event",
    "gate",
    "green_pr",
    "invoke",
]
