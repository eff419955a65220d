"""A fresh benchmark repository adopts infx by following only the README's "Adopt it in
your repository" section: settings, hook, workflow lines, merge driver."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import SHARED, GitRepo, make_repo

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENTRY = '\n- config-keys:\n    - {key}\n  description:\n    - "{text}"\n  pr-link: {link}\n'


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Adopt it in your repository")
    return text[start : text.index("\n## ", start + 3)]


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", section(), flags=re.S)


def tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or pytest.skip(f"no {name}"))


@pytest.fixture
def adopter(tmp_path: Path) -> tuple[GitRepo, str]:
    """A repository with InferenceX's data (or this project's own, without ../shared)."""
    data = SHARED if (SHARED / "configs").is_dir() else ROOT
    repo = make_repo(tmp_path / "bench", history=(data / "perf-changelog.yaml").read_text())
    shutil.rmtree(repo.path / "configs")
    shutil.copytree(data / "configs", repo.path / "configs")
    repo.git("remote", "set-url", "origin", "git@github.com:alice/InferenceX.git")
    key = "dsv4-fp4-mi355x-vllm" if data == SHARED else "dsv41flash-fp4-mi355x-vllm-agentic-dspark"
    return repo, key


def test_the_readme_adoption_works_end_to_end(adopter: tuple[GitRepo, str]) -> None:
    repo, key = adopter
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}

    # 1. settings
    (settings,) = blocks("toml")
    repository = re.search(r'repository = "(.+)"', settings).group(1)
    repo.commit("adopt infx", **{"infx.toml": settings})

    # 2. the hook: a complete config pre-commit accepts (test_precommit.py runs it)
    (hook,) = [b for b in blocks("yaml") if b.startswith("repos:")]
    repo.write(".pre-commit-config.yaml", hook)
    check = subprocess.run(
        [tool("pre-commit"), "validate-config", ".pre-commit-config.yaml"],
        cwd=repo.path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr

    # 3. the gate workflow, pinned by a commit as the README says, passes actionlint
    (workflow,) = [b for b in blocks("yaml") if b.startswith("name: changelog-gate")]
    pinned = workflow.replace("TAG_COMMIT", "0123456789abcdef0123456789abcdef01234567")
    repo.write(".github/workflows/changelog-gate.yml", pinned)
    lint = subprocess.run(
        [tool("actionlint"), ".github/workflows/changelog-gate.yml"],
        cwd=repo.path, capture_output=True, text=True,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout + lint.stderr
    step = yaml.safe_load(pinned)["jobs"]["check-changelog"]["steps"][1]
    assert step["with"]["command"] == "changelog check"

    # 4. the merge driver, then a branch and main that both append
    (driver,) = [b for b in blocks("sh") if "merge-driver" in b]
    subprocess.run(["bash", "-e", "-c", driver], cwd=repo.path, check=True, env=env)
    repo.commit("merge driver", **{".gitattributes": (repo.path / ".gitattributes").read_text()})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "aiter")
    history = repo.read().decode()
    ours = ENTRY.format(key=key, text="Switch the MoE backend to aiter", link="XXX")
    repo.write("perf-changelog.yaml", history + ours)

    gate = repo.infx("changelog", "check")
    assert gate.exit_code == 0, gate.output
    repo.commit("aiter")
    repo.git("checkout", "-q", "main")
    theirs = ENTRY.format(
        key=key, text="Bump the image", link=f"https://github.com/{repository}/pull/7"
    )
    repo.commit("main moves", **{"perf-changelog.yaml": history + theirs})
    repo.git("checkout", "-q", "aiter")
    merged = subprocess.run(
        ["git", "merge", "--no-edit", "main"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert repo.read().decode() == history + theirs + ours

    # The fork clone's links point upstream; the plan runs with every default.
    done = repo.infx("changelog", "canonicalize", "--base", "main", "--pr", "3058")
    assert done.exit_code == 0, done.output
    assert f"pr-link: https://github.com/{repository}/pull/3058\n".encode() in repo.read()
    planned = repo.infx("sweep", "plan", "--base", "main", "--format", "summary")
    assert planned.exit_code == 0, planned.output
    assert f"| {key} |" in planned.stdout
