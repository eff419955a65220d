"""`infx changelog ...`: gate, canonicalize, fix, resolve conflicts, add entries.

Each command reads through `infx.changelog.facts` (and the planner's edge for master
configs), calls a function of `infx.changelog.gate` or `edits`, and prints what it returns.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.decorators import FC

from infx import git
from infx.changelog import facts
from infx.cli.options import base_option, branch_base, changelog_file, links_repo_option
from infx.cli.options import master_configs as configs_option
from infx.errors import InfxError, UsageError

if TYPE_CHECKING:
    from infx.changelog.edits import Outcome
    from infx.changelog.gate import ConfigRules
    from infx.changelog.links import LinkPolicy


def _links(
    repo: str | None, pr: int | None, root: Path, branch: bool = False, history: bytes | None = None
) -> LinkPolicy:
    found = facts.links(repo, pr, root, branch, history)
    if found.note:
        click.echo(found.note, err=True)
    return found.policy


def _rules(files: dict[str, bytes], globs: Sequence[str], tree: str | None) -> ConfigRules:
    """The gate's rules from the master configs: keys resolve, and the planner's verdict on
    whether an entry selects a job."""
    from infx.changelog.gate import ConfigRules
    from infx.matrix.selection import nothing_selected
    from infx.matrix.sources import masters_from

    masters = masters_from(files, globs, tree)
    return ConfigRules(
        masters.keys(), ", ".join(globs), lambda entry: nothing_selected(entry.data, masters)
    )


def _finish(outcome: Outcome, target: Path | None = None) -> None:
    """Print, write (atomically) and exit as the outcome says."""
    from infx.yamlio import atomic_write

    for line in outcome.lines:
        click.echo(line)
    if outcome.write is not None and target is not None:
        atomic_write(target, outcome.write)
    for line in outcome.warnings:
        click.echo(line, err=True)
    sys.exit(outcome.exit_code)


def _check_option(what: str) -> Callable[[FC], FC]:
    return click.option(
        "--check",
        "check_only",
        is_flag=True,
        help=f"Report what would change; write nothing (exit 1 if {what} is due).",
    )


main_side_option = click.option(
    "--main-side",
    type=click.Choice(["theirs", "ours"]),
    default=None,
    help="Which side of the merge is main. Default: found from the merge: ours when HEAD is "
    "the main branch (main-branch in infx.toml) or in a rebase, theirs when the commit merged "
    "in is a main tip or otherwise.",
)


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
@links_repo_option
@changelog_file
@configs_option
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

    A gate that cannot run is a usage or environment error (an unknown ref, no such file, no
    repository slug), or a broken rule when a master config is invalid; with --format json
    or github it is reported in that format too.
    """
    from infx.changelog.gate import gate
    from infx.changelog.report import as_failure, render, summary_markdown
    from infx.github.actions import append_summary
    from infx.matrix.sources import read_change

    root = git.root()
    try:
        target = facts.target(root, path, in_work_tree=head is None)
        merging = facts.merge_in_progress(root) if base is None and head is None else None
        base_ref = merging.main if merging else base or branch_base(root)
        change = read_change(root, base_ref, head, target, config_globs)
        old, new = change.changelog_base, change.changelog_head
        policy = _links(repo, pr, root, branch=base is None, history=old)
        inputs = facts.gate_facts(root, target, (base_ref, head), (old, new), policy, merging)
        changed = new is not None and new != old
        rules = _rules(change.masters, config_globs, change.head_tree) if changed else None
    except InfxError as exc:
        if fmt == "text":
            raise
        click.echo(as_failure(fmt, path, str(exc)))
        sys.exit(exc.exit_code)
    result = gate(inputs, rules)
    click.echo(render(fmt, path, result))
    append_summary(summary_markdown(path, result))
    sys.exit(0 if result.ok else 1)


@changelog.command()
@changelog_file
def lint(path: str) -> None:
    """Check a whole changelog file on its own (no diff): bytes, layout, schema of every entry."""
    from infx.changelog.edits import lint as lint_file

    _finish(lint_file(path, facts.read_file(Path(path), path)))


