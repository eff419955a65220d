"""Where infx runs: the repository slug and GitHub host, from flags, Actions env or the remote."""

from __future__ import annotations

import os
import re
from pathlib import Path

from infx import git
from infx.changelog.links import DEFAULT_SERVER
from infx.errors import UsageError

_SLUG = re.compile(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+")
_REMOTE = re.compile(r"(?:[:/])([A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$")


def repo_slug(explicit: str | None, cwd: Path | None = None) -> str:
    """OWNER/NAME from --repo, else GITHUB_REPOSITORY, else the origin remote."""
    for candidate in (explicit, os.environ.get("GITHUB_REPOSITORY")):
        if candidate:
            if not _SLUG.fullmatch(candidate):
                raise UsageError(f"repository must look like OWNER/NAME, got {candidate!r}")
            return candidate
    url = git.remote_url("origin", cwd)
    if url:
        match = _REMOTE.search(url)
        if match:
            return match.group(1)
    raise UsageError("cannot tell the repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY")


def server_url() -> str:
    return (os.environ.get("GITHUB_SERVER_URL") or DEFAULT_SERVER).rstrip("/")
