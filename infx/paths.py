"""Paths inside a repository, as text: the one answer to "does this path leave it?".

Globs from the settings and the command line, archive member names and symbolic link
targets are all read as POSIX paths from the repository root (or the archive's). Each
caller asks this one question and keeps its own extra rule (backslashes, the empty glob).
No file is read: a path is judged by its spelling alone, so it is judged the same in the
working tree, at a commit and in an archive.
"""

from __future__ import annotations


def outside_repository(path: str) -> bool:
    """Whether `path`, read from the repository root, is absolute or goes through `..`.

    Any `..` component counts, even one that would come back inside (`a/../b`): a glob
    cannot be normalized before it is matched, and a name that needs normalizing is not
    one a repository writes. A caller that resolves a path (a link's target) normalizes
    it first, so only a leading `..` is left to find."""
    return path.startswith("/") or ".." in path.split("/")
