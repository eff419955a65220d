"""The changelog gate: every rule an edit of perf-changelog.yaml must pass, on bytes alone."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from infx.changelog.diff import (
    ChangelogDiff,
    Correction,
    compare,
    editor_saved,
    separator_violations,
)
from infx.changelog.links import LinkPolicy
from infx.changelog.model import Entry, Violation, summarized
from infx.changelog.parse import parse_region
from infx.changelog.rules import Rule
from infx.changelog.text_rules import (
    MAX_CHECKED_BYTES,
    byte_violations,
    ending_violations,
    size_violation,
)

DEFAULT_KEYS_SOURCE = "configs/*-master.yaml"


@dataclass
class CheckResult:
    """The verdict. Lines of `entries` are file lines once `offset` is added."""

    diff: ChangelogDiff
    base: bytes | None
    violations: list[Violation] = field(default_factory=list)
    region_entries: list[Entry] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @cached_property
    def offset(self) -> int:
        """Lines of history before the appended region; counted only when someone asks."""
        return self.base.count(b"\n") if self.base else 0

    @cached_property
    def entries(self) -> list[Entry]:
        return [e.shifted(self.offset) for e in self.region_entries]

    @property
    def corrections(self) -> list[Correction]:
        return self.diff.corrections


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`*` matches any run of characters; everything else is literal; the whole key must match."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.S)


def resolve_keys(pattern: str, keys: Iterable[str]) -> list[str]:
    if "*" not in pattern:
        return [pattern] if pattern in keys else []
    regex = compile_pattern(pattern)
    return [k for k in keys if regex.fullmatch(k)]


def key_violations(
    entry: Entry, keys: Collection[str], source: str = DEFAULT_KEYS_SOURCE
) -> list[Violation]:
    """Unknown keys and wildcards that match nothing; `source` names where keys were read."""
    found = []
    for index, pattern in enumerate(entry.data.get("config-keys") or []):
        if not isinstance(pattern, str) or resolve_keys(pattern, keys):
            continue
        line = entry.item_line("config-keys", index)
        if "*" in pattern:
            found.append(
                Violation(
                    line,
                    Rule.CONFIG_KEYS,
                    f"wildcard {pattern!r} matches no master config key ({source})",
                    f"correct the pattern so that it matches a key defined in {source}",
                )
            )
            continue
        import difflib  # only for a key that matches nothing

        close = difflib.get_close_matches(pattern, list(keys), n=1, cutoff=0.6)
        fix = f"did you mean {close[0]!r}?" if close else f"add the config to {source}"
        found.append(
            Violation(
                line,
                Rule.CONFIG_KEYS,
                f"{pattern!r} is not defined in any master config ({source})",
                fix,
            )
        )
    return found


def link_violation(entry: Entry, policy: LinkPolicy) -> Violation | None:
    value = entry.pr_link
    if not isinstance(value, str) or policy.accepts(value):
        return None
    forms = " or ".join(policy.accepted_forms())
    reason = policy.situation()
    return Violation(
        entry.line_of("pr-link"),
        Rule.PR_LINK,
        f"{value!r} is not accepted ({reason})",
        f"use {forms}",
    )


def spread_link_violation(entry: Entry) -> Violation | None:
    """A pr-link that is not one plain or quoted scalar on its key's line: canonicalize,
    the merge driver and `fix` splice the value on that line, so nothing else may hold it."""
    if "pr-link" not in entry.data or "pr-link" in entry.inline:
        return None
    line = entry.line_of("pr-link")
    where = (
        "its value starts on the line below the key"
        if entry.value_pos.get("pr-link", (line, 0))[0] != line
        else "its value goes on past this line (a block scalar '|' or '>', or a continued value)"
    )
    return Violation(
        line,
        Rule.PR_LINK,
        f"the pr-link must be one value on the pr-link line; {where}",
        "write `pr-link: XXX` on one line",
    )


def selection_violations(
    entry: Entry, selects: Callable[[Entry], str | None], problems: list[Violation]
) -> list[Violation]:
    """The entry selects no job, and why; asked only of an entry that reads as valid."""
    end = entry.line + entry.text.count(b"\n")
    if any(v.line is not None and entry.line <= v.line < end for v in problems):
        return []
    why = selects(entry)
    if why is None:
        return []
    return [
        Violation(
            entry.line,
            Rule.SELECTION,
            f"this entry selects no benchmark job: {why}",
            "select a config and scenario that run, or drop the flag that rules them out",
        )
    ]


# A block scalar header that keeps trailing blank lines: `|+`, `>+`, `|2+`, `>+2`.
_KEEP_HEADER = re.compile(rb"(?:^|[ :-])[|>](?:[1-9]\+|\+[1-9]?) *(?:#.*)?$", re.M)


def keep_violations(entry: Entry) -> list[Violation]:
    """A value that keeps trailing blank lines would swallow the empty line before the next
    entry: a later append would change it while history stays a byte prefix."""
    found = _KEEP_HEADER.search(entry.text)
    if found is None:
        return []
    return [
        Violation(
            entry.line + entry.text.count(b"\n", 0, found.start() + 1),
            Rule.YAML,
            "a block scalar that keeps trailing blank lines ('+') would take in the empty "
            "line before the next entry",
            "use '|' or '|-' (or '>' / '>-')",
        )
    ]


def correction_violations(corrections: list[Correction], policy: LinkPolicy) -> list[Violation]:
    return [
        Violation(
            c.line,
            Rule.PR_LINK_CORRECTION,
            f"a corrected pr-link must be a canonical link, found {c.new!r}",
            f"use {policy.base}<number>",
        )
        for c in corrections
        if not policy.is_canonical(c.new)
    ]


def check(
    base: bytes | None,
    head: bytes | None,
    policy: LinkPolicy | None,
    config_keys: Collection[str] | None = None,
    *,
    keys_source: str = DEFAULT_KEYS_SOURCE,
    selects: Callable[[Entry], str | None] | None = None,
    fits: Callable[[Entry], list[Violation]] | None = None,
) -> CheckResult:
    """Check the change from `base` to `head`.

    `policy=None` skips the pr-link rules and `config_keys=None` skips key resolution,
    for callers that check those themselves or cannot know them. `keys_source` names
    where `config_keys` came from (the glob in force), for the messages. `selects`, given
    an appended entry that breaks no other rule, says why it selects no benchmark job
    (None: it selects some); the planner answers it, so the gate stays free of it. `fits`
    names what the repository's InferenceX format refuses in an appended entry.
    """
    if head is None:
        diff = ChangelogDiff("rejected")
        return CheckResult(
            diff,
            base,
            [
                Violation(
                    None,
                    Rule.MISSING,
                    "the changelog file is missing",
                    "restore perf-changelog.yaml",
                )
            ],
        )
    diff = compare(base, head)
    if diff.kind == "rejected":
        saved = editor_saved(base, head)
        if saved is not None:
            result = check(
                base,
                saved.restored,
                policy,
                config_keys,
                keys_source=keys_source,
                selects=selects,
                fits=fits,
            )
            result.violations.insert(
                0,
                Violation(
                    1,
                    Rule.CHARACTERS,
                    f"the file was saved with {saved.what()}; history is otherwise unchanged",
                    "save it as UTF-8 without a byte-order mark, with LF line endings "
                    "(infx changelog fix does it)"
                    if saved.bom
                    else "save it with LF line endings (infx changelog fix does it)",
                ),
            )
            return result
    result = CheckResult(diff, base)
    if diff.kind == "unchanged":
        return result
    if diff.kind in ("rejected", "correction"):
        result.violations = list(diff.violations)
        if policy is not None:
            result.violations += correction_violations(diff.corrections, policy)
        return result

    region = diff.appended
    if len(region) > MAX_CHECKED_BYTES:
        result.violations = [size_violation(len(region), "the appended text")]
        return result
    found = byte_violations(region)
    if b"\r\n" in region:
        region = region.replace(b"\r\n", b"\n")
    found += separator_violations(base or b"", region)
    if not any(v.rule == Rule.ENCODING for v in found):
        entries, problems = parse_region(region)
        found.extend(problems)
        result.region_entries = entries
        if not entries and not problems:
            found.append(
                Violation(
                    1,
                    Rule.ENTRIES,
                    "the appended text holds no entry",
                    "append an entry that starts with '- config-keys:'",
                )
            )
        for entry in entries:
            bad_link = spread_link_violation(entry)
            if bad_link is None and policy is not None:
                bad_link = link_violation(entry, policy)
            if bad_link:
                found.append(bad_link)
            found.extend(keep_violations(entry))
            unknown = (
                key_violations(entry, config_keys, keys_source) if config_keys is not None else []
            )
            found.extend(unknown)
            refused = fits(entry) if fits is not None else []
            found.extend(refused)
            if selects is not None and not unknown and not refused:
                found.extend(selection_violations(entry, selects, problems))
    if found:
        seen: set[tuple[int | None, str]] = set()
        unique = []
        for v in sorted(found, key=lambda v: (v.line or 0, v.rule)):
            if (v.line, v.message) not in seen:
                seen.add((v.line, v.message))
                unique.append(v.shifted(result.offset))
        found = summarized(unique)
    result.violations = found + ending_violations(head)
    return result
