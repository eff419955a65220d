"""`infx changelog ...`: gate, canonicalize, fix, resolve conflicts, add entries."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from infx import git
from infx.changelog.check import CheckResult
from infx.changelog.check import check as check_bytes
from infx.changelog.links import LinkPolicy
from infx.changelog.model import Entry, Violation
from infx.changelog.report import (
    as_failure,
    as_github,
    as_json,
    as_text,
    location,
    summary_markdown,
)
from infx.cli.options import (
    base_option,
    branch_base,
    changelog_file,
    links_repo_option,
    master_configs,
)
from infx.context import repository
from infx.errors import EXIT_USAGE, ChangelogError, InfxError, UsageError
from infx.github.actions import append_summary
from infx.matrix.load import MasterConfigs
from infx.matrix.sources import load_masters, masters_from, read_change
from infx.settings import SETTINGS_FILE
from infx.settings import load as load_settings

if TYPE_CHECKING:
    from infx.changelog.merge import MainSide

file_option = changelog_file
repo_option = links_repo_option


def _policy(
    repo: str | None,
    pr: int | None,
    root: Path,
    branch: bool = False,
    history: bytes | None = None,
) -> LinkPolicy:
    where = repository(repo, root, load_settings(root), history=history)
    if where.guessed:
        click.echo(
            f"infx: note: links point at {where.slug}, taken from {where.origin}; "
            f"set repository in {SETTINGS_FILE} or pass --repo to be sure",
            err=True,
        )
    return LinkPolicy(repo=where.slug, server=where.server, pr=pr, branch=branch and pr is None)


def _gate(
    base: bytes | None,
    head: bytes | None,
    policy: LinkPolicy | None,
    masters: MasterConfigs | None,
    config_globs: tuple[str, ...],
) -> CheckResult:
    """The gate's verdict with every rule: keys resolve against `masters`, and each appended
    entry must select a benchmark job there (the planner's own selection)."""
    selects = None
    if masters is not None:
        from infx.matrix.selection import nothing_selected

        def selects(entry: Entry) -> str | None:
            return nothing_selected(entry.data, masters)

    return check_bytes(
        base,
        head,
        policy,
        masters.keys() if masters is not None else None,
        keys_source=", ".join(config_globs),
        selects=selects,
    )


def _merge_sides(root: Path) -> tuple[str, str, str] | None:
    """During a merge: the commit of main's side, of the other side, and the other side's
    name; None when no merge is in progress."""
    if not git.in_progress("MERGE_HEAD", root):
        return None
    found = git.commits(["HEAD", "MERGE_HEAD"], root)
    if len(found) != 2:
        return None
    theirs = found["MERGE_HEAD"]
    side = _main_side(root, None, [theirs])
    if side == "theirs":
        return theirs, found["HEAD"], "the branch"
    return found["HEAD"], theirs, "the branch merged in"


def _merge_losses(
    root: Path, path: str, merging: tuple[str, str, str], result: bytes
) -> list[Violation]:
    """The entries main or the other side added that the merge result no longer holds."""
    from infx.changelog.merge import dropped_entries

    main, other, name = merging
    ancestor = git.merge_base(main, other, root)
    if ancestor is None:
        return []
    files = git.read_many([(ancestor, path), (main, path), (other, path)], root)
    old = files[(ancestor, path)] or b""
    sides = [(files[(side, path)], who) for side, who in ((main, "main"), (other, name))]
    return dropped_entries(
        old, [(data, who) for data, who in sides if data is not None], result, path
    )


def _write_changes(
    target: Path, data: bytes, changes: list[str], check_only: bool, nothing: str
) -> None:
    """Say each change; write the file atomically, or with --check write nothing and exit 1
    when something is due."""
    from infx.yamlio import atomic_write

    for line in changes:
        click.echo(line)
    if not changes:
        click.echo(nothing)
        return
    if check_only:
        sys.exit(1)
    atomic_write(target, data)


def _existing(data: bytes | None, path: str) -> bytes:
    if data is None:
        raise UsageError(f"no such file: {path}")
    return data


@click.group()
def changelog() -> None:
    """Check and rewrite perf-changelog.yaml."""


@changelog.command()
@base_option
@click.option("--head", default=None, help="Ref holding the change; default: the working tree.")
@click.option(
    "--pr",
    type=click.IntRange(min=1),
    help="PR number: placeholders or this PR's link pass. With --base but no --pr (a push to "
    "main) only canonical links pass.",
)
@repo_option
@file_option
@master_configs
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for tools, github for ::error annotations in Actions.",
)
def check(
    base: str | None,
    head: str | None,
    pr: int | None,
    repo: str | None,
    path: str,
    config_globs: tuple[str, ...],
    fmt: str,
) -> None:
    """Gate a changelog edit: append-only history, valid entries, canonical links, known keys.

    Each appended entry must select a benchmark job. Without --base and --head during a
    merge (MERGE_HEAD), the working tree is checked against main's side of the merge and
    every entry the merge drops from either side is named.

    A gate that cannot run (an unknown ref, no such file, unreadable master configs, no
    repository slug) is a usage or environment error; with --format json or github it is
    reported in that format too.
    """
    try:
        root = git.root()
        branch = base is None
        merging = _merge_sides(root) if base is None and head is None else None
        if merging is not None:
            base = merging[0]
        base = branch_base(root) if base is None else base
        change = read_change(root, base, head, path, config_globs)
        base_bytes, head_bytes = change.changelog_base, change.changelog_head
        policy = _policy(repo, pr, root, branch, base_bytes)
        if base_bytes is None and head_bytes is None:
            where = f"at {head}" if head else "in the working tree"
            raise UsageError(f"no such file: {path} (neither {where} nor at {base})")
        masters = None
        if head_bytes is not None and head_bytes != base_bytes:
            masters = masters_from(change.masters, config_globs, change.head_tree)
    except InfxError as exc:
        if fmt == "text":
            raise UsageError(str(exc)) from None
        click.echo(as_failure(fmt, path, str(exc)))
        sys.exit(EXIT_USAGE)
    result = _gate(base_bytes, head_bytes, policy, masters, config_globs)
    if merging is not None and head_bytes is not None:
        result.violations[:0] = _merge_losses(root, path, merging, head_bytes)

    render = {"text": as_text, "json": as_json, "github": as_github}[fmt]
    click.echo(render(path, result))
    append_summary(summary_markdown(path, result))
    sys.exit(0 if result.ok else 1)


