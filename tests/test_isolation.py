"""The suite's own isolation (tests/conftest.py `outside_actions`): a test that forgets to
start the fake GitHub API reaches no GitHub, and nothing a test runs writes into the home
of whoever runs the suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infx.errors import GitHubError
from infx.github.client import GitHub


def test_a_client_without_the_fake_api_reaches_nothing() -> None:
    client = GitHub("acme/bench", retries=0, timeout=5)
    assert client.api_url == "http://127.0.0.1:9"
    with pytest.raises(GitHubError, match="unreachable"):
        client.pull(1)


def test_crash_logs_go_to_the_sessions_own_cache() -> None:
    from infx.crash import log_path

    cache = Path(os.environ["XDG_CACHE_HOME"])
    assert not cache.is_relative_to(Path.home())
    assert log_path().is_relative_to(cache)
