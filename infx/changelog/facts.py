"""The changelog commands' edge: what they read from git, the working tree and the settings,
handed to the pure rules (`gate`, `edits`, `merge`) as values.

Nothing here decides whether a change passes; it finds the file, the sides of a merge in
progress, where pr-links point and which commits a branch made, and says so in values.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.gate import BranchCommit, GateFacts, MergeFiles
from infx.changelog.links import LinkPolicy, Links
from infx.errors import UsageError
from infx.formats import layout_twin
from infx.settings import SETTINGS_FILE
from infx.settings import load as load_settings

if TYPE_CHECKING:
    from infx.changelog.conflict import Sides
    from infx.changelog.merge import MainSide


def _refuse_kind(path: Path, shown: str) -> None:
    """A usage error naming what `path` is when it exists and is no regular file."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise UsageError(f"{shown} is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise UsageError(f"{shown} is not a regular file")


def read_file(path: Path, shown: str) -> bytes:
    """A regular file's bytes; a usage error naming `shown` when it is missing, a directory or
    something else (a device, a pipe: never read)."""
    _refuse_kind(path, shown)
    if not path.is_file():
        raise UsageError(f"no such file: {shown}")
    return path.read_bytes()


def target(root: Path, path: str, *, in_work_tree: bool = True) -> str:
    """`--file` as a path from the repository root. In the working tree, a directory or a
    device is named as such; then a file outside the repository is refused: the gate reads
    it at git commits too, where it has no history, so all of it would read as appended."""
    given = Path(path)
    full = given if given.is_absolute() else root / given
    if in_work_tree:
        _refuse_kind(full, path)
    real = Path(os.path.realpath(full.parent)) / full.name
    try:
        return real.relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        raise UsageError(
            f"--file {path} is outside the repository at {root}: the changelog is read at "
            "git commits, so it must be a file of the repository"
        ) from None


def working_file(root: Path, path: str, shown: str) -> bytes:
    """The changelog in the working tree (`path` from `target`)."""
    return read_file(root / path, shown)


def at_base(root: Path, base: str, path: str) -> bytes | None:
    """The changelog at a ref (None: no such file there)."""
    return git.read_at(git.resolve(base, root), path, root)


def sides(root: Path, path: str, base: str) -> tuple[str, bytes | None, bytes]:
    """`--file` from the root, the changelog at `base`, and in the working tree (required)."""
    found = target(root, path)
    return found, at_base(root, base, found), working_file(root, found, path)


def links(
    repo: str | None,
    pr: int | None,
    root: Path,
    branch: bool = False,
    history: bytes | None = None,
) -> Links:
    from infx.context import repository

    where = repository(repo, root, load_settings(root), history=history)
    note = (
        f"infx: note: links point at {where.slug}, taken from {where.origin}; "
        f"set repository in {SETTINGS_FILE} or pass --repo to be sure"
        if where.guessed
        else None
    )
    policy = LinkPolicy(repo=where.slug, server=where.server, pr=pr, branch=branch and pr is None)
    return Links(policy, note)


def branch_links(root: Path, history: bytes | None) -> Links | None:
    """The link rules of a branch when the repository can be told; else None (`fix` still
    names every other problem)."""
    try:
        return links(None, None, root, branch=True, history=history)
    except UsageError:
        return None


def main_side(
    root: Path,
    given: str | None,
    theirs: list[str],
    sides: Sides | None = None,
    path: str = CHANGELOG_FILE,
) -> MainSide:
    """Which side of the merge is main: `--main-side`, else found from the merge's `sides`
    (ancestor, ours, theirs of `path`) and git's state."""
    from infx.changelog.conflict import find_main_side

    if given is not None:
        return "ours" if given == "ours" else "theirs"
    return find_main_side(root, load_settings(root).main_branch, theirs, sides, path)


def stopped_main_side(root: Path, given: str | None, path: str) -> MainSide:
    """Main's side of a stopped merge, rebase, cherry-pick, revert or stash of `path`, read
    from its index stages (ancestor, ours, theirs) and MERGE_HEAD."""
    stages = git.index_stages(path, root)
    sides = None
    if stages is not None and stages.ours is not None and stages.theirs is not None:
        sides = (stages.ancestor or b"", stages.ours, stages.theirs)
    merged_in = list(git.commits(["MERGE_HEAD"], root).values())
    return main_side(root, given, merged_in, sides, path)


def driver_main_side(
    root: Path, given: str | None, files: tuple[Path, Path, Path], path: str | None
) -> MainSide:
    """Main's side for the merge driver: `files` are git's %O %A %B, `path` its %P; the
    commits `git merge` merges in are named in the environment (GITHEAD_<id>)."""
    from infx.changelog.conflict import merging_in

    sides = (files[0].read_bytes(), files[1].read_bytes(), files[2].read_bytes())
    return main_side(root, given, merging_in(os.environ), sides, path or CHANGELOG_FILE)


