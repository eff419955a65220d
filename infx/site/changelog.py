"""Read from git the changelog entries each step's commit range added, with the master
configs their keys name at the range's end: what `explain` needs. One `git cat-file
--batch` reads the changelog at every commit; the entries added between two commits are
the planner's own (`infx.changelog.landed.added_entries`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from infx import git
from infx.changelog.check import resolve_keys
from infx.changelog.landed import added_entries
from infx.errors import ChangelogError, ConfigError, GitError, UsageError
from infx.matrix.load import MasterConfigs
from infx.matrix.sources import load_masters
from infx.settings import load as load_settings
from infx.site.model import ChangelogEntry, Master, Range

_HEX = re.compile(r"[0-9a-f]{7,64}")


def _texts(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return (str(value),) if value is not None else ()


def _master(key: str, config: Any) -> Master | None:
    if not isinstance(config, dict):
        return None
    return Master(
        key,
        str(config.get("model-prefix", "")),
        str(config.get("runner", "")),
        str(config.get("framework", "")),
        str(config.get("precision", "")),
    )


def _entry(data: dict[str, Any], masters: MasterConfigs | None) -> ChangelogEntry:
    patterns = tuple(k for k in data.get("config-keys") or [] if isinstance(k, str))
    named: list[Master] = []
    if masters is not None:
        keys = masters.keys()
        for pattern in patterns:
            for key in resolve_keys(pattern, keys):
                try:
                    found = _master(key, masters.config(key))
                except ConfigError:
                    continue
                if found is not None and found not in named:
                    named.append(found)
    link = data.get("pr-link")
    return ChangelogEntry(
        str(link) if link is not None else None,
        _texts(data.get("description")),
        patterns,
        tuple(str(s) for s in data.get("scenario-type") or []),
        tuple(named),
    )


class _Repository:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.settings = load_settings(root)
        self._masters: dict[str, MasterConfigs | None] = {}

    def masters(self, sha: str) -> MasterConfigs | None:
        if sha not in self._masters:
            try:
                self._masters[sha] = load_masters(self.root, sha, self.settings.master_configs)
            except (UsageError, ConfigError, GitError):
                self._masters[sha] = None
        return self._masters[sha]


def read_ranges(
    repo_dir: Path, pairs: Iterable[tuple[str, str]]
) -> tuple[dict[tuple[str, str], Range], list[str]]:
    """The entries each (base, head) commit range added, and notes on what could not be read
    (a folder that is no repository, commits it lacks). The site publishes the notes: they
    name `--repo-dir`, never its path on the build machine."""
    wanted = sorted(set(pairs))
    if not wanted:
        return {}, []
    try:
        root = git.root(repo_dir)
    except GitError:
        note = "--repo-dir is not a git repository: steps are not explained"
        return {p: Range(p[0], p[1], None, note) for p in wanted}, [note]
    repo = _Repository(root)
    shas = sorted({sha for pair in wanted for sha in pair})
    hexes = [sha for sha in shas if _HEX.fullmatch(sha)]
    known = set(git.commits(hexes, root))
    path = repo.settings.changelog
    texts = git.read_many([(sha, path) for sha in sorted(known)], root)
    found: dict[tuple[str, str], Range] = {}
    lacking = sorted(set(shas) - known)
    for base, head in wanted:
        gone = [sha for sha in (base, head) if sha not in known]
        if gone:
            note = f"commit {gone[0][:12]} is not in --repo-dir"
            found[(base, head)] = Range(base, head, None, note)
            continue
        try:
            landed = added_entries(texts[(base, path)], texts[(head, path)])
        except ChangelogError as exc:
            note = f"{path} between {base[:12]} and {head[:12]}: {str(exc).splitlines()[0]}"
            found[(base, head)] = Range(base, head, None, note)
            continue
        # The master configs at a commit are read only where entries landed (most runs add
        # none; the page lists what landed with each of the newest runs).
        masters = repo.masters(head) if landed.entries else None
        entries = tuple(_entry(e.data, masters) for e in landed.entries)
        found[(base, head)] = Range(base, head, entries)
    notes = []
    if lacking:
        notes.append(
            f"{len(lacking)} main run commit(s) are not in --repo-dir (fetch its history, e.g. "
            "`git fetch --unshallow`): steps in those ranges are not explained"
        )
    return found, notes
