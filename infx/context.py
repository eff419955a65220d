"""Where infx runs: the repository slug and GitHub host.

Two questions with two orders. Which repository do pr-links point at? --repo, else the
settings (`repository` in infx.toml), else GITHUB_REPOSITORY, else a remote of the
configured server (`upstream` first, then `origin`), never silently: a fork clone with
settings links upstream. Which repository does the API talk to? --repo, else
GITHUB_REPOSITORY (inside Actions that is where the runs, comments and artifacts are,
a fork's too), else the settings, else the remotes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from infx import git
from infx.errors import UsageError
from infx.settings import DEFAULT_SERVER, SETTINGS_FILE, Settings

_SLUG = re.compile(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+")
REMOTES = ("upstream", "origin")


@dataclass(frozen=True)
class Repository:
    slug: str
    server: str
    # Where the slug came from, e.g. "--repo", "infx.toml", "the origin remote".
    origin: str

    @property
    def guessed(self) -> bool:
        return self.origin.endswith("remote") or self.origin == FROM_HISTORY


FROM_HISTORY = "the changelog's own pr-links"


def history_slug(history: bytes, server: str) -> str | None:
    """The one OWNER/NAME that all canonical pr-links of `history` name; None when there is
    none, or more than one (a guess between two repositories is no answer)."""
    host = re.escape(server.rstrip("/"))
    found = re.findall(
        rb"^\s*-?\s*pr-link:\s*['\"]?"
        + host.encode()
        + rb"/([A-Za-z0-9-]+/[A-Za-z0-9._-]+)/pull/[1-9]",
        history,
        re.MULTILINE,
    )
    slugs = {slug.decode() for slug in found}
    return slugs.pop() if len(slugs) == 1 else None


def server_url(settings: Settings | None = None) -> str:
    configured = settings.server if settings is not None else None
    return (configured or os.environ.get("GITHUB_SERVER_URL") or DEFAULT_SERVER).rstrip("/")


def slug_from_url(url: str, server: str) -> str | None:
    """OWNER/NAME of a remote URL on `server`'s host (https, ssh or scp-like), else None."""
    host = urlsplit(server).hostname or ""
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):(.+)", url)
    if scp:
        remote_host, path = scp.groups()
    else:
        parts = urlsplit(url)
        remote_host, path = parts.hostname or "", parts.path
    if remote_host.lower() != host.lower():
        return None
    path = path.strip("/").removesuffix(".git")
    return path if _SLUG.fullmatch(path) else None


def repository(
    explicit: str | None,
    root: Path | None,
    settings: Settings,
    *,
    for_api: bool = False,
    history: bytes | None = None,
) -> Repository:
    """The repository links point at (or, `for_api`, the one to query), by the precedence in
    this module's docstring."""
    server = server_url(settings)
    configured = (settings.repository, settings.source or SETTINGS_FILE)
    environment = (os.environ.get("GITHUB_REPOSITORY"), "GITHUB_REPOSITORY")
    candidates = (
        (explicit, "--repo"),
        *((environment, configured) if for_api else (configured, environment)),
    )
    for value, origin in candidates:
        if value:
            if not _SLUG.fullmatch(value):
                raise UsageError(f"{origin}: repository must look like OWNER/NAME, got {value!r}")
            return Repository(value, server, origin)
    for name in REMOTES:
        url = git.remote_url(name, root)
        slug = slug_from_url(url, server) if url else None
        if slug:
            return Repository(slug, server, f"the {name} remote")
    slug = history_slug(history, server) if history and not for_api else None
    if slug:
        return Repository(slug, server, FROM_HISTORY)
    raise UsageError(
        "cannot tell the repository: pass --repo OWNER/NAME, set repository = "
        f'"OWNER/NAME" in {SETTINGS_FILE}, or set GITHUB_REPOSITORY'
    )


def repo_slug(explicit: str | None, cwd: Path | None = None) -> str:
    """The repository the API talks to (settings read from `cwd`)."""
    from infx import settings as settings_module

    root = cwd or Path.cwd()
    return repository(explicit, cwd, settings_module.load(root), for_api=True).slug


def branch_base(root: Path) -> str:
    """Where this branch left main: the merge base of HEAD with upstream's main, else
    origin's, else the local main branch (a clone with no remote); the one default of
    every command that takes --base."""
    from infx.settings import load as load_settings

    main = load_settings(root).main_branch
    for ref in [*(f"{remote}/{main}" for remote in REMOTES), f"refs/heads/{main}"]:
        if git.has_ref(ref, root):
            found = git.merge_base("HEAD", ref, root)
            if found is None:
                raise UsageError(f"HEAD shares no history with {ref}; pass --base")
            return found
    raise UsageError(
        f"no --base given and no {' or '.join(f'{r}/{main}' for r in REMOTES)} or branch "
        f"{main} to compare with: run `git fetch origin {main}` or pass --base REF"
    )


def which() -> str:
    """`infx --version`: the version, the package that answered (its folder) and the
    distribution it was installed as. InferenceX names its own Python package infx too, so
    the folder tells the two apart."""
    from importlib import metadata
    from pathlib import Path

    import infx
    from infx import __version__

    here = Path(infx.__file__).resolve().parent
    lines = [f"infx, version {__version__}", f"package: {here}"]
    try:
        dist = metadata.distribution("infx")
    except metadata.PackageNotFoundError:
        lines.append("distribution: none (not installed; run from a checkout)")
        return "\n".join(lines)
    source = dist.read_text("direct_url.json") or ""
    how = " (editable)" if '"editable": true' in source else ""
    where = Path(str(dist.locate_file(""))).resolve()
    lines.append(f"distribution: infx {dist.version}{how}, installed in {where}")
    if dist.version != __version__:
        lines.append(
            f"infx: warning: the package answering is version {__version__}, not the "
            f"installed distribution's {dist.version}: another folder named infx comes first "
            "on sys.path"
        )
    return "\n".join(lines)
