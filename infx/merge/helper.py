"""The maintainer's merge helper: canonicalize, ask for reuse, wait for checks, merge.

Each step checks before it acts, so the helper is safe to re-run after any failure:
the merge of main is prepared locally and the source run must have measured exactly what
it gives before anything is posted or pushed, an authorized request is never posted twice
(nor a maintainer's pinned run overridden), a push never forces, the sweep workflow's
`infx/reuse` status on the pushed head must say ready, and the merge names the head it
checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.canonicalize import canonicalize
from infx.changelog.conflict import resolve_index
from infx.changelog.links import LinkPolicy
from infx.context import server_url
from infx.errors import ChangelogError, MergeError
from infx.github.client import GitHub, Pull
from infx.merge.rules import (
    BARE_REQUEST,
    MergeOptions,
    checks_state,
    failed_checks,
    preflight,
    request_note,
    reusable,
)
from infx.reuse.edge import Checkout, reuse_status_of
from infx.reuse.facts import pull_facts
from infx.reuse.preview import merging_between
from infx.yamlio import atomic_write


def _prepare(
    root: Path,
    pull: Pull,
    options: MergeOptions,
    base: str,
    policy: LinkPolicy,
    say: Callable[[str], None],
) -> str:
    """Merge main (`base`) into the PR head in a throw-away worktree, canonicalize, commit;
    return the new head (a local commit: nothing is pushed here)."""
    remote = options.remote
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
        return new_head


def wait_for_checks(
    gh: GitHub,
    sha: str,
    options: MergeOptions,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Every check passed, the changelog gate among them, and infx/reuse says ready."""
    deadline = time.monotonic() + options.timeout
    while True:
        checks = gh.check_runs(sha)
        failed = failed_checks(checks, sha)
        if failed:
            raise MergeError(failed)
        state = checks_state(checks, reuse_status_of(gh, sha), sha)
        if state.passed:
            say(state.passed)
            return
        if time.monotonic() >= deadline:
            waiting = ", ".join(state.waiting)
            raise MergeError(f"timed out waiting for checks on {sha[:12]} ({waiting})")
        sleep(options.poll)


def merge_pr(
    checkout: Checkout, number: int, options: MergeOptions, say: Callable[[str], None] = print
) -> None:
    """Merge PR `number` as a maintainer would by hand, each step checking before it acts."""
    gh, root, settings = checkout.gh, checkout.root, checkout.settings
    scope = checkout.scope(options.workflow)
    say(f"PR #{number}: preflight")
    pull = gh.decide(lambda: checkout.reader.pull(number))
    problem = preflight(pull, gh.slug, scope.main_branch)
    if problem:
        raise MergeError(problem)
    policy = LinkPolicy(repo=gh.slug, server=server_url(settings), pr=number)
    new_head = _prepare(root, pull, options, scope.main_branch, policy, say)
    main = f"{options.remote}/{scope.main_branch}"
    merging = merging_between(root, main, new_head, settings, options.workflow)
    facts = gh.decide(lambda: pull_facts(checkout.reader, pull, options.workflow, BARE_REQUEST))
    merging = checkout.derived(merging, (facts,), options.workflow, options.remote)
    existing, found = reusable(pull, facts, merging, scope)
    if not found.ok or found.run is None:
        raise MergeError(f"no reusable sweep: {found.reason}")
    say(f"source run {found.run.id} ({found.run.html_url}) measured exactly what merges")
    if existing is not None:
        say(request_note(existing))
    elif options.dry_run:
        say("would post /reuse-sweep-run")
    else:
        gh.post_comment(number, "/reuse-sweep-run")
        say("posted /reuse-sweep-run")
    if options.dry_run:
        say(f"dry run: would push {new_head[:12]}, wait for checks and {options.method}-merge")
        return
    git.push(options.remote, f"{new_head}:refs/heads/{pull.head_ref}", root)
    say(f"pushed {new_head[:12]} to {pull.head_ref}")
    confirmed = gh.pull(number)
    if confirmed.head_sha != new_head:
        raise MergeError(
            f"PR head is {confirmed.head_sha[:12]}, not the pushed {new_head[:12]}; re-run"
        )
    wait_for_checks(gh, new_head, options, say)
    gh.merge(number, options.method, new_head)
    say(f"merged PR #{number} ({options.method})")
