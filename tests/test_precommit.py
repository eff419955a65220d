"""The README's .pre-commit-config.yaml block, run by pre-commit itself in a benchmark
repository: the hook installs from this project and gates a contributor's branch."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from infx import __version__
from tests.conftest import HISTORY, GitRepo, entry

ROOT = Path(__file__).resolve().parents[1]
_BESIDE = Path(sys.executable).with_name("pre-commit")
PRE_COMMIT = str(_BESIDE) if _BESIDE.exists() else shutil.which("pre-commit")


def readme_block() -> str:
    """The README's .pre-commit-config.yaml, verbatim."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(repos:\n.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "the README holds one .pre-commit-config.yaml block"
    return blocks[0]


def test_readme_block_pins_this_release() -> None:
    config = yaml.safe_load(readme_block())
    (hook_repo,) = config["repos"]
    assert hook_repo["rev"] == f"v{__version__}"
    assert [h["id"] for h in hook_repo["hooks"]] == ["infx-changelog-check"]


def _run(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT is not None
    return subprocess.run(
        [PRE_COMMIT, *args], cwd=repo, capture_output=True, text=True, env=env, timeout=900
    )


@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")
def test_pre_commit_runs_the_hook_on_a_branch(repo: GitRepo, tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("the hook installs from this project's git repository")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    # The README's block, pointed at this checkout's HEAD instead of the published tag.
    config = readme_block()
    config = re.sub(r"repo: \S+", f"repo: {ROOT.as_uri()}", config)
    config = re.sub(r"rev: \S+", f"rev: {head}", config)
    repo.commit("hook", **{".pre-commit-config.yaml": config})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "VIRTUAL"))}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")

    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    repo.git("add", "perf-changelog.yaml")
    ok = _run(repo.path, "run", "--files", "perf-changelog.yaml", env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "perf-changelog gate" in ok.stdout and "Passed" in ok.stdout

    repo.write("perf-changelog.yaml", HISTORY.replace("Bring up", "Brought up") + "\n" + entry())
    repo.git("add", "perf-changelog.yaml")
    bad = _run(repo.path, "run", "--files", "perf-changelog.yaml", env=env)
    assert bad.returncode == 1
    assert "Failed" in bad.stdout and "history" in bad.stdout
    assert "on main" not in bad.stdout
