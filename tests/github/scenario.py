"""A merged PR with a green full sweep and an authorized /reuse-sweep-run, ready to tweak."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from infx.cli import cli
from tests.conftest import HISTORY, LINK, GitRepo, entry, make_repo
from tests.github.fake_api import FakeGitHub, State

OTHER_SHA = "a2" * 20  # a commit that is not the PR's
MERGE_SHA = "c" * 40
RUN = 1039
PR_ENTRY = entry(description="PR change")
MAIN_ENTRY = entry(keys=["llama-fp8-mi355x-sglang"], link=f"{LINK}30", description="Main change")


def changelog(*entries: str, link: str | None = None) -> str:
    """The shared history plus `entries`; `link` replaces the last entry's placeholder."""
    last = entries[-1].replace("pr-link: XXX", f"pr-link: {link}") if link else entries[-1]
    return "\n".join([HISTORY, *entries[:-1], last])


class PrBranch:
    """A bare origin with `main` and the PR branch `feature`, grown commit by commit.

    The API fake answers compare, contents and blob requests from `origin`; a working
    clone is made the first time a test commits."""

    def __init__(self, origin: Path) -> None:
        self.origin = origin
        self._work: GitRepo | None = None

    @property
    def work(self) -> GitRepo:
        if self._work is None:
            path = self.origin.with_name("work")
            subprocess.run(["git", "clone", "-q", str(self.origin), str(path)], check=True)
            self._work = GitRepo(path)
            self._work.git("config", "user.email", "ci@example.invalid")
            self._work.git("config", "user.name", "CI")
            self._work.git("config", "commit.gpgsign", "false")
            self._work.git("checkout", "-q", "feature")
        return self._work

    def commit(self, message: str = "change", **files: str | bytes) -> str:
        sha = self.work.commit(message, **files)
        self.work.git("push", "-q", "origin", "feature")
        return sha

    def on_main(self, message: str = "main change", **files: str | bytes) -> str:
        self.work.git("checkout", "-q", "main")
        sha = self.work.commit(message, **files)
        self.work.git("push", "-q", "origin", "main")
        self.work.git("checkout", "-q", "feature")
        return sha

    def merge_main(self, **resolved: str | bytes) -> str:
        """Merge main into the PR branch; `resolved` gives the content of conflicted files."""
        self.work.git("merge", "-q", "--no-edit", "main", check=False)
        for name, data in resolved.items():
            self.work.write(name.replace("__", "/"), data)
            self.work.git("add", name.replace("__", "/"))
        self.work.git("commit", "-q", "--no-edit", check=False)
        self.work.git("push", "-q", "origin", "feature")
        return self.work.git("rev-parse", "HEAD")


@dataclass
class Green:
    """The PR of green_pr: its branch, the commit adding its entry and the link fix."""

    branch: PrBranch
    sha0: str
    sha1: str


@functools.cache
def seeded_origin(tmp: Path) -> tuple[Path, PrBranch]:
    """A bare origin.git holding the base history with a `feature` branch, and that branch."""
    seed = make_repo(tmp / "seed")
    seed.git("branch", "feature")
    origin = tmp / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed.path), str(origin)], check=True)
    return origin, PrBranch(origin)


def _green_origin() -> tuple[Path, str, str]:
    """green_pr's repository, built once per test session and copied for each test."""
    tmp = Path(tempfile.mkdtemp(prefix="infx-green-pr-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    origin, branch = seeded_origin(tmp)
    sha0 = branch.commit("entry", **{"perf-changelog.yaml": changelog(PR_ENTRY)})
    sha1 = branch.commit("link", **{"perf-changelog.yaml": changelog(PR_ENTRY, link=f"{LINK}7")})
    return origin, sha0, sha1


def green_pr(state: State, *, comments: int = 3, runs: int = 3) -> Green:
    """PR #7, merged as MERGE_SHA: sha0 appends its entry, sha1 canonicalizes the link. Runs
    before RUN ran sha0, RUN ran sha1; a maintainer asked for reuse after them."""
    template, sha0, sha1 = _green_origin()
    workdir = state.workdir or Path(tempfile.mkdtemp(dir=template.parent))
    origin = workdir / "origin.git"
    shutil.copytree(template, origin, ignore=shutil.ignore_patterns("hooks"))  # fewer files
    branch = PrBranch(origin)
    state.git_remote = str(branch.origin)
    state.add_pull(
        7, head_sha=sha1, labels=["full-sweep-fail-fast"], merged=True, commits=[sha0, sha1]
    )
    state.commit_pulls[MERGE_SHA] = [7]
    state.label(7, "labeled", "full-sweep-fail-fast", 10)
    for i in range(comments):
        state.add_comment(7, f"reader{i % 4}", f"looks good {i}", 20 + i * 0.1, "CONTRIBUTOR")
    for i in range(runs - 1):
        state.add_run(RUN - runs + 1 + i, head_sha=sha0, minute=30 + i)
    state.add_run(RUN, head_sha=sha1, minute=60)
    state.permissions.update({"maintainer": "write", "owner": "admin", "reader0": "read"})
    state.add_comment(7, "maintainer", "Green sweep.\n/reuse-sweep-run\n", 100)
    return Green(branch, sha0, sha1)


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
    "MAIN_ENTRY",
    "MERGE_SHA",
    "OTHER_SHA",
    "PR_ENTRY",
    "RUN",
    "FakeGitHub",
    "Green",
    "PrBranch",
    "changelog",
    "comment_event",
    "gate",
    "green_pr",
    "invoke",
]
