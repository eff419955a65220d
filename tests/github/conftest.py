from __future__ import annotations

import pytest

from tests.github.fake_api import FakeGitHub


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, tmp_path):
    with FakeGitHub() as fake:
        fake.state.workdir = tmp_path / "api-git"
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GITHUB_TOKEN", "test-token")
        monkeypatch.setenv("GITHUB_REPOSITORY", "acme/bench")
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
        monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
        yield fake
