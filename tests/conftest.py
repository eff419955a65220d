"""Shared fixtures: real git repositories in temporary folders, driven through the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from infx.cli import cli
from tests.github.fake_api import FakeGitHub

ROOT = Path(__file__).resolve().parents[1]
# The folder that holds InferenceX's real data (inferencex/: its perf-changelog.yaml,
# configs/ and golden plans/), as CONTRIBUTING.md says; the tests that read it skip without it.
TEST_DATA_VARIABLE = "INFX_TEST_DATA"


def shared_folder(environ: Mapping[str, str], clone: Path = ROOT) -> Path:
    """Where the shared test data lies: the folder INFX_TEST_DATA names (laid out like
    `../shared`), else `../shared` beside the clone."""
    named = environ.get(TEST_DATA_VARIABLE, "")
    return Path(named).expanduser().resolve() if named else clone.parent / "shared"


SHARED = shared_folder(os.environ) / "inferencex"
REPO = "acme/bench"
LINK = f"https://github.com/{REPO}/pull/"

MASTER = """\
llama-fp8-mi355x-vllm:
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 32 }

llama-fp8-mi355x-sglang:
  image: lmsysorg/sglang:v0.5.5-rocm700-mi35x
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, conc-start: 4, conc-end: 64 }
"""

HISTORY = f"""\
- config-keys:
    - llama-fp8-mi355x-vllm
  description:
    - "Bring up Llama 70B FP8 on MI355X with vLLM"
  pr-link: {LINK}1

- config-keys:
    - llama-fp8-*
  description:
    - "Raise max concurrency for every Llama FP8 config"
  pr-link: {LINK}2
"""


def load_yaml12(text: str | bytes) -> Any:
    """YAML 1.2 plain data (ruamel's C loader), as GitHub reads workflows (`on:` is a key)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=False)
    yaml.allow_duplicate_keys = False
    return yaml.load(text)


def entry(
    keys: list[str] | None = None,
    link: str = "XXX",
    description: str = "Tune flags",
    extra: str = "",
) -> str:
    keys = keys or ["llama-fp8-mi355x-vllm"]
    lines = [
        "- config-keys:",
        *(f"    - {k}" for k in keys),
        "  description:",
        f'    - "{description}"',
        f"  pr-link: {link}",
    ]
    return "\n".join(lines) + "\n" + extra


@dataclass
class GitRepo:
    path: Path

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, name: str, data: str | bytes) -> Path:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            data = data.encode("utf-8")
        target.write_bytes(data)
        return target

    def read(self, name: str = "perf-changelog.yaml") -> bytes:
        return (self.path / name).read_bytes()

    def commit(self, message: str = "change", **files: str | bytes) -> str:
        for name, data in files.items():
            self.write(name.replace("__", "/"), data)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def infx(self, *args: str, env: dict[str, str] | None = None) -> Result:
        old = Path.cwd()
        os.chdir(self.path)
        try:
            return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)


def make_repo(path: Path, history: str = HISTORY, master: str = MASTER) -> GitRepo:
    repo = GitRepo(path)
    path.mkdir(parents=True, exist_ok=True)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.email", "ci@example.invalid")
    repo.git("config", "user.name", "CI")
    repo.git("config", "commit.gpgsign", "false")
    repo.git("remote", "add", "origin", f"git@github.com:{REPO}.git")
    repo.commit("base", **{"perf-changelog.yaml": history, "configs__amd-master.yaml": master})
    repo.git("tag", "base")
    return repo


def real_repo(path: Path, data: Path = SHARED) -> GitRepo:
    """A repository laid out as InferenceX is: `data`'s perf-changelog.yaml and everything
    under its configs/ (runners.yaml and deprecated configs too), committed on main and
    tagged `base`. Skips the test when ../shared is absent and `data` is its default."""
    if not (data / "configs").is_dir():
        pytest.skip(f"{data} is not present (set {TEST_DATA_VARIABLE}: see CONTRIBUTING.md)")
    repo = make_repo(path, history="", master="")
    shutil.rmtree(repo.path / "configs")
    shutil.copytree(data / "configs", repo.path / "configs")
    shutil.copy(data / "perf-changelog.yaml", repo.path / "perf-changelog.yaml")
    repo.commit("InferenceX as it is")
    repo.git("tag", "-f", "base")
    return repo


# An address where nothing answers: a test that forgets the fake API fails at once.
NO_API = "http://127.0.0.1:9"


@pytest.fixture(autouse=True, scope="session")
def outside_actions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite runs outside GitHub Actions even when it runs inside it (ci.yml): no test
    or fixture, session-wide ones included, sees or writes the runner's files and
    variables; what a test needs from that environment, it sets itself (monkeypatch).
    The API address is pinned where nothing answers (unset, PyGithub would go to the real
    GitHub), and crash logs go to the session's own cache, not the user's."""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("GITHUB_", "RUNNER_", "INFX_")) or name == "GH_TOKEN":
                patch.delenv(name)
        patch.setenv("GITHUB_API_URL", NO_API)
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo")


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The URL of a throw-away PostgreSQL server for the whole session (see
    tests/history/postgres.py); skips only where none can run: not root and no binaries."""
    from tests.history.postgres import server, unavailable

    reason = unavailable()
    if reason:
        pytest.skip(reason)
    with server() as url:
        yield url


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    """A fake GitHub API of this test's own, which PyGithub reaches through GITHUB_API_URL."""
    with FakeGitHub() as fake:
        fake.state.workdir = tmp_path / "api-git"
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GITHUB_TOKEN", "test-token")
        monkeypatch.setenv("GITHUB_REPOSITORY", "acme/bench")
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
        monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
        yield fake