@changelog.command()
@file_option
def lint(path: str) -> None:
    """Check a whole changelog file on its own (no diff): bytes, layout, schema of every entry."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    from infx.changelog.parse import read_document

    _, problems = read_document(file.read_bytes())
    for v in problems:
        click.echo(f"{location(path, v)}: {v.rule}: {v.text()}")
    if problems:
        click.echo(f"{path}: {len(problems)} problem(s) found")
        sys.exit(1)
    click.echo(f"{path}: ok")


@changelog.command()
@base_option
@click.option("--pr", type=click.IntRange(min=1), required=True, help="This PR's number.")
@repo_option
@file_option
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Report what would change; write nothing (exit 1 if a rewrite is due).",
)
def canonicalize(base: str | None, pr: int, repo: str | None, path: str, check_only: bool) -> None:
    """Rewrite the placeholder pr-links of appended entries to this PR's canonical link.

    Both placeholder forms are rewritten: XXX and https://github.com/OWNER/REPO/pull/XXX
    (the host is GITHUB_SERVER_URL's). History and every other byte stay as they are.
    """
    root = git.root()
    base = branch_base(root) if base is None else base
    base_bytes = git.read_at(git.resolve(base, root), path, root)
    head_bytes = _existing(git.read_at(None, path, root), path)
    from infx.changelog.canonicalize import canonicalize as canonicalize_bytes

    new, rewrites, _ = canonicalize_bytes(
        base_bytes, head_bytes, _policy(repo, pr, root, history=base_bytes)
    )
    verb = "would rewrite" if check_only else "rewrote"
    changes = [f"{path}:{r.line}: {verb} pr-link {r.old!r} -> {r.new}" for r in rewrites]
    _write_changes(root / path, new, changes, check_only, f"{path}: already canonical")


@changelog.command()
@base_option
@file_option
@master_configs
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Report what would change; write nothing (exit 1 if a fix is due).",
)
def fix(base: str | None, path: str, config_globs: tuple[str, ...], check_only: bool) -> None:
    """Apply the mechanical fixes the gate names to the entries appended since BASE.

    CRLF line endings (a whole file saved with them or a byte-order mark too, when it is
    otherwise history plus appended entries), trailing spaces, one empty line before each
    entry, the final newline, and placeholder spellings of a pr-link (PENDING, TBD,
    pull/PENDING, ...) which become XXX. History bytes are never touched; the file is
    written atomically, and only when the fixed text reads as the old one did but for those
    links. Then the gate runs on the result: exit 1 names each problem a person must fix.
    """
    root = git.root()
    base = branch_base(root) if base is None else base
    base_bytes = git.read_at(git.resolve(base, root), path, root)
    head_bytes = _existing(git.read_at(None, path, root), path)
    from infx.changelog.fix import fix_appended

    fixed, fixes = fix_appended(base_bytes, head_bytes)
    verb = "would fix" if check_only else "fixed"
    changes = [f"{f'{path}:{f.line}' if f.line else path}: {verb}: {f.what}" for f in fixes]
    masters = None
    if fixed != base_bytes:
        with contextlib.suppress(UsageError):  # no master configs: keys are not checked
            masters = load_masters(root, None, config_globs)
    remaining = _gate(base_bytes, fixed, _fix_policy(root, base_bytes), masters, config_globs)
    if remaining.ok:
        _write_changes(root / path, fixed, changes, check_only, f"{path}: nothing to fix")
        return
    if changes and not check_only:
        _write_changes(root / path, fixed, changes, check_only, "")
    else:
        for line in changes:
            click.echo(line)
    for v in remaining.violations:
        click.echo(f"{location(path, v)}: {v.rule}: {v.text()}")
    click.echo(f"{path}: {len(remaining.violations)} problem(s) left that fix cannot repair")
    sys.exit(1)


def _fix_policy(root: Path, history: bytes | None) -> LinkPolicy | None:
    """The link rules of a branch, when the repository can be told; else none (fix still
    names every other problem)."""
    try:
        return _policy(None, None, root, branch=True, history=history)
    except UsageError:
        return None


main_side_option = click.option(
    "--main-side",
    type=click.Choice(["theirs", "ours"]),
    default=None,
    help="Which side of the merge is main. Default: found from the merge: ours when HEAD is "
    "the main branch (main-branch in infx.toml) or in a rebase, theirs when the commit merged "
    "in is a main tip or otherwise.",
)


def _main_side(root: Path, given: str | None, theirs: list[str]) -> MainSide:
    from infx.changelog.conflict import find_main_side

    if given is not None:
        return "ours" if given == "ours" else "theirs"
    return find_main_side(root, load_settings(root).main_branch, theirs)


@changelog.command("resolve-conflict")
@click.option("--pr", type=click.IntRange(min=1), help="PR number; placeholders become its link.")
@repo_option
@file_option
@main_side_option
def resolve_conflict(pr: int | None, repo: str | None, path: str, main_side: str | None) -> None:
    """Resolve a conflicted merge of the changelog from git's index stages 1/2/3."""
    root = git.root()
    policy = _policy(repo, pr, root) if pr else None
    from infx.changelog.conflict import resolve_index

    merging = list(git.commits(["MERGE_HEAD"], root).values())
    side = _main_side(root, main_side, merging)
    merged = resolve_index(root, path, side, policy)
    lines = merged.count(b"\n")
    click.echo(f"{path}: resolved and staged ({lines} lines: main's, then the PR's new entries)")


@changelog.command("merge-driver")
@click.argument("ancestor", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("current", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("other", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("pathname", required=False)
@click.option(
    "--pr",
    type=click.IntRange(min=1),
    envvar="INFX_PR_NUMBER",
    help="PR number (or INFX_PR_NUMBER); placeholders become its link.",
)
@repo_option
@main_side_option
@click.option(
    "--marker-size",
    type=click.IntRange(min=1, max=1000),
    default=7,
    show_default=True,
    help="Length of the conflict markers when there is no automatic answer (git's %L: the "
    "file's conflict-marker-size attribute).",
)
def merge_driver(
    ancestor: Path,
    current: Path,
    other: Path,
    pathname: str | None,
    pr: int | None,
    repo: str | None,
    main_side: str | None,
    marker_size: int,
) -> None:
    """The changelog's git merge driver: git runs `infx changelog merge-driver %O %A %B %P`.

    It writes the merge of both sides' new entries to %A; nothing here talks to GitHub
    (`infx merge` merges a pull request there). Main's entries come first, whichever side is
    ours. When there is no automatic answer it exits 1 and leaves both sides between
    conflict markers in %A, so git reports a normal conflict and nothing is lost.
    """
    root = git.root()
    policy = _policy(repo, pr, root) if pr else None
    from infx.changelog.conflict import merging_in, run_driver

    side = _main_side(root, main_side, merging_in(os.environ))

    refused = run_driver(ancestor, current, other, side, policy, marker_size)
    if refused is not None:
        where = pathname or current
        click.echo(f"infx: {where}: left both sides between conflict markers: {refused}", err=True)
        sys.exit(1)


@changelog.command()
@click.option(
    "--config-key",
    "config_keys",
    multiple=True,
    required=True,
    help="Config key (or * pattern) the change affects; repeat for several.",
)
@click.option(
    "--description",
    "descriptions",
    multiple=True,
    required=True,
    help="One point of what changed; repeat for several.",
)
@click.option(
    "--scenario-type",
    "scenario_types",
    multiple=True,
    type=click.Choice(["fixed-seq-len", "agentic-coding"]),
    help="Restrict the sweep to this scenario; repeat for both. Default: every scenario.",
)
@click.option("--evals-only", is_flag=True, help="Run only the eval jobs of the configs.")
@click.option("--all-evals", is_flag=True, help="Make every planned point an eval point.")
@click.option(
    "--append-only",
    is_flag=True,
    help="Run only points absent from the base configs (no evals).",
)
@file_option
@master_configs
def new(
    config_keys: tuple[str, ...],
    descriptions: tuple[str, ...],
    scenario_types: tuple[str, ...],
    evals_only: bool,
    all_evals: bool,
    append_only: bool,
    path: str,
    config_globs: tuple[str, ...],
) -> None:
    """Append a well-formed entry with the XXX placeholder, checked before it is written.

    The whole file is checked first; nothing is written when it already breaks a rule.
    """
    root = git.root()
    current = _existing(git.read_at(None, path, root), path)
    from infx.changelog.new import append_entry, render_entry
    from infx.changelog.parse import read_document
    from infx.yamlio import atomic_write

    existing, problems = read_document(current)
    if problems:
        first = problems[0]
        raise ChangelogError(
            f"{path} already breaks a rule, so nothing was appended: "
            f"line {first.line or 1}: {first.text()} (see infx changelog lint --file {path})"
        )
    entry = render_entry(
        list(config_keys),
        list(descriptions),
        list(scenario_types),
        {"evals-only": evals_only, "all-evals": all_evals, "append-only": append_only},
    )
    updated = append_entry(current, entry)
    result = _gate(current, updated, None, load_masters(root, None, config_globs), config_globs)
    if not result.ok:
        raise ChangelogError("; ".join(v.text() for v in result.violations))
    atomic_write(root / path, updated)
    added = result.entries[0]
    click.echo(f"{path}: appended entry at line {added.line}")
    for same in (e for e in existing if e.content() == added.content()):
        click.echo(
            f"infx: warning: {path}:{same.line}: an entry with the same keys, description "
            "and flags already exists",
            err=True,
        )
