"""`infx changelog ...`: gate, canonicalize, resolve conflicts, add entries."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from infx import git
from infx.changelog.canonicalize import canonicalize as canonicalize_bytes
from infx.changelog.check import check as check_bytes
from infx.changelog.links import LinkPolicy
from infx.changelog.merge import merge
from infx.changelog.new import append_entry, render_entry
from infx.changelog.parse import validate_document
from infx.changelog.report import as_failure, as_github, as_json, as_text, summary_markdown
from infx.cli.options import changelog_file, master_configs
from infx.context import repository
from infx.errors import EXIT_USAGE, ChangelogError, InfxError, UsageError
from infx.github.actions import append_summary
from infx.matrix.sources import load_masters
from infx.settings import SETTINGS_FILE
from infx.settings import load as load_settings
from infx.yamlio import atomic_write

file_option = changelog_file
repo_option = click.option(
    "--repo", help="OWNER/NAME; default GITHUB_REPOSITORY or the origin remote."
)


def _policy(repo: str | None, pr: int | None, root: Path) -> LinkPolicy:
    where = repository(repo, root, load_settings(root))
    if where.guessed:
        click.echo(
            f"infx: note: links point at {where.slug}, taken from {where.origin}; "
            f"set repository in {SETTINGS_FILE} or pass --repo to be sure",
            err=True,
        )
    return LinkPolicy(repo=where.slug, server=where.server, pr=pr)


@click.group()
def changelog() -> None:
    """Check and rewrite perf-changelog.yaml."""


@changelog.command()
@click.option(
    "--base", required=True, help="Ref the change is compared against (e.g. origin/main)."
)
@click.option("--head", default=None, help="Ref holding the change; default: the working tree.")
@click.option(
    "--pr", type=click.IntRange(min=1), help="PR number; without it only canonical links pass."
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
)
def check(
    base: str,
    head: str | None,
    pr: int | None,
    repo: str | None,
    path: str,
    config_globs: tuple[str, ...],
    fmt: str,
) -> None:
    """Gate a changelog edit: append-only history, valid entries, canonical links, known keys.

    Exit 0: the edit passes; 1: it breaks a rule; 2: the gate could not run (unknown ref,
    unreadable master configs, no repository slug). With --format json or github a
    failure to run is reported in that format too.
    """
    try:
        root = git.root()
        base_tree = git.resolve(base, root)
        head_tree = git.resolve(head, root) if head else None
        policy = _policy(repo, pr, root)
        base_bytes = git.read_at(base_tree, path, root)
        head_bytes = git.read_at(head_tree, path, root)
        keys = None
        if head_bytes is not None and head_bytes != base_bytes:
            keys = load_masters(root, head_tree, config_globs).keys()
    except InfxError as exc:
        if fmt == "text":
            raise UsageError(str(exc)) from None
        click.echo(as_failure(fmt, path, str(exc)))
        sys.exit(EXIT_USAGE)
    result = check_bytes(base_bytes, head_bytes, policy, keys)

    render = {"text": as_text, "json": as_json, "github": as_github}[fmt]
    click.echo(render(path, result))
    append_summary(summary_markdown(path, result))
    sys.exit(0 if result.ok else 1)


@changelog.command()
@file_option
def lint(path: str) -> None:
    """Check a whole changelog file on its own (no diff): bytes, layout, schema of every entry."""
    data = Path(path).read_bytes()
    problems = validate_document(data)
    for v in problems:
        click.echo(f"{path}:{v.line or 1}: {v.rule}: {v.text()}")
    if problems:
        click.echo(f"{path}: {len(problems)} problem(s) found")
        sys.exit(1)
    click.echo(f"{path}: ok")


@changelog.command()
@click.option("--base", required=True, help="Ref the PR branched from (e.g. origin/main).")
@click.option("--pr", type=click.IntRange(min=1), required=True, help="This PR's number.")
@repo_option
@file_option
@click.option(
    "--check", "check_only", is_flag=True, help="Report what would change; write nothing."
)
def canonicalize(base: str, pr: int, repo: str | None, path: str, check_only: bool) -> None:
    """Rewrite XXX placeholders of appended entries to this PR's canonical link."""
    root = git.root()
    base_bytes = git.read_at(git.resolve(base, root), path, root)
    head_bytes = git.read_at(None, path, root)
    if head_bytes is None:
        raise UsageError(f"{path} does not exist in the working tree")
    new, rewrites, _ = canonicalize_bytes(base_bytes, head_bytes, _policy(repo, pr, root))
    for r in rewrites:
        verb = "would rewrite" if check_only else "rewrote"
        click.echo(f"{path}:{r.line}: {verb} pr-link {r.old!r} -> {r.new}")
    if not rewrites:
        click.echo(f"{path}: already canonical")
        return
    if check_only:
        sys.exit(1)
    atomic_write(root / path, new)


