"""What merges, and what each source run ran, read from git.

What merges is the manifest of the sweep that pushing the merge to main runs. A push to
main is planned between the commit before it and the merge commit, with the options a push
has (a full sweep, no modifiers); before a PR merges, the merge is the tree `git
merge-tree` makes of main and the PR head, with perf-changelog.yaml resolved as every infx
resolver does it (main's bytes, then the PR's entries).

What a source run ran is derived the same way: the commit GitHub says it ran (`head_sha`),
merged into that same main, planned with the options its own record names, with the
workflow file its run names among the inputs (and every template and local action that
workflow calls, and infx's code where it lives in the repository). Nothing is checked out
and nothing from the PR runs: files are read from git objects. A commit the checkout lacks
is fetched by id, else through the PR's head ref.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from infx import git
from infx.changelog.merge import merge as merge_changelog
from infx.errors import InfxError, UsageError
from infx.github.client import Run
from infx.matrix.inputs import code_of, manifest_of
from infx.matrix.manifest import SweepOptions
from infx.matrix.options import PlanOptions
from infx.matrix.sources import plan_change
from infx.rerun.plan import manifest_options
from infx.reuse.commands import ReuseCommand
from infx.reuse.gate import GateEvent, Local
from infx.reuse.measured import Derived, Merging
from infx.reuse.source import PullFacts, Request, newest_request, pick_run
from infx.settings import SWEEP_WORKFLOW_PATH, Settings
from infx.sweep.labels import PUSH


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def workflow_path(workflow: str) -> str:
    """The sweep workflow's path from its file name (`--workflow`), or the path itself."""
    return workflow if "/" in workflow else f".github/workflows/{workflow}"


def merging_between(
    root: Path, base: str, head: str, settings: Settings, workflow: str = SWEEP_WORKFLOW_PATH
) -> Merging:
    """The manifest of what a push from `base` to `head` (a commit or a tree) sweeps with
    the sweep `workflow` and the code that would run it, or why it cannot be planned."""
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
        path = workflow_path(workflow)
        manifest = manifest_of(planned, PUSH.sweep_options("push"), settings.job_files, path)
        code = code_of(root, git.resolve(head, root), path)
        return Merging(manifest, code=code, main=base)
    except InfxError as exc:
        return Merging(None, _first_line(exc), main=base)


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


def merging_of_pull(
    root: Path, main: str, head: str, settings: Settings, workflow: str = SWEEP_WORKFLOW_PATH
) -> Merging:
    """What merging the PR head `head` into `main` now would sweep."""
    try:
        tree = merge_preview(root, main, head, settings.changelog)
    except InfxError as exc:
        return Merging(None, _first_line(exc), main=main)
    return merging_between(root, main, tree, settings, workflow)


def main_ref(root: Path, remote: str, branch: str) -> str:
    """Main as a checkout with full history knows it: the remote's branch, else the local."""
    for ref in (f"refs/remotes/{remote}/{branch}", f"refs/heads/{branch}"):
        if git.has_ref(ref, root):
            return ref
    raise UsageError(f"this checkout has neither {remote}/{branch} nor {branch}")


def merging_of_head(
    root: Path, settings: Settings, remote: str, head_sha: str, workflow: str = SWEEP_WORKFLOW_PATH
) -> Merging:
    """What merging the PR head `head_sha` into `remote`'s main now would sweep, in a checkout
    of main with full history (which holds the PR's branch)."""
    if not git.has_ref(f"{head_sha}^{{commit}}", root):
        return Merging(None, f"the PR head {head_sha[:12]} is not in this checkout")
    main = main_ref(root, remote, settings.main_branch)
    return merging_of_pull(root, main, head_sha, settings, workflow)


def local(
    root: Path, settings: Settings, asked: GateEvent, workflow: str = SWEEP_WORKFLOW_PATH
) -> Local:
    """What the checkout says about the asking run: the pushed commit's first parent and
    what merges (the push itself, or the PR's merge commit GitHub checked out)."""
    if asked.name == "push":
        parent = (
            git.rev_parse(f"{asked.commit_sha}^1", root)
            if git.has_ref(f"{asked.commit_sha}^1", root)
            else None
        )
        merging = merging_between(root, asked.before or "", asked.commit_sha, settings, workflow)
        return Local(parent, merging)
    if not git.has_ref("HEAD^2", root) or git.rev_parse("HEAD^2", root) != asked.commit_sha:
        merging = Merging(None, f"the checkout is not the merge commit of {asked.commit_sha[:12]}")
        return Local(None, merging)
    return Local(None, merging_between(root, "HEAD^1", "HEAD", settings, workflow))


# --- what each source run ran ------------------------------------------------------------


def have_commit(root: Path, sha: str, remote: str, pr: int | None) -> str | None:
    """Why the commit `sha` is not in the checkout (None: it is, or was fetched now): by id
    first, then through the PR's head ref."""
    if git.has_ref(f"{sha}^{{commit}}", root):
        return None
    refs = [[sha]] + ([[f"+refs/pull/{pr}/head:refs/remotes/{remote}/pr/{pr}"]] if pr else [])
    for wanted in refs:
        if git.fetch_quietly(remote, wanted, root) and git.has_ref(f"{sha}^{{commit}}", root):
            return None
    return f"its commit {sha[:12]} is not in this checkout and could not be fetched"


