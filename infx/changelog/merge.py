"""Three-way merge of perf-changelog.yaml: main's bytes, then the PR's new entries.

Both sides append to their common ancestor, so a textual conflict at the end of
the file has one right answer: keep main exactly and add the PR's entries that
main does not hold yet, canonicalized and separated by one empty line. Main's
side is taken as it is, whatever it did to history (it passed the gate when it
landed); the PR's side must be the ancestor plus whole new entries that pass
the gate, or there is no automatic answer and the merge must conflict.
"""

from __future__ import annotations

from typing import Any, Literal

from infx.changelog.canonicalize import canonicalize
from infx.changelog.check import check
from infx.changelog.diff import blank_lines_at_end, compare
from infx.changelog.links import LinkPolicy
from infx.changelog.parse import parse_region, split_entries
from infx.errors import ChangelogError

MainSide = Literal["ours", "theirs"]


def _strip_blank_tail(text: bytes) -> bytes:
    lines = text.split(b"\n")
    while lines and not lines[-1].strip(b" "):
        lines.pop()
    return b"\n".join(lines) + b"\n"


def _identity(data: dict[str, Any], policy: LinkPolicy | None) -> str:
    """An entry's content with its link normalized, so a canonicalized copy matches its draft."""
    link = data.get("pr-link")
    if policy is not None and policy.pr is not None and policy.is_placeholder(link):
        link = policy.canonical(policy.pr)
    return repr(sorted({**data, "pr-link": link}.items()))


def merge(ancestor: bytes, main: bytes, pr: bytes, policy: LinkPolicy | None) -> bytes:
    """Main's bytes followed by the PR's appended entries main lacks (canonicalized when
    `policy` names the PR). Raises ChangelogError when the PR side does more than append
    whole, valid entries."""
    pr_result = check(ancestor, pr, None)
    if pr_result.diff.kind == "unchanged":
        return main
    if pr_result.diff.kind != "append":
        why = pr_result.violations[0].text() if pr_result.violations else "it corrects pr-links"
        raise ChangelogError(
            f"the PR side of perf-changelog.yaml does more than append entries ({why}); "
            "resolve this conflict by hand"
        )
    if not pr_result.ok:
        first = pr_result.violations[0]
        raise ChangelogError(
            "the PR side of perf-changelog.yaml is not its base plus whole new entries "
            f"(line {first.line or 1}: {first.text()}); resolve this conflict by hand"
        )
    main_diff = compare(ancestor, main)
    held_region = main_diff.appended if main_diff.kind == "append" else main
    held_entries, _ = parse_region(held_region)
    held = {_identity(e.data, policy) for e in held_entries}

    chunks, _ = split_entries(pr_result.diff.appended)
    new_text = [
        _strip_blank_tail(chunk.text)
        for chunk, entry in zip(chunks, pr_result.region_entries, strict=True)
        if _identity(entry.data, policy) not in held
    ]
    if not new_text:
        return main
    prefix = main if main.endswith(b"\n") or not main else main + b"\n"
    first_gap = b"\n" if prefix and not blank_lines_at_end(prefix) else b""
    merged = prefix + b"".join(
        (b"\n" if i else first_gap) + text for i, text in enumerate(new_text)
    )
    if policy is None or policy.pr is None:
        return merged
    rewritten, _, _ = canonicalize(prefix, merged, policy)
    return rewritten


def resolve(
    ancestor: bytes, ours: bytes, theirs: bytes, main_side: MainSide, policy: LinkPolicy | None
) -> bytes:
    """The resolution of a conflicted perf-changelog.yaml from git's three sides, where
    `main_side` says which of ours/theirs is main. Every resolver (the resolve-conflict
    command, the merge driver, the merge helper) goes through here."""
    main, pr = (theirs, ours) if main_side == "theirs" else (ours, theirs)
    return merge(ancestor, main, pr, policy)


def conflict_text(ours: bytes, theirs: bytes, labels: tuple[str, str]) -> bytes:
    """Both sides in full between conflict markers, with the lines they share kept outside,
    for a refusal where a line merge would leave no marker."""
    a, b = ours.splitlines(keepends=True), theirs.splitlines(keepends=True)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1

    def middle(lines: list[bytes]) -> bytes:
        text = b"".join(lines[start : len(lines) - end])
        return text if not text or text.endswith(b"\n") else text + b"\n"

    return (
        b"".join(a[:start])
        + f"<<<<<<< {labels[0]}\n".encode()
        + middle(a)
        + b"=======\n"
        + middle(b)
        + f">>>>>>> {labels[1]}\n".encode()
        + b"".join(a[len(a) - end :] if end else [])
    )