def merge_stopped_here(file: Path) -> bool:
    """Whether `file` is in a repository where a merge or rebase is stopped (outside any
    repository: no)."""
    from infx.errors import GitError

    try:
        return stopped_operation(file.resolve().parent) is not None
    except GitError:
        return False


def stopped_operation(root: Path) -> str | None:
    """The git operation stopped in this repository (merge, rebase, cherry-pick, revert), whose
    `--abort` gets back to the branch; None when none is."""
    if git.in_progress("rebase-merge", root) or git.in_progress("rebase-apply", root):
        return "rebase"
    for state, name in (
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ):
        if git.in_progress(state, root):
            return name
    return None


@dataclass(frozen=True)
class MergeInProgress:
    """A merge that is not committed yet: main's side, the other side and its name."""

    main: str
    other: str
    name: str


def merge_in_progress(root: Path, path: str = CHANGELOG_FILE) -> MergeInProgress | None:
    """The merge in progress, its sides told apart as the merge driver does for `path`."""
    if not git.in_progress("MERGE_HEAD", root):
        return None
    found = git.commits(["HEAD", "MERGE_HEAD"], root)
    if len(found) != 2:
        return None
    theirs = found["MERGE_HEAD"]
    ancestor = git.merge_base(found["HEAD"], theirs, root)
    sides = None
    if ancestor is not None:
        files = git.read_many([(c, path) for c in (ancestor, found["HEAD"], theirs)], root)
        ours_file, theirs_file = files[(found["HEAD"], path)], files[(theirs, path)]
        if ours_file is not None and theirs_file is not None:
            sides = (files[(ancestor, path)] or b"", ours_file, theirs_file)
    if main_side(root, None, [theirs], sides, path) == "theirs":
        return MergeInProgress(theirs, found["HEAD"], "the branch")
    return MergeInProgress(found["HEAD"], theirs, "the branch merged in")


def merge_files(root: Path, path: str, merging: MergeInProgress) -> MergeFiles | None:
    ancestor = git.merge_base(merging.main, merging.other, root)
    if ancestor is None:
        return None
    wanted = [(ancestor, path), (merging.main, path), (merging.other, path)]
    files = git.read_many(wanted, root)
    named = ((merging.main, "main"), (merging.other, merging.name))
    sides = [(data, who) for side, who in named if (data := files[(side, path)]) is not None]
    return MergeFiles(files[(ancestor, path)] or b"", sides)


def branch_commits(root: Path, base: str, head: str | None, path: str) -> list[BranchCommit]:
    """The commits between `base` and `head` (HEAD when None) that changed `path`, merges
    left out, oldest first. A commit whose parent is not here (a shallow clone) is left out
    too: what it changed cannot be told. A side without `path` reads it in InferenceX's
    other layout (`layout_twin`), so the commit that moved the changelog appended nothing."""
    ends = [git.commits([ref], root).get(ref) for ref in (base, head or "HEAD")]
    if ends[0] is None or ends[1] is None or ends[0] == ends[1]:
        return []
    span = f"{ends[0]}..{ends[1]}"
    twin = layout_twin(path)
    args = ["rev-list", "--reverse", "--no-merges", "--full-history", "--parents", span]
    listing = git.git([*args, "--", path, twin], root)
    pairs = [ids for line in listing.splitlines() if len(ids := line.split()) == 2]
    wanted = [(commit, name) for pair in pairs for commit in pair for name in (path, twin)]
    files = git.read_many(wanted, root)

    def at(commit: str) -> bytes | None:
        found = files[(commit, path)]
        return found if found is not None else files[(commit, twin)]

    return [BranchCommit(c, at(parent), at(c)) for c, parent in pairs]


def gate_facts(
    root: Path,
    paths: tuple[str, str],
    refs: tuple[str, str | None],
    files: tuple[bytes | None, bytes | None],
    policy: LinkPolicy,
    merging: MergeInProgress | None,
) -> GateFacts:
    """The gate's inputs once the changelog (`paths`: its path from the root, and as the
    user wrote it) was read at `refs` (base, head; None: the working tree): a merge's sides
    while one is in progress, else the branch's commits, read when the gate asks."""
    path, shown = paths
    base, head = files
    if base is None and head is None:
        where = f"at {refs[1]}" if refs[1] else "in the working tree"
        raise UsageError(f"no such file: {shown} (neither {where} nor at {refs[0]})")
    if merging is not None:
        return GateFacts(shown, base, head, policy, merge_files(root, path, merging))

    def commits() -> list[BranchCommit]:
        return branch_commits(root, refs[0], refs[1], path)

    return GateFacts(shown, base, head, policy, branch_commits=commits)
