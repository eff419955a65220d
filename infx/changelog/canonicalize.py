"""Rewrite placeholder pr-links of appended entries into the PR's canonical link.

Only the placeholder scalar itself is replaced; every other byte, history and
the rest of each line included, stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from infx.changelog.check import CheckResult, check
from infx.changelog.links import LinkPolicy
from infx.changelog.model import Entry
from infx.errors import ChangelogError, UsageError


@dataclass(frozen=True)
class Rewrite:
    line: int
    old: str
    new: str


def _scalar_span(line: bytes, col: int) -> tuple[int, int]:
    """Byte span of the scalar token starting at `col` (quoted or plain, comments excluded)."""
    start = len(line[:col].decode("utf-8", "replace").encode("utf-8"))
    quote = line[start : start + 1]
    if quote in (b'"', b"'"):
        end = line.find(quote, start + 1)
        return start, (end + 1 if end != -1 else len(line))
    end = line.find(b" #", start)
    end = len(line) if end == -1 else end
    return start, len(line[:end].rstrip(b" "))


def rewrite_region(
    region: bytes,
    entries: list[Entry],
    policy: LinkPolicy,
) -> tuple[bytes, list[Rewrite]]:
    """Replace placeholders in `region`; entry positions are region-relative."""
    if policy.pr is None:
        raise UsageError("canonicalizing needs the PR number")
    link = policy.canonical(policy.pr).encode()
    lines = region.split(b"\n")
    done = []
    for entry in entries:
        if not policy.is_placeholder(entry.pr_link):
            continue
        line_no, col = entry.value_pos["pr-link"]
        text = lines[line_no - 1]
        start, end = _scalar_span(text, col)
        lines[line_no - 1] = text[:start] + link + text[end:]
        done.append(Rewrite(line_no, str(entry.pr_link), link.decode()))
    return b"\n".join(lines), done


def canonicalize(
    base: bytes | None,
    head: bytes,
    policy: LinkPolicy,
) -> tuple[bytes, list[Rewrite], CheckResult]:
    """The head bytes with placeholders rewritten; refuses a diff that breaks a rule."""
    result = check(base, head, policy)
    if not result.ok:
        raise ChangelogError(
            "the changelog diff breaks the rules; nothing was rewritten:\n"
            + "\n".join(f"  line {v.line}: {v.text()}" for v in result.violations)
        )
    if result.diff.kind != "append":
        return head, [], result
    new_region, rewrites = rewrite_region(result.diff.appended, result.region_entries, policy)
    offset = result.offset
    shifted = [Rewrite(r.line + offset, r.old, r.new) for r in rewrites]
    return head[: result.diff.base_len] + new_region, shifted, result
