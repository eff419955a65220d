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
from dataclasses import dataclass
from pathlib import Path

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.canonicalize import canonicalize
from infx.changelog.conflict import resolve_index
from infx.changelog.links import LinkPolicy
from infx.errors import ChangelogError, MergeError
from infx.github.client import GitHub, Pull
from infx.reuse.commands import ReuseCommand
from infx.reuse.facts import Reader, pull_facts
from infx.reuse.measured import STATUS_CONTEXT, Merging, Verdict, verdict
from infx.reuse.preview import merging_between
from infx.reuse.source import Request, newest_request
from infx.settings import Settings
from infx.sweep.labels import sweep_label_problem
from infx.yamlio import atomic_write

GATE_CHECK = "check-changelog"
OK_CONCLUSIONS = ("success", "skipped", "neutral")


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


def preflight(pull: Pull, repo: str, main_branch: str = "main") -> str | None:
    """Why the helper must not touch this PR (None: it may): closed, from a fork, not into
    main, or labelled for anything but one reusable full sweep."""
    if pull.state != "open":
        return f"PR #{pull.number} is {pull.state}"
    if pull.head_repo != repo:
        return f"PR #{pull.number} comes from a fork; its branch cannot be updated here"
    if pull.base_ref != main_branch:
        return f"PR #{pull.number} merges into {pull.base_ref}, not {main_branch}"
    return sweep_label_problem(pull.number, pull.labels, reuse=True)


def source_run(
    gh: GitHub, reader: Reader, pull: Pull, merging: Merging, options: MergeOptions
) -> tuple[Request | None, Verdict]:
    """Read any authorized request and its source run; decide whether it measured what
    merges. Without a request the helper's own bare /reuse-sweep-run stands in."""
    bare = Request(comment=None, command=ReuseCommand(None))
    facts = gh.decide(lambda: pull_facts(reader, pull, options.workflow, bare))
    if facts.source is None:
        raise MergeError(f"PR #{pull.number}'s runs were not read")
    existing = newest_request(facts.comments, facts.permissions)
    found = verdict(
        pull,
        existing or bare,
        facts.source,
        merging,
        repo=gh.slug,
        workflow=options.workflow,
        main_branch=options.base_branch,
        require_merged=False,
    )
    return existing, found


def _prepare(
    root: Path, pull: Pull, options: MergeOptions, policy: LinkPolicy, say: Callable[[str], None]
) -> str:
    """Merge main into the PR head in a throw-away worktree, canonicalize, commit; return the
    new head (a local commit: nothing is pushed here)."""
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
        return new_head


def _reuse_ready(gh: GitHub, sha: str) -> bool:
    """Whether the sweep workflow's infx/reuse status on `sha` says ready (False: not yet);
    a status that says not ready stops the helper with its reason."""
    status = next((s for s in gh.statuses(sha) if s.context == STATUS_CONTEXT), None)
    if status is None or status.state == "pending":
        return False
    if status.state != "success":
        raise MergeError(f"{STATUS_CONTEXT} on {sha[:12]}: {status.description}")
    return True


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
        failed = [
            name
            for name, status, conclusion in checks
            if status == "completed" and conclusion not in OK_CONCLUSIONS
        ]
        if failed:
            raise MergeError(f"checks failed on {sha[:12]}: {', '.join(sorted(failed))}")
        gate = [c for c in checks if c[0] == GATE_CHECK]
        pending = [name for name, status, _ in checks if status != "completed"]
        ready = _reuse_ready(gh, sha)
        if gate and not pending and ready:
            say(f"all {len(checks)} checks passed and {STATUS_CONTEXT} says ready on {sha[:12]}")
            return
        if time.monotonic() >= deadline:
            waiting = pending or ([] if gate else [GATE_CHECK]) or [STATUS_CONTEXT]
            raise MergeError(f"timed out waiting for checks on {sha[:12]} ({', '.join(waiting)})")
        sleep(options.poll)


def merge_pr(
    gh: GitHub,
    root: Path,
    number: int,
    options: MergeOptions,
    settings: Settings,
    say: Callable[[str], None] = print,
) -> None:
    from infx.reuse.facts import Roles

    reader = Roles(gh, settings.labels)
    say(f"PR #{number}: preflight")
    pull = gh.decide(lambda: reader.pull(number))
    problem = preflight(pull, gh.slug, options.base_branch)
    if problem:
        raise MergeError(problem)
    policy = LinkPolicy(repo=gh.slug, server=options.server, pr=number)
    new_head = _prepare(root, pull, options, policy, say)
    merging = merging_between(root, f"{options.remote}/{options.base_branch}", new_head, settings)
    existing, found = source_run(gh, reader, pull, merging, options)
    if not found.ok or found.run is None:
        raise MergeError(f"no reusable sweep: {found.reason}")
    say(f"source run {found.run.id} ({found.run.html_url}) measured exactly what merges")
    if existing is not None:
        pinned = existing.command.run_id
        say(
            f"an authorized request exists ({'pinned to run ' + str(pinned) if pinned else 'unpinned'}); "
            "not posting another"
        )
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