def on_main(root: Path, sha: str, main: str) -> bool:
    """Whether commit `sha` is one of main's (an ancestor of `main`, or main itself)."""
    if not git.has_ref(f"{sha}^{{commit}}", root):
        return False
    return git.merge_base(sha, main, root) == git.rev_parse(sha, root)


def vouched_merge(
    root: Path, run: Run, checkout: Mapping[str, Any], main: str, remote: str, pr: int | None
) -> tuple[str, str] | str:
    """The merge commit a pull_request run checked out, as its attestation names it, and
    that commit's first parent (the base it merged with); or why it cannot stand for a
    merge of the run's head into main: it must merge exactly the run's head into a commit
    of main."""
    merge = str(checkout.get("sha") or "")
    why = have_commit(root, merge, remote, pr) if merge else "no merge commit is named"
    if why:
        return f"its merge commit: {why}"
    parents = git.git(["rev-list", "--parents", "-n", "1", merge], root).split()[1:]
    if len(parents) != 2 or parents[1] != run.head_sha:
        return f"its merge commit {merge[:12]} does not merge its head {run.head_sha[:12]}"
    if not on_main(root, parents[0], main):
        return (
            f"it merged its head with {parents[0][:12]}, which is not a commit of main: it ran "
            "for another base"
        )
    return merge, parents[0]


def derive(
    root: Path,
    settings: Settings,
    main: str,
    run: Run,
    options: SweepOptions | None,
    *,
    remote: str = "origin",
    pr: int | None = None,
    checkout: Mapping[str, Any] | None = None,
) -> Derived:
    """What git says `run` ran. A pull_request run whose attestation names its merge commit
    (`checkout`, from the issuer's receipt): that commit, planned from its first parent.
    Otherwise its commit merged into `main` (what merges, as far as git can say). A
    dispatched rerun also ran the workflow files of its own commit (`own_code`). With
    `options` (the run's own record of its labels), the manifest too."""
    why = have_commit(root, run.head_sha, remote, pr)
    if why:
        return Derived(None, {}, why)
    workflow = run.path.split("@", 1)[0] or SWEEP_WORKFLOW_PATH
    try:
        base, head = main, merge_preview(root, main, run.head_sha, settings.changelog)
        if run.event == "pull_request" and (checkout or {}).get("by") == "attestation":
            vouched = vouched_merge(root, run, checkout or {}, main, remote, pr)
            if isinstance(vouched, str):
                return Derived(None, {}, vouched)
            head, base = vouched
        code = code_of(root, head, workflow)
        own = code_of(root, run.head_sha, workflow) if run.event == "workflow_dispatch" else None
        if options is None:
            return Derived(None, code, own_code=own)
        plan = PlanOptions(options.trim_conc, options.all_evals, options.evals_only)
        planned = plan_change(
            root, base, head, settings.changelog, settings.master_configs, settings.runners, plan
        )
        manifest = manifest_of(planned, options, settings.job_files, workflow)
        return Derived(manifest, code, own_code=own)
    except InfxError as exc:
        return Derived(None, {}, _first_line(exc))


def source_runs(facts: PullFacts, workflow: str, repo: str) -> tuple[Run | None, tuple[Run, ...]]:
    """The run a PR's standing request names (or finds) and the earlier runs of its lineage."""
    source = facts.source
    if source is None:
        return None, ()
    # The merge helper reads a PR nobody asked on yet as if a bare request stood.
    request = newest_request(facts.comments, facts.permissions) or Request(None, ReuseCommand(None))
    chosen, _ = pick_run(request, source, workflow, facts.pull.number, repo)
    if chosen is None:
        return None, ()
    members = source.lineage.members if source.lineage is not None else ()
    return chosen.run, members


def with_derived(
    root: Path,
    settings: Settings,
    merging: Merging,
    pulls: Iterable[PullFacts],
    workflow: str,
    repo: str,
    remote: str = "origin",
) -> Merging:
    """`merging` with what git says each PR's source run (and its lineage) ran, derived
    against the same main commit."""
    if merging.manifest is None or not merging.main:
        return merging
    derived = dict(merging.derived)
    for facts in pulls:
        chosen, members = source_runs(facts, workflow, repo)
        if chosen is None or facts.source is None:
            continue
        record = facts.source.manifest
        number = facts.pull.number
        options = manifest_options(record) if record is not None else None
        for run, wanted in ((chosen, options), *((m, None) for m in members)):
            if run.id in derived:
                continue
            issued = facts.source.issued.get(run.id)
            checkout = (issued.receipt or {}).get("checkout") if issued is not None else None
            derived[run.id] = derive(
                root, settings, merging.main, run, wanted, remote=remote, pr=number,
                checkout=checkout,
            )  # fmt: skip
    return replace(merging, derived=derived)
