"""Where git meets the changelog resolver: conflicted index entries and merge-driver files.

The decision is `infx.changelog.merge.resolve`; this module only reads git's
sides, writes the answer atomically, and, when there is no automatic answer,
leaves a conflict git and people recognise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.edits import fix_first
from infx.changelog.links import LinkPolicy
from infx.changelog.merge import MainSide, conflict_text, main_by_content, resolve, takes_back
from infx.errors import ChangelogError, UsageError
from infx.yamlio import atomic_write


def _labels(main_side: MainSide) -> tuple[str, str]:
    return (
        ("ours (main)", "theirs (pull request)")
        if main_side == "ours"
        else (
            "ours (pull request)",
            "theirs (main)",
        )
    )


Sides = tuple[bytes, bytes, bytes]


def find_main_side(
    root: Path,
    main_branch: str,
    theirs: Iterable[str] = (),
    sides: Sides | None = None,
    path: str = CHANGELOG_FILE,
) -> MainSide:
    """Which side of the merge in progress is main's, so main's entries come first whichever
    side git calls "ours".

    First what the sides (ancestor, ours, theirs) hold, against `path` at main's tips (the
    main branch, upstream's and origin's): `main_by_content`. When that does not tell, git's
    state: ours in a rebase (commits are replayed onto main); when nothing is being merged
    in (`theirs` empty: a stash popped, a cherry-pick, a revert, `git am`: a change applied
    onto HEAD), ours, but theirs when it takes back the entries the ancestor appended last
    (a revert: its side drops them, and only main's side is kept as it is); in a merge,
    theirs when `theirs` (the commits merged in) holds a main tip (a fork's own `main`
    merging upstream's too), ours when HEAD is the main branch or a detached HEAD at a
    main tip (a CI checkout of main), else theirs (a branch merging main in, the usual
    case)."""
    from infx.context import REMOTES

    refs = [f"refs/heads/{main_branch}", *(f"refs/remotes/{r}/{main_branch}" for r in REMOTES)]
    tips = set(git.commits(refs, root).values())
    if sides is not None:
        files = git.read_many([(tip, path) for tip in sorted(tips)], root)
        mains = [text for text in files.values() if text]
        found = main_by_content(*sides, mains)
        if found is not None:
            return found
    if git.in_progress("rebase-merge", root) or git.in_progress("rebase-apply", root):
        return "ours"
    merged_in = set(theirs)
    if not merged_in:
        return "theirs" if sides is not None and takes_back(sides[0], sides[2]) else "ours"
    if tips & merged_in:
        return "theirs"
    branch = git.current_branch(root)
    if branch == f"refs/heads/{main_branch}":
        return "ours"
    if branch is None and git.commits(["HEAD"], root).get("HEAD") in tips:
        return "ours"
    return "theirs"


def merging_in(environ: Mapping[str, str]) -> list[str]:
    """The commits `git merge` is merging in, as it tells a merge driver (GITHEAD_<id>)."""
    return [name.removeprefix("GITHEAD_") for name in environ if name.startswith("GITHEAD_")]


def resolve_index(root: Path, path: str, main_side: MainSide, policy: LinkPolicy | None) -> bytes:
    """Resolve a conflicted `path` from its index stages, write it and stage it.

    Raises ChangelogError (file left as git wrote it, markers included) when the
    conflict has no automatic answer.
    """
    stages = git.index_stages(path, root)
    if stages is None:
        raise UsageError(f"{path} has no merge conflict to resolve")
    if stages.ours is None or stages.theirs is None:
        raise ChangelogError(f"{path} was deleted on one side of the merge; resolve it by hand")
    merged = resolve(stages.ancestor or b"", stages.ours, stages.theirs, main_side, policy)
    atomic_write(root / path, merged)
    git.add(path, root)
    return merged


def resolve_stopped(
    root: Path, path: str, main_side: MainSide, policy: LinkPolicy | None, operation: str | None
) -> bytes:
    """`resolve_index` for a person at a stopped merge (`operation`): a refusal that
    `infx changelog fix` would cure on the branch says how to get there from here."""
    try:
        return resolve_index(root, path, main_side, policy)
    except ChangelogError as exc:
        stages = git.index_stages(path, root)
        pr_side = (
            None if stages is None else stages.ours if main_side == "theirs" else stages.theirs
        )
        advice = None
        if stages is not None and pr_side is not None:
            advice = fix_first(stages.ancestor or b"", pr_side, operation)
        if advice is None:
            raise
        raise ChangelogError(f"{exc}; {advice}") from None


def run_driver(
    ancestor: Path,
    current: Path,
    other: Path,
    main_side: MainSide,
    policy: LinkPolicy | None,
    marker_size: int = 7,
    operation: Callable[[], str | None] = lambda: None,
) -> str | None:
    """The merge-driver step: write the resolution to `current` and return None, or write a
    conflict holding both sides (git's diff3 markers) and return why there is no resolution,
    with the way out of the stopped git operation (`operation` names it) when
    `infx changelog fix` would cure it."""
    ours, theirs, old = current.read_bytes(), other.read_bytes(), ancestor.read_bytes()
    try:
        merged = resolve(old, ours, theirs, main_side, policy)
    except ChangelogError as exc:
        labels = _labels(main_side)
        text, conflicts = git.merge_file(
            current, ancestor, other, (labels[0], "common ancestor", labels[1]), marker_size
        )
        if not conflicts:
            text = conflict_text(ours, theirs, labels, marker_size)
        atomic_write(current, text)
        advice = fix_first(old, ours if main_side == "theirs" else theirs, operation())
        return f"{exc}; {advice}" if advice else str(exc)
    atomic_write(current, merged)
    return None