@changelog.command()
@base_option
@click.option("--pr", type=click.IntRange(min=1), required=True, help="This PR's number.")
@links_repo_option
@changelog_file
@_check_option("a rewrite")
def canonicalize(base: str | None, pr: int, repo: str | None, path: str, check_only: bool) -> None:
    """Rewrite the placeholder pr-links of appended entries to this PR's canonical link.

    Both placeholder forms are rewritten: XXX and https://github.com/OWNER/REPO/pull/XXX
    (the host is GITHUB_SERVER_URL's). History and every other byte stay as they are.
    """
    from infx.changelog.edits import canonicalized

    root = git.root()
    target = facts.target(root, path)
    old = facts.at_base(root, branch_base(root) if base is None else base, target)
    new = facts.working_file(root, target, path)
    policy = _links(repo, pr, root, history=old)
    _finish(canonicalized(path, old, new, policy, check_only), root / target)


@changelog.command()
@base_option
@changelog_file
@configs_option
@_check_option("a fix")
def fix(base: str | None, path: str, config_globs: tuple[str, ...], check_only: bool) -> None:
    """Apply the mechanical fixes the gate names to the entries appended since BASE.

    CRLF line endings (a whole file saved with them or a byte-order mark too, when it is
    otherwise history plus appended entries), trailing spaces, one empty line before each
    entry, the final newline, and placeholder spellings of a pr-link (PENDING, TBD,
    pull/PENDING, ...) which become XXX. History bytes are never touched; the file is
    written atomically, and only when the fixed text reads as the old one did but for those
    links. Then the gate runs on the result: exit 1 names each problem a person must fix.
    """
    from infx.changelog.edits import FixFacts, fixed
    from infx.matrix.sources import read_masters

    root = git.root()
    target = facts.target(root, path)
    old = facts.at_base(root, branch_base(root) if base is None else base, target)
    new = facts.working_file(root, target, path)

    def policy() -> LinkPolicy | None:
        try:  # the link rules of a branch when the repository can be told; else none
            return _links(None, None, root, branch=True, history=old)
        except UsageError:
            return None

    def rules() -> ConfigRules | None:  # no master configs: keys are not checked
        files = read_masters(root, None, config_globs)
        return _rules(files, config_globs, None) if files else None

    stopped = facts.stopped_operation(root)
    _finish(fixed(FixFacts(path, old, new, policy, rules, stopped), check_only), root / target)


@changelog.command("resolve-conflict")
@click.option("--pr", type=click.IntRange(min=1), help="PR number; placeholders become its link.")
@links_repo_option
@changelog_file
@main_side_option
def resolve_conflict(pr: int | None, repo: str | None, path: str, main_side: str | None) -> None:
    """Resolve a conflicted merge of the changelog from git's index stages 1/2/3."""
    from infx.changelog.conflict import resolve_stopped

    root = git.root()
    target = facts.target(root, path, in_work_tree=False)
    policy = _links(repo, pr, root) if pr else None
    side = facts.main_side(root, main_side, list(git.commits(["MERGE_HEAD"], root).values()))
    merged = resolve_stopped(root, target, side, policy, facts.stopped_operation(root))
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
@links_repo_option
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
    from infx.changelog.conflict import merging_in, run_driver

    root = git.root()
    policy = _links(repo, pr, root) if pr else None
    side = facts.main_side(root, main_side, merging_in(os.environ))
    stopped = lambda: facts.stopped_operation(root)  # noqa: E731  (asked only on a refusal)
    refused = run_driver(ancestor, current, other, side, policy, marker_size, stopped)
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
@changelog_file
@configs_option
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
    from infx.changelog.edits import NewEntry, appended
    from infx.matrix.sources import read_masters

    root = git.root()
    target = facts.target(root, path)
    current = facts.working_file(root, target, path)
    flags = {"evals-only": evals_only, "all-evals": all_evals, "append-only": append_only}
    request = NewEntry(list(config_keys), list(descriptions), list(scenario_types), flags)

    def rules() -> ConfigRules:
        return _rules(read_masters(root, None, config_globs), config_globs, None)

    _finish(appended(path, current, request, rules), root / target)
