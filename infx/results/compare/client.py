"""The GitHub client of the results commands, made on first use: a command that talks to
no API (a local comparison, an ingest) loads neither PyGithub nor the GitHub edge
(`facts`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from infx.context import repo_slug

if TYPE_CHECKING:
    from infx.github.client import GitHub


def client_of(repo: str | None) -> Callable[[], GitHub]:
    """The API client of --repo, made on first use and kept: a command that needs none
    never asks which repository it is in."""

    @cache
    def client() -> GitHub:
        from infx.github.client import GitHub  # PyGithub: start-up time

        return GitHub(repo_slug(repo))

    return client
