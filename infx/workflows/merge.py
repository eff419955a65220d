"""The maintainer's merge helper: canonicalize, ask for reuse, wait for checks, merge.

Each step checks before it acts, so the helper is safe to re-run after any failure:
an authorized request is never posted twice (nor a maintainer's pinned run
overridden), a push never forces, and the merge names the head it checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.canonicalize import canonicalize
from infx.changelog.conflict import resolve_index
from infx.changelog.links import LinkPolicy
from infx.errors import ChangelogError, InfxError
from infx.github.client import GitHub, Pull
from infx.workflows.commands import ReuseCommand
from infx.workflows.reuse import (
    FULL_SWEEP_LABELS,
    INCOMPATIBLE_LABELS,
    Request,
    newest_request,
    resolve,
)
from infx.yamlio import atomic_write

GATE_CHECK = "check-changelog"
OK_CONCLUSIONS = ("success", "skipped", "neutral")


class MergeError(InfxError):
    exit_code = 1


@dataclass
class MergeOptions:
    method: str = "squash"
    dry_run: bool = False
    remote: str = "origin"
    base_branch: str = "main"
    workflow: str = "run-sweep.yml"
    timeout: float = 6 * 3600
    poll: float = 30
    server: str = "https://github.com"


def preflight(gh: GitHub, number: int) -> Pull:
    pull = gh.pull(number)
    if pull.state != "open":
        raise MergeError(f"PR #{number} is {pull.state}")
    if pull.head_repo != gh.slug:
        raise MergeError(f"PR #{number} comes from a fork; its branch cannot be updated here")
    full = [label for label in pull.labels if label in FULL_SWEEP_LABELS]
    if len(full) != 1:
        raise MergeError(f"PR #{number} needs exactly one full-sweep label, has {full or 'none'}")
    bad = [label for label in pull.labels if label in INCOMPATIBLE_LABELS]
    if bad:
        raise MergeError(f"PR #{number} has {bad[0]}, whose sweeps cannot be reused")
    return pull


def _update_branch(
    root: Path, pull: Pull, options: MergeOptions, policy: LinkPolicy, say: Callable[[str], None]
) -> str:
    """Merge main into the PR head in a throw-away worktree, canonicalize, commit; return the new sha."""
    remote, base = options.remote, options.base_branch
    git.fetch(remote, [base, pull.head_ref], root)
    head = git.rev_parse(f"{remote}/{pull.head_ref}", root)
    if head != pull.head_sha:
        raise MergeError(
            f"{remote}/{pull.head_ref} is at {head[:12]} but the PR head is {pull.head_sha[:12]}; "
            "fetch again or wait for GitHub to catch up"
        )
    with git.worktree(root, head) as work:
        say(f"merging {remote}/{base} into {pull.head_ref}")
        if not git.merge(f"{remote}/{base}", work):
            conflicted = git.conflicted_paths(work)
            if conflicted != [CHANGELOG_FILE]:
                raise MergeError(
                    f"merging {base} conflicts in {', '.join(conflicted)}; "
                    "only perf-changelog.yaml can be resolved automatically"
                )
            try:
                resolve_index(work, CHANGELOG_FILE, "theirs", policy)
            except ChangelogError as exc:
                raise MergeError(str(exc)) from None
            git.commit(work)
            say("resolved the perf-changelog.yaml conflict (main's bytes, then this PR's entries)")
        base_bytes = git.read_file(f"{remote}/{base}", CHANGELOG_FILE, root)
        current = git.read_at(None, CHANGELOG_FILE, work)
        if current is None:
            raise MergeError(f"{CHANGELOG_FILE} is missing after merging {base}")
        try:
            new, rewrites, _ = canonicalize(base_bytes, current, policy)
        except ChangelogError as exc:
            raise MergeError(str(exc)) from None
        if rewrites:
            atomic_write(work / CHANGELOG_FILE, new)
            git.commit(
                work, f"Canonicalize perf-changelog pr-link for #{pull.number}", all_tracked=True
            )
            say(f"canonicalized {len(rewrites)} pr-link(s)")
        new_head = git.rev_parse("HEAD", work)
        if new_head == head:
            new_head = git.commit(
                work, f"Refresh checks before merging #{pull.number}", allow_empty=True
            )
            say("nothing to change; made an empty commit so the checks run on a fresh synchronize")
        if not options.dry_run:
            git.push(remote, f"HEAD:refs/heads/{pull.head_ref}", work)
            say(f"pushed {new_head[:12]} to {pull.head_ref}")
        return new_head


def wait_for_checks(
    gh: GitHub,
    sha: str,
    options: MergeOptions,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    deadline = time.monotonic() + options.timeout
    while True:
        checks = gh.check_runs(sha)
        failed = [
            name
            for name, status, conclusion in checks
            if status == "completed" and conclusion not in OK_CONCLUSIONS
        ]
        if failed:
            raise MergeError(f"checks failed on {sha[:12]}: {', '.join(sorted(failed))}")
        gate = [c for c in checks if c[0] == GATE_CHECK]
        pending = [name for name, status, _ in checks if status != "completed"]
        if gate and not pending:
            say(f"all {len(checks)} checks passed on {sha[:12]}")
            return
        if time.monotonic() >= deadline:
            raise MergeError(
                f"timed out waiting for checks on {sha[:12]} ({', '.join(pending) or GATE_CHECK})"
            )
        sleep(options.poll)


def merge_pr(
    gh: GitHub, root: Path, number: int, options: MergeOptions, say: Callable[[str], None] = print
) -> None:
    say(f"PR #{number}: preflight")
    pull = preflight(gh, number)
    existing = newest_request(gh, gh.comments(number))
    request = existing or Request(comment=None, command=ReuseCommand(None))
    verdict = resolve(gh, pull, request, options.workflow, require_merged=False)
    if not verdict.ok:
        raise MergeError(f"no reusable sweep: {verdict.reason}")
    say(f"source run {verdict.run.id} ({verdict.run.html_url})")
    if existing is None:
        if options.dry_run:
            say("would post /reuse-sweep-run")
        else:
            gh.post_comment(number, "/reuse-sweep-run")
            say("posted /reuse-sweep-run")
    else:
        pinned = existing.command.run_id
        say(
            f"an authorized request exists ({'pinned to run ' + str(pinned) if pinned else 'unpinned'}); "
            "not posting another"
        )
    policy = LinkPolicy(repo=gh.slug, server=options.server, pr=number)
    new_head = _update_branch(root, pull, options, policy, say)
    if options.dry_run:
        say(f"dry run: would push {new_head[:12]}, wait for checks and {options.method}-merge")
        return
    confirmed = gh.pull(number)
    if confirmed.head_sha != new_head:
        raise MergeError(
            f"PR head is {confirmed.head_sha[:12]}, not the pushed {new_head[:12]}; re-run"
        )
    wait_for_checks(gh, new_head, options, say)
    gh.merge(number, options.method, new_head)
    say(f"merged PR #{number} ({options.method})")
