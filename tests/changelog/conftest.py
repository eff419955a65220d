"""A repository laid out as InferenceX is, holding its real history and configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import GitRepo, real_repo

UPSTREAM = "SemiAnalysisAI/InferenceX"
UPSTREAM_LINK = f"https://github.com/{UPSTREAM}/pull/"
# A live config of InferenceX's amd-master.yaml: fixed-seq-len scenarios only.
REAL_KEY = "dsv4-fp4-mi355x-vllm"


def real_entry(key: str = REAL_KEY, link: str = "XXX", extra: str = "") -> str:
    return (
        f'\n- config-keys:\n    - {key}\n  description:\n    - "Switch the MoE backend to aiter"\n'
        f"  pr-link: {link}\n{extra}"
    )


@pytest.fixture
def inferencex(tmp_path: Path) -> GitRepo:
    """A clone of InferenceX as a contributor has it: the real history and configs at
    origin/main, settings naming upstream, and a branch `feature` that left main there."""
    repo = real_repo(tmp_path / "InferenceX")
    repo.git("remote", "set-url", "origin", "https://github.com/alice/InferenceX.git")
    repo.commit("settings", **{"infx.toml": f'repository = "{UPSTREAM}"\n'})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    return repo
