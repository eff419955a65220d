"""Rewrite placeholder pr-links of appended entries into the PR's canonical link.

Only the placeholder scalar itself is replaced; every other byte, history and
the rest of each line included, stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from infx.changelog.check import CheckResult, check
from infx.changelog.links import LinkPolicy
from infx.changelog.model import Entry
from infx.changelog.parse import parse_region
from infx.errors import ChangelogError, InternalError


@dataclass(frozen=True)
class Rewrite:
    line: int
    old: str
    new: str


def _scalar_span(line: bytes, start: int) -> tuple[int, int]:
    """Byte span of the scalar token starting at byte `start` (quoted or plain, comments
    excluded)."""
    quote = line[start : start + 1]
    if quote in (b'"', b"'"):
        end = line.find(quote, start + 1)
        return start, (end + 1 if end != -1 else len(line))
    end = line.find(b" #", start)
    end = len(line) if end == -1 else end
    return start, len(line[:end].rstrip(b" "))


def rewrite_links(
    region: bytes, entries: list[Entry], new_link: Callable[[object], str | None]
) -> tuple[bytes, list[Rewrite]]:
    """Replace the pr-link scalar of each entry for which `new_link` names a replacement;
    entry positions are region-relative. Every other byte stays. Only a value written whole
    on the pr-link line is spliced; the result is read back and refused (ChangelogError)
    unless it holds the same entries reading the same, but for the new links."""
    lines = region.split(b"\n")
    done = []
    expected = []
    for entry in entries:
        link = new_link(entry.pr_link)
        expected.append(entry.pr_link)
        if link is None or "pr-link" not in entry.inline:
            continue
        line_no, offset = entry.value_pos["pr-link"]
        text = lines[line_no - 1]
        start, end = _scalar_span(text, offset)
        rest = text[end:]
        # A comment may touch a closing quote (`"XXX"#draft`); after a plain link it would
        # become part of the value, so it moves one space away.
        gap = b" " if rest[:1] == b"#" else b""
        lines[line_no - 1] = text[:start] + link.encode() + gap + rest
        done.append(Rewrite(line_no, str(entry.pr_link), link))
        expected[-1] = link
    if not done:
        return region, []
    rewritten = b"\n".join(lines)
    same_entries(entries, rewritten, expected)
    return rewritten, done


def same_entries(before: list[Entry], after: bytes, links: list[object]) -> None:
    """Refuse to write `after` unless it parses to `before`'s entries, in order, each reading
    the same but for its pr-link, which reads `links[i]` on one line."""
    entries, _ = parse_region(after)
    if len(entries) != len(before):
        raise ChangelogError(
            f"nothing was written: the rewritten text would hold {len(entries)} entries "
            f"instead of {len(before)}"
        )
    for old, new, link in zip(before, entries, links, strict=True):
        if (
            old.content() != new.content()
            or new.pr_link != link
            or ("pr-link" in old.inline and "pr-link" not in new.inline)
        ):
            raise ChangelogError(
                f"nothing was written: the entry at line {new.line} of the appended text "
                "would read differently after the rewrite, not just its pr-link"
            )


def rewrite_region(
    region: bytes,
    entries: list[Entry],
    policy: LinkPolicy,
) -> tuple[bytes, list[Rewrite]]:
    """Replace placeholders in `region` with the PR's canonical link."""
    if policy.pr is None:
        raise InternalError("internal error: canonicalizing needs the PR number")
    link = policy.canonical(policy.pr)
    return rewrite_links(region, entries, lambda v: link if policy.is_placeholder(v) else None)


def _linked_at(history: bytes, link: str) -> int | None:
    """The first line of `history` whose pr-link is `link` (quoted, on the line below, or
    followed by a path such as `/changes`, too), or None."""
    found = re.search(
        rb"^  pr-link: *(?:\n {3,})?['\"]?" + re.escape(link.encode()) + rb"(?![0-9])",
        history,
        re.M,
    )
    return history.count(b"\n", 0, found.start()) + 1 if found else None


def canonicalize(
    base: bytes | None,
    head: bytes,
    policy: LinkPolicy,
    *,
    base_may_link: bool = False,
) -> tuple[bytes, list[Rewrite], CheckResult]:
    """The head bytes with placeholders rewritten; refuses a diff that breaks a rule, and a
    PR number the base already links (a PR lands once) unless `base_may_link` (a rebase
    step, whose base holds the PR's own commits replayed)."""
    result = check(base, head, policy)
    if not result.ok:
        raise ChangelogError(
            "the changelog diff breaks the rules; nothing was rewritten:\n"
            + "\n".join(f"  {v.located()}" for v in result.violations)
        )
    if result.diff.kind != "append":
        return head, [], result
    new_region, rewrites = rewrite_region(result.diff.appended, result.region_entries, policy)
    landed = (
        _linked_at(base, policy.canonical(policy.pr))
        if rewrites and base and not base_may_link and policy.pr is not None
        else None
    )
    if landed is not None:
        raise ChangelogError(
            f"nothing was rewritten: history already links PR #{policy.pr} at line {landed}; a "
            f"pull request lands once, so #{policy.pr} is not the number of this change"
        )
    offset = result.offset
    shifted = [Rewrite(r.line + offset, r.old, r.new) for r in rewrites]
    rewritten = head[: result.diff.base_len] + new_region
    after = check(base, rewritten, policy)
    if not after.ok:
        raise ChangelogError(
            "nothing was rewritten: the result would break the rules:\n"
            + "\n".join(f"  {v.located()}" for v in after.violations)
        )
    return rewritten, shifted, result