def _main_and_pr(ours: bytes, theirs: bytes, main_side: str) -> tuple[bytes, bytes]:
    return (theirs, ours) if main_side == "theirs" else (ours, theirs)


main_side_option = click.option(
    "--main-side",
    type=click.Choice(["theirs", "ours"]),
    default="theirs",
    show_default=True,
    help="Which side of the merge is main: 'theirs' when merging main into a PR branch.",
)


@changelog.command("resolve-conflict")
@click.option("--pr", type=click.IntRange(min=1), help="PR number; placeholders become its link.")
@repo_option
@file_option
@main_side_option
def resolve_conflict(pr: int | None, repo: str | None, path: str, main_side: str) -> None:
    """Resolve a conflicted merge of the changelog from git's index stages 1/2/3."""
    root = git.root()
    if not git.unmerged(path, root):
        raise UsageError(f"{path} has no merge conflict to resolve")
    stages = [git.stage(path, n, root) for n in (1, 2, 3)]
    ancestor, ours, theirs = (s or b"" for s in stages)
    main_bytes, pr_bytes = _main_and_pr(ours, theirs, main_side)
    policy = _policy(repo, pr, root) if pr else LinkPolicy(repo="unknown/unknown")
    merged = merge(ancestor, main_bytes, pr_bytes, policy)
    atomic_write(root / path, merged)
    git.add(path, root)
    click.echo(f"{path}: resolved ({len(merged) - len(main_bytes)} bytes added after main)")


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
def merge_driver(
    ancestor: Path,
    current: Path,
    other: Path,
    pathname: str | None,
    pr: int | None,
    repo: str | None,
    main_side: str,
) -> None:
    """git merge driver: `infx changelog merge-driver %O %A %B %P` (writes the result to %A)."""
    main_bytes, pr_bytes = _main_and_pr(current.read_bytes(), other.read_bytes(), main_side)
    policy = _policy(repo, pr, git.root()) if pr else LinkPolicy(repo="unknown/unknown")
    try:
        merged = merge(ancestor.read_bytes(), main_bytes, pr_bytes, policy)
    except ChangelogError as exc:
        click.echo(f"infx: {pathname or current}: {exc}", err=True)
        sys.exit(1)
    atomic_write(current, merged)


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
)
@click.option("--evals-only", is_flag=True)
@click.option("--all-evals", is_flag=True)
@click.option("--append-only", is_flag=True)
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
    """Append a well-formed entry with the XXX placeholder, checked before it is written."""
    root = git.root()
    current = git.read_at(None, path, root)
    entry = render_entry(
        list(config_keys),
        list(descriptions),
        list(scenario_types),
        {"evals-only": evals_only, "all-evals": all_evals, "append-only": append_only},
    )
    updated = append_entry(current, entry)
    keys = load_masters(root, None, config_globs).keys()
    result = check_bytes(current, updated, None, keys)
    if not result.ok:
        raise ChangelogError("; ".join(v.text() for v in result.violations))
    atomic_write(root / path, updated)
    click.echo(f"{path}: appended entry at line {result.entries[0].line}")
