"""A benchmark repository with a pull request that appends a changelog entry, and a world
(checkout, fake GitHub API, scratch folder) for simulated workflow runs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from infx.sweep.labels import SWEEP_LABELS
from tests.actions.harness import World
from tests.conftest import entry, make_repo
from tests.github.fake_api import FakeGitHub, State


@dataclass(frozen=True)
class SweepRepo:
    """`path` is checked out at `merge`, the PR merge commit whose first parent is `base`."""

    path: Path
    base: str
    head: str
    merge: str


@pytest.fixture(scope="session")
def sweep_repo(tmp_path_factory: pytest.TempPathFactory) -> SweepRepo:
    repo = make_repo(tmp_path_factory.mktemp("sweep") / "repo")
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    history = repo.read().decode()
    head = repo.commit(
        "Tune every Llama FP8 config",
        **{"perf-changelog.yaml": history + "\n" + entry(["llama-fp8-*"])},
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


@pytest.fixture(scope="session")
def api_server() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


@pytest.fixture
def api(api_server: FakeGitHub) -> FakeGitHub:
    """The session's fake API server with an empty state of its own for each test."""
    api_server.state.__dict__.update(State().__dict__)
    return api_server


@pytest.fixture
def world(sweep_repo: SweepRepo, api: FakeGitHub, tmp_path: Path) -> World:
    api.state.add_pull(17, head_sha=sweep_repo.head, labels=[], commits=[sweep_repo.head])
    api.state.trusted_labels(17, SWEEP_LABELS)  # a maintainer set whatever labels a test gives
    return World(sweep_repo.path, tmp_path, api.url, api.state.requests)
