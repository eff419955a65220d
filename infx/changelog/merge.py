"""Three-way merge of perf-changelog.yaml: main's bytes, then the PR's new entries.

Both sides only append to their common ancestor, so a textual conflict at the
end of the file has one right answer: keep main exactly and add the PR's
entries that main does not hold yet, canonicalized and separated by one empty line.
"""

from __future__ import annotations

from typing import Any

from infx.changelog.canonicalize import canonicalize
from infx.changelog.diff import compare
from infx.changelog.links import LinkPolicy
from infx.changelog.parse import parse_region, split_entries
from infx.errors import ChangelogError


def _strip_blank_tail(text: bytes) -> bytes:
    lines = text.split(b"\n")
    while lines and not lines[-1].strip(b" "):
        lines.pop()
    return b"\n".join(lines) + b"\n"


def _identity(data: dict[str, Any], policy: LinkPolicy) -> str:
    """An entry's content with its link normalized, so a canonicalized copy matches its draft."""
    link = data.get("pr-link")
    if policy.pr is not None and policy.is_placeholder(link):
        link = policy.canonical(policy.pr)
    return repr(sorted({**data, "pr-link": link}.items()))


def merge(ancestor: bytes, main: bytes, pr: bytes, policy: LinkPolicy) -> bytes:
    """Main's bytes followed by the PR's appended entries main lacks (canonicalized when
    `policy.pr` is set). Raises ChangelogError when the PR side does more than append."""
    pr_diff = compare(ancestor, pr)
    if pr_diff.kind == "unchanged":
        return main
    if pr_diff.kind != "append":
        raise ChangelogError(
            "the PR side of perf-changelog.yaml does more than append entries; "
            "resolve this conflict by hand"
        )
    pr_entries, problems = parse_region(pr_diff.appended)
    if problems:
        raise ChangelogError(f"the PR's appended entries are invalid: {problems[0].text()}")
    main_diff = compare(ancestor, main)
    held_region = main_diff.appended if main_diff.kind == "append" else main
    held_entries, _ = parse_region(held_region)
    held = {_identity(e.data, policy) for e in held_entries}

    chunks, _ = split_entries(pr_diff.appended)
    new_text = [
        _strip_blank_tail(chunk.text)
        for chunk, entry in zip(chunks, pr_entries, strict=True)
        if _identity(entry.data, policy) not in held
    ]
    if not new_text:
        return main
    prefix = main if main.endswith(b"\n") or not main else main + b"\n"
    merged = prefix + b"".join(
        (b"\n" if prefix or i else b"") + text for i, text in enumerate(new_text)
    )
    if policy.pr is None:
        return merged
    rewritten, _, _ = canonicalize(prefix, merged, policy)
    return rewritten
