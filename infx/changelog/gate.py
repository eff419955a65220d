"""`infx changelog check` as a function of what was read: the verdict on one changelog edit.

Besides the rules of `check`, the gate knows where the edit happens: a file still holding a
merge's conflict markers is named as such and nothing else; during a merge, every entry the
result drops from either side is named; and on a branch whose file shows nothing appended,
an entry its own commits appended that main holds byte for byte (git merged the two
identical files as one) is named too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from infx.changelog.check import DEFAULT_KEYS_SOURCE, CheckResult, check
from infx.changelog.diff import ChangelogDiff
from infx.changelog.links import LinkPolicy
from infx.changelog.model import Entry, Outcome, Violation
from infx.changelog.parse import split_entries
from infx.changelog.report import as_failure, render, summary_markdown
from infx.changelog.rules import Rule
from infx.changelog.text_rules import unresolved_conflicts
from infx.errors import InfxError


@dataclass(frozen=True)
class ConfigRules:
    """What the master configs tell the gate: the keys they define (read from `source`, the
    glob in force), for an entry why it selects no benchmark job (None: it selects some),
    and what the repository's InferenceX format refuses in an entry."""

    keys: Collection[str]
    source: str = DEFAULT_KEYS_SOURCE
    selects: Callable[[Entry], str | None] | None = None
    fits: Callable[[Entry], list[Violation]] | None = None


@dataclass(frozen=True)
class BranchCommit:
    """A commit of the branch that changed the changelog: its id, the file before and after."""

    commit: str
    before: bytes | None
    after: bytes | None


@dataclass(frozen=True)
class MergeFiles:
    """The changelog at the common ancestor of a merge in progress and on each side, named."""

    ancestor: bytes
    sides: list[tuple[bytes, str]]


@dataclass(frozen=True)
class GateFacts:
    """One gate run's inputs. `branch_commits` is read only when the file shows nothing
    appended; `merge` is set while a merge is in progress."""

    path: str
    base: bytes | None
    head: bytes | None
    policy: LinkPolicy | None
    merge: MergeFiles | None = None
    branch_commits: Callable[[], list[BranchCommit]] | None = None

    @property
    def changed(self) -> bool:
        """Whether there is anything to check against the master configs."""
        return self.head is not None and self.head != self.base


def gate(facts: GateFacts, rules: ConfigRules | None) -> CheckResult:
    """The verdict: unresolved conflict markers alone when there are any, else every rule,
    with the entries a merge in progress drops, or the branch's own entries a merge of two
    identical files took as main's."""
    conflicts = unresolved_conflicts(facts.head or b"", facts.path, facts.merge is not None)
    if conflicts:
        return CheckResult(ChangelogDiff("rejected"), facts.base, conflicts)
    result = check(
        facts.base,
        facts.head,
        facts.policy,
        rules.keys if rules is not None else None,
        keys_source=rules.source if rules is not None else DEFAULT_KEYS_SOURCE,
        selects=rules.selects if rules is not None else None,
        fits=rules.fits if rules is not None else None,
    )
    if facts.merge is not None and facts.head is not None:
        from infx.changelog.merge import dropped_entries  # only while a merge is in progress

        merge = facts.merge
        result.violations[:0] = dropped_entries(merge.ancestor, merge.sides, facts.head, facts.path)
    elif result.diff.kind == "unchanged" and facts.branch_commits is not None:
        result.violations += vanished_entries(facts.head or b"", facts.branch_commits())
    return result


def verdict(facts: GateFacts, rules: ConfigRules | None, fmt: str) -> Outcome:
    """The gate's verdict in the format asked for (text, json, github), with its step-summary
    section; exit 1 when a rule is broken."""
    result = gate(facts, rules)
    return Outcome(
        [render(fmt, facts.path, result)],
        exit_code=0 if result.ok else 1,
        summary=summary_markdown(facts.path, result),
    )


def unrunnable(fmt: str, path: str, error: InfxError) -> Outcome:
    """A gate that could not run: in text the error itself (one line, its exit code); in json
    or github said in that format, for the machine that reads it, with the same exit code."""
    if fmt == "text":
        raise error
    return Outcome([as_failure(fmt, path, str(error))], exit_code=error.exit_code)


def vanished_entries(history: bytes, commits: list[BranchCommit]) -> list[Violation]:
    """The entries the branch's own commits appended that main holds byte for byte, when
    the file shows nothing appended: git merges two identical files without asking the merge
    driver, so the branch's entry became main's and the branch has none of its own."""
    from infx.changelog.merge import strip_blank_tail

    held: dict[bytes, int] = {}
    for chunk in split_entries(history)[0]:
        held[strip_blank_tail(chunk.text)] = chunk.line
    found: dict[bytes, Violation] = {}
    for commit in commits:
        before, after = commit.before or b"", commit.after
        if after is None or not after.startswith(before):
            continue
        for chunk in split_entries(after[len(before) :])[0]:
            text = strip_blank_tail(chunk.text)
            line = held.get(text)
            if line is None or text in found:
                continue
            found[text] = Violation(
                line,
                Rule.MERGE,
                f"nothing is appended, but commit {commit.commit[:12]} of this branch appended "
                f"an entry that main holds byte for byte at line {line}: git merged the two "
                "identical files as one, so this branch's entry is main's now",
                "if main's entry is another PR's, append this change's own entry again, "
                "described in its own words; if it is this PR's, it has landed already",
            )
    return list(found.values())
