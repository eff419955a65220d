"""The changelog commands that read a file and may rewrite it (`lint`, `canonicalize`, `fix`,
`new`) as functions of what was read: each returns what to print, what to write and the exit
code, and raises ChangelogError where the command refuses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from infx.changelog.gate import ConfigRules, GateFacts, gate
from infx.changelog.links import LinkPolicy, Links
from infx.changelog.model import Outcome
from infx.changelog.new import NewEntry
from infx.changelog.report import location
from infx.changelog.text_rules import unresolved_conflicts
from infx.errors import ChangelogError, UsageError


def _changes(lines: list[str], data: bytes, check_only: bool, nothing: str) -> Outcome:
    """Each change said; the file written, or with --check nothing written and exit 1 when
    something is due."""
    if not lines:
        return Outcome([nothing])
    if check_only:
        return Outcome(lines, exit_code=1)
    return Outcome(lines, write=data)


def lint(path: str, data: bytes, merging: bool = False) -> Outcome:
    """Every problem of the file; a file git left conflict markers in gets one problem per
    conflict, with the advice that fits (`merging`: a merge or rebase is stopped on it),
    since what YAML makes of the marker lines says nothing more."""
    from infx.changelog.parse import read_document

    problems = unresolved_conflicts(data, path, merging)
    if not problems:
        _, problems = read_document(data)
    lines = [f"{location(path, v)}: {v.rule}: {v.text()}" for v in problems]
    if problems:
        return Outcome([*lines, f"{path}: {len(problems)} problem(s) found"], exit_code=1)
    return Outcome([f"{path}: ok"])


def canonicalized(
    path: str, base: bytes | None, head: bytes, policy: LinkPolicy, check_only: bool
) -> Outcome:
    """The placeholders of the appended entries rewritten to the PR's canonical link."""
    from infx.changelog.canonicalize import canonicalize

    new, rewrites, _ = canonicalize(base, head, policy)
    verb = "would rewrite" if check_only else "rewrote"
    changes = [f"{path}:{r.line}: {verb} pr-link {r.old!r} -> {r.new}" for r in rewrites]
    return _changes(changes, new, check_only, f"{path}: already canonical")


def fix_first(ancestor: bytes, pr_side: bytes, operation: str | None) -> str | None:
    """When `infx changelog fix` repairs something on the PR's side of a refused merge: how
    to get there from the stopped merge (or rebase), where `fix` cannot run; else None."""
    from infx.changelog.fix import fix_appended

    try:
        _, fixes = fix_appended(ancestor, pr_side)
    except ChangelogError:
        return None
    if not fixes:
        return None
    step = operation or "merge"
    return (
        f"`infx changelog fix` repairs this on the branch, not in the middle of a {step}: "
        f"run `git {step} --abort`, then `infx changelog fix`, commit, and {step} again"
    )


@dataclass(frozen=True)
class FixFacts:
    """What `fix` reads; the link rules and master configs only once the gate runs, and the
    git operation stopped in the repository (None: none)."""

    path: str
    base: bytes | None
    head: bytes
    links: Callable[[], Links | None]
    rules: Callable[[], ConfigRules | None]
    stopped: str | None = None


def fixed(facts: FixFacts, check_only: bool) -> Outcome:
    """The mechanical fixes of the appended entries, then the gate on the result: what is
    left is listed and the command exits 1. A file still holding conflict markers is refused:
    `fix` repairs a branch's own entries, not a stopped merge."""
    from infx.changelog.fix import fix_appended

    path = facts.path
    conflicts = unresolved_conflicts(facts.head, path, facts.stopped is not None)
    if conflicts:
        lines = ", ".join(str(v.line) for v in conflicts)
        step = facts.stopped
        raise UsageError(
            f"{path} holds unresolved conflict markers (line {lines}); nothing was fixed: "
            + (
                f"run `infx changelog resolve-conflict`, or `git {step} --abort`, then "
                f"`infx changelog fix`, commit, and {step} again"
                if step
                else "keep both sides' entries, main's first, and delete the marker lines"
            )
        )
    result, fixes = fix_appended(facts.base, facts.head)
    verb = "would fix" if check_only else "fixed"
    changes = [f"{f'{path}:{f.line}' if f.line else path}: {verb}: {f.what}" for f in fixes]
    rules = facts.rules() if result != facts.base else None
    links = facts.links()
    policy = links.policy if links is not None else None
    remaining = gate(GateFacts(path, facts.base, result, policy), rules)
    if remaining.ok:
        outcome = _changes(changes, result, check_only, f"{path}: nothing to fix")
    else:
        problems = [f"{location(path, v)}: {v.rule}: {v.text()}" for v in remaining.violations]
        left = f"{path}: {len(remaining.violations)} problem(s) left that fix cannot repair"
        write = result if changes and not check_only else None
        outcome = Outcome([*changes, *problems, left], write=write, exit_code=1)
    outcome.notes = [links.note] if links is not None and links.note else []
    return outcome


def appended(
    path: str, current: bytes, request: NewEntry, rules: Callable[[], ConfigRules | None]
) -> Outcome:
    """The file with the new entry appended after checking the whole file (nothing is
    written when it already breaks a rule) and the entry (schema, keys, selection)."""
    from infx.changelog.new import append_entry, render_entry
    from infx.changelog.parse import read_document

    existing, problems = read_document(current)
    if problems:
        first = problems[0]
        raise ChangelogError(
            f"{path} already breaks a rule, so nothing was appended: "
            f"line {first.line or 1}: {first.text()} (see infx changelog lint --file {path})"
        )
    flags = {
        "evals-only": request["evals_only"],
        "all-evals": request["all_evals"],
        "no-evals": request["no_evals"],
        "append-only": request["append_only"],
    }
    keys, points = list(request["config_keys"]), list(request["descriptions"])
    entry = render_entry(keys, points, list(request["scenario_types"]), flags)
    updated = append_entry(current, entry)
    result = gate(GateFacts(path, current, updated, None), rules())
    if not result.ok:
        raise ChangelogError("; ".join(v.text() for v in result.violations))
    added = result.entries[0]
    warnings = [
        f"infx: warning: {path}:{same.line}: an entry with the same keys, description "
        "and flags already exists"
        for same in existing
        if same.content() == added.content()
    ]
    return Outcome([f"{path}: appended entry at line {added.line}"], updated, warnings=warnings)
