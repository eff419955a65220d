"""What merges, read from git: the manifest of the sweep that pushing the merge to main runs.

A push to main is planned between the commit before it and the merge commit, with the
options a push has (a full sweep, no modifiers); before a PR merges, the merge is the tree
`git merge-tree` makes of main and the PR head, with perf-changelog.yaml resolved as every
infx resolver does it (main's bytes, then the PR's entries). Nothing is checked out and
nothing from the PR runs: files are read from git objects.
"""

from __future__ import annotations

from pathlib import Path

from infx import git
from infx.changelog.merge import merge as merge_changelog
from infx.errors import InfxError, UsageError
from infx.matrix.sources import manifest_of, plan_change
from infx.reuse.gate import GateEvent, Local
from infx.reuse.measured import Merging
from infx.settings import Settings
from infx.sweep.labels import PUSH


def merging_between(root: Path, base: str, head: str, settings: Settings) -> Merging:
    """The manifest of what a push from `base` to `head` (a commit or a tree) sweeps, or
    why it cannot be planned."""
    try:
        planned = plan_change(
            root,
            base,
            head,
            settings.changelog,
            settings.master_configs,
            settings.runners,
            PUSH.plan,
        )
        return Merging(manifest_of(planned, PUSH.sweep_options("push"), settings.job_files))
    except InfxError as exc:
        return Merging(None, str(exc).splitlines()[0])


def merge_preview(root: Path, main: str, head: str, changelog: str) -> str:
    """The tree merging `head` into `main` gives; a conflict anywhere but the changelog, or a
    changelog the resolver refuses, is an error naming it."""
    tree, conflicted = git.merge_tree(main, head, root)
    if not conflicted:
        return tree
    others = [name for name in conflicted if name != changelog]
    if others:
        raise InfxError(f"merging {main} conflicts in {', '.join(others)}")
    ancestor = git.merge_base(main, head, root)
    sides = git.read_many([(ref, changelog) for ref in (ancestor or main, main, head)], root)
    base, ours, theirs = (sides[(ref, changelog)] for ref in (ancestor or main, main, head))
    if ours is None or theirs is None:
        raise InfxError(f"{changelog} is deleted on one side of the merge")
    merged = merge_changelog(base or b"", ours, theirs, None)
    return git.tree_with(tree, changelog, merged, root)


def merging_of_pull(root: Path, main: str, head: str, settings: Settings) -> Merging:
    """What merging the PR head `head` into `main` now would sweep."""
    try:
        tree = merge_preview(root, main, head, settings.changelog)
    except InfxError as exc:
        return Merging(None, str(exc).splitlines()[0])
    return merging_between(root, main, tree, settings)


def main_ref(root: Path, remote: str, branch: str) -> str:
    """Main as a checkout with full history knows it: the remote's branch, else the local."""
    for ref in (f"refs/remotes/{remote}/{branch}", f"refs/heads/{branch}"):
        if git.has_ref(ref, root):
            return ref
    raise UsageError(f"this checkout has neither {remote}/{branch} nor {branch}")


def merging_of_head(root: Path, settings: Settings, remote: str, head_sha: str) -> Merging:
    """What merging the PR head `head_sha` into `remote`'s main now would sweep, in a checkout
    of main with full history (which holds the PR's branch)."""
    if not git.has_ref(f"{head_sha}^{{commit}}", root):
        return Merging(None, f"the PR head {head_sha[:12]} is not in this checkout")
    return merging_of_pull(root, main_ref(root, remote, settings.main_branch), head_sha, settings)


def local(root: Path, settings: Settings, asked: GateEvent) -> Local:
    """What the checkout says about the asking run: the pushed commit's first parent and
    what merges (the push itself, or the PR's merge commit GitHub checked out)."""
    if asked.name == "push":
        parent = (
            git.rev_parse(f"{asked.commit_sha}^1", root)
            if git.has_ref(f"{asked.commit_sha}^1", root)
            else None
        )
        return Local(parent, merging_between(root, asked.before or "", asked.commit_sha, settings))
    if not git.has_ref("HEAD^2", root) or git.rev_parse("HEAD^2", root) != asked.commit_sha:
        merging = Merging(None, f"the checkout is not the merge commit of {asked.commit_sha[:12]}")
        return Local(None, merging)
    return Local(None, merging_between(root, "HEAD^1", "HEAD", settings))
