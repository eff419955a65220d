"""`infx changelog ...`: each command reads through `infx.changelog.facts` (master configs
through the planner's edge), calls `infx.changelog.gate` or `edits`, and does what it returns."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn, TypeAlias, Unpack

import click

from infx import git
from infx.changelog import facts
from infx.changelog.edits import FixFacts, appended, canonicalized, fixed
from infx.changelog.edits import lint as lint_file
from infx.changelog.gate import unrunnable, verdict
from infx.changelog.links import LinkPolicy, Links
from infx.changelog.model import Outcome
from infx.changelog.new import NewEntry
from infx.cli.options import PR_NUMBER as PR
from infx.cli.options import base_option, branch_base, changelog_file, links_repo_option, shown
from infx.cli.options import master_configs as configs_option
from infx.errors import InfxError, printable
from infx.matrix import gate_rules
from infx.yamlio import atomic_write

Given: TypeAlias = str | None  # an option's value; None when it was not given
Many: TypeAlias = tuple[str, ...]  # a repeatable option's values
_HELP = {  # the help of options declared on one line
    "pr": "PR number: placeholders or this PR's link pass. With --base but no --pr (a push to main) only canonical links pass.",
    "main-side": "Which side of the merge is main. Default: found from the merge: ours when HEAD is the main branch (main-branch in infx.toml) or in a rebase, theirs when the commit merged in is a main tip or otherwise.",
    "config-key": "Config key (or * pattern) the change affects; repeat for several.",
    "format": "text for people, json for tools, github for ::error annotations in Actions.",
    "driver pr": "PR number (or INFX_PR_NUMBER); placeholders become its link.",
    "marker-size": "Length of the conflict markers when there is no automatic answer (git's %L: the file's conflict-marker-size attribute).",
    "description": "One point of what changed; repeat for several.",
    "scenario-type": "Restrict the sweep to this scenario; repeat for both. Default: every scenario.",
    "append-only": "Run only points absent from the base configs (no evals).",
    "check a rewrite": "Report what would change; write nothing (exit 1 if a rewrite is due).",
    "check a fix": "Report what would change; write nothing (exit 1 if a fix is due).",
}
FORMATS = click.Choice(["text", "json", "github"])
SCENARIOS = click.Choice(["fixed-seq-len", "agentic-coding"])
SIDES = click.Choice(["theirs", "ours"])


def _said(links: Links) -> LinkPolicy:
    """The link rules, with the note on stderr when the repository was guessed."""
    if links.note:
        click.echo(printable(links.note), err=True)
    return links.policy


def _finish(outcome: Outcome, target: Path | None = None) -> NoReturn:
    """Print, write (atomically), add the step summary and exit as the outcome says."""
    for line in outcome.notes:  # notes and warnings quote input: printable
        click.echo(printable(line), err=True)
    for line in outcome.lines:
        click.echo(line)
    if outcome.write is not None and target is not None:
        atomic_write(target, outcome.write)
    for line in outcome.warnings:
        click.echo(printable(line), err=True)
    if outcome.summary is not None and os.environ.get("GITHUB_STEP_SUMMARY"):
        from infx.github.actions import append_summary  # in Actions only: the gate's start-up

        append_summary(outcome.summary)
    sys.exit(outcome.exit_code)


main_side_option = click.option("--main-side", type=SIDES, default=None, help=_HELP["main-side"])


@click.group()
def changelog() -> None:
    """Check and rewrite perf-changelog.yaml."""


@changelog.command()
@base_option
@click.option("--head", default=None, help="Ref holding the change; default: the working tree.")
@click.option("--pr", type=PR, help=_HELP["pr"])
@links_repo_option
@changelog_file
@configs_option
@shown("--format", "fmt", type=FORMATS, default="text", help=_HELP["format"])
def check(base: Given, head: Given, pr: int | None, repo: Given, path: str, config_globs: Many, fmt: str) -> None:  # fmt: skip
    """Gate a changelog edit: append-only history, valid entries, canonical links, known keys.

    Each appended entry must select a benchmark job. Without --base and --head during a
    merge (MERGE_HEAD), the working tree is checked against main's side of the merge and
    every entry the merge drops from either side is named.

    A gate that cannot run is a usage or environment error (an unknown ref, no such file, no
    repository slug), or a broken rule when a master config is invalid; with --format json
    or github it is reported in that format too.
    """
    root = git.root()
    try:
        inputs, rules = gate_rules.gate_inputs(
            root, (base, head), path, config_globs, (repo, pr), _said
        )
    except InfxError as exc:
        _finish(unrunnable(fmt, path, exc))
    _finish(verdict(inputs, rules, fmt))


@changelog.command()
@changelog_file
def lint(path: str) -> None:
    """Check a whole changelog file on its own (no diff): bytes, layout, schema of every entry."""
    data = facts.read_file(Path(path), path)
    stopped = b"<<<<<<<" in data and facts.merge_stopped_here(Path(path))
    _finish(lint_file(path, data, merging=stopped))


@changelog.command()
@base_option
@click.option("--pr", type=PR, required=True, help="This PR's number.")
@links_repo_option
@changelog_file
@click.option("--check", "check_only", is_flag=True, help=_HELP["check a rewrite"])
def canonicalize(base: Given, pr: int, repo: Given, path: str, check_only: bool) -> None:
    """Rewrite the placeholder pr-links of appended entries to this PR's canonical link.

    Both placeholder forms are rewritten: XXX and https://github.com/OWNER/REPO/pull/XXX
    (the host is GITHUB_SERVER_URL's). History and every other byte stay as they are.
    """
    root = git.root()
    target, old, new = facts.sides(root, path, branch_base(root) if base is None else base)
    policy = _said(facts.links(repo, pr, root, history=old))
    _finish(canonicalized(path, old, new, policy, check_only), root / target)


@changelog.command()
@base_option
@changelog_file
@configs_option
@click.option("--check", "check_only", is_flag=True, help=_HELP["check a fix"])
def fix(base: Given, path: str, config_globs: Many, check_only: bool) -> None:
    """Apply the mechanical fixes the gate names to the entries appended since BASE.

    CRLF line endings (a whole file saved with them or a byte-order mark too, when it is
    otherwise history plus appended entries), trailing spaces, one empty line before each
    entry, the final newline, and placeholder spellings of a pr-link (PENDING, TBD,
    pull/PENDING, ...) which become XXX. History bytes are never touched; the file is
    written atomically, and only when the fixed text reads as the old one did but for those
    links. Then the gate runs on the result: exit 1 names each problem a person must fix.
    """
    root = git.root()
    target, old, new = facts.sides(root, path, branch_base(root) if base is None else base)
    links, stopped = (lambda: facts.branch_links(root, old)), facts.stopped_operation(root)
    rules = lambda: gate_rules.in_work_tree(root, config_globs, optional=True)  # noqa: E731
    _finish(fixed(FixFacts(path, old, new, links, rules, stopped), check_only), root / target)


@changelog.command("resolve-conflict")
@click.option("--pr", type=PR, help="PR number; placeholders become its link.")
@links_repo_option
@changelog_file
@main_side_option
def resolve_conflict(pr: int | None, repo: Given, path: str, main_side: Given) -> None:
    """Resolve a conflicted merge of the changelog from git's index stages 1/2/3."""
    from infx.changelog.conflict import resolve_stopped

    root = git.root()
    target = facts.target(root, path, in_work_tree=False)
    policy = _said(facts.links(repo, pr, root)) if pr else None
    side = facts.stopped_main_side(root, main_side, target)
    merged = resolve_stopped(root, target, side, policy, facts.stopped_operation(root))
    lines = merged.count(b"\n")
    click.echo(f"{path}: resolved and staged ({lines} lines: main's, then the PR's new entries)")


@changelog.command("merge-driver")
@click.argument("ancestor", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("current", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("other", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("pathname", required=False)
@click.option("--pr", type=PR, envvar="INFX_PR_NUMBER", help=_HELP["driver pr"])
@links_repo_option
@main_side_option
@shown("--marker-size", type=click.IntRange(1, 1000), default=7, help=_HELP["marker-size"])
def merge_driver(ancestor: Path, current: Path, other: Path, pathname: Given, pr: int | None,
                 repo: Given, main_side: Given, marker_size: int) -> None:  # fmt: skip
    """The changelog's git merge driver: git runs `infx changelog merge-driver %O %A %B %P`.

    It writes the merge of both sides' new entries to %A; nothing here talks to GitHub
    (`infx merge` merges a pull request there). Main's entries come first, whichever side is
    ours. When there is no automatic answer it exits 1 and leaves both sides between
    conflict markers in %A, so git reports a normal conflict and nothing is lost.
    """
    from infx.changelog.conflict import run_driver

    root = git.root()
    policy = _said(facts.links(repo, pr, root)) if pr else None
    side = facts.driver_main_side(root, main_side, (ancestor, current, other), pathname)
    stopped = lambda: facts.stopped_operation(root)  # noqa: E731  (asked only on a refusal)
    refused = run_driver(ancestor, current, other, side, policy, marker_size, stopped)
    if refused is not None:
        click.echo(printable(f"infx: {pathname or current}: left both sides between conflict markers: {refused}"), err=True)  # fmt: skip
        sys.exit(1)


@changelog.command()
@click.option("--config-key", "config_keys", multiple=True, required=True, help=_HELP["config-key"])
@click.option("--description", "descriptions", multiple=True, required=True, help=_HELP["description"])  # fmt: skip
@click.option("--scenario-type", "scenario_types", multiple=True, type=SCENARIOS, help=_HELP["scenario-type"])  # fmt: skip
@click.option("--evals-only", is_flag=True, help="Run only the eval jobs of the configs.")
@click.option("--all-evals", is_flag=True, help="Make every planned point an eval point.")
@click.option("--no-evals", is_flag=True, help="Run the throughput points without evals (format pr3058).")  # fmt: skip
@click.option("--append-only", is_flag=True, help=_HELP["append-only"])
@changelog_file
@configs_option
def new(path: str, config_globs: Many, **entry: Unpack[NewEntry]) -> None:
    """Append a well-formed entry with the XXX placeholder, checked before it is written.

    The whole file is checked first; nothing is written when it already breaks a rule.
    """
    root = git.root()
    target = facts.target(root, path)
    current = facts.working_file(root, target, path)
    rules = lambda: gate_rules.in_work_tree(root, config_globs)  # noqa: E731
    _finish(appended(path, current, entry, rules), root / target)
