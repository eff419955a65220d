"""Three-way merge of perf-changelog.yaml: main's bytes, then the PR's new entries.

Both sides append to their common ancestor, so a textual conflict at the end of
the file has one right answer: keep main exactly and add the PR's entries that
main does not hold yet, canonicalized and separated by one empty line. Main's
side is taken as it is, whatever it did to history (it passed the gate when it
landed); the PR's side must be the ancestor plus whole new entries that pass
the gate, or there is no automatic answer and the merge must conflict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

from infx.changelog.canonicalize import canonicalize, rewrite_links, same_entries
from infx.changelog.check import check
from infx.changelog.diff import Correction, blank_lines_at_end, compare
from infx.changelog.links import LinkPolicy
from infx.changelog.model import Entry, Violation
from infx.changelog.parse import Chunk, parse_chunk, parse_region, split_entries
from infx.changelog.rules import Rule
from infx.errors import ChangelogError

MainSide = Literal["ours", "theirs"]


def strip_blank_tail(text: bytes) -> bytes:
    lines = text.split(b"\n")
    while lines and not lines[-1].strip(b" "):
        lines.pop()
    return b"\n".join(lines) + b"\n"


def _landed_copy(
    pr_text: bytes, pr_entry: Entry, main_text: bytes, policy: LinkPolicy | None
) -> bool:
    """Whether main's entry is this PR's entry already merged: main's copy carries this PR's
    own canonical link and is, byte for byte, the PR's entry with that link."""
    if policy is None or policy.pr is None:
        return False
    link = policy.canonical(policy.pr)
    main_entries, _ = parse_region(main_text)
    if len(main_entries) != 1 or main_entries[0].pr_link != link:
        return False
    own, _ = rewrite_links(
        pr_text,
        [pr_entry.shifted(1 - pr_entry.line)],
        lambda v: link if policy.is_placeholder(v) else None,
    )
    return strip_blank_tail(own) == strip_blank_tail(main_text)


def _but_link(chunk: Chunk, entry: Entry) -> bytes:
    """An entry's text with its pr-link line blanked: equal for an entry and its
    canonicalized copy."""
    lines = strip_blank_tail(chunk.text).split(b"\n")
    if "pr-link" in entry.key_lines:
        lines[entry.line_of("pr-link") - entry.line] = b""
    return b"\n".join(lines)


def _same_text(a: tuple[Chunk, Entry], b: tuple[Chunk, Entry]) -> bool:
    return strip_blank_tail(a[0].text) == strip_blank_tail(b[0].text)


def _same_but_link(a: tuple[Chunk, Entry], b: tuple[Chunk, Entry]) -> bool:
    return a[1].content() == b[1].content() and _but_link(*a) == _but_link(*b)


def _same_content(a: tuple[Chunk, Entry], b: tuple[Chunk, Entry]) -> bool:
    return a[1].content() == b[1].content()


def _new_since(ancestor: bytes, side: bytes, link: str | None = None) -> list[tuple[Chunk, Entry]]:
    """The entries `side` holds beyond the ancestor's, with their text, in the side's order.

    Each of the ancestor's entries accounts for one of the side's, found by the same text,
    else the same text but for the pr-link value (its canonicalized copy), else what it
    reads; among several, the one whose link is `link` (this PR's), else the last. So an
    entry of the ancestor that the side holds with its link canonicalized, or after main's
    newer ones (a rebase replays a PR's second commit onto main and its first), is not
    new; one the side added that reads like an older one is.
    """
    old = split_entries(ancestor)[0]
    unmatched = Counter(strip_blank_tail(chunk.text) for chunk in old)
    fresh = []
    for chunk in split_entries(side)[0]:
        key = strip_blank_tail(chunk.text)
        if unmatched[key] > 0:
            unmatched[key] -= 1
        else:
            fresh.append(chunk)
    left = []
    for chunk in old:
        key = strip_blank_tail(chunk.text)
        if unmatched[key] > 0:
            unmatched[key] -= 1
            entry, _ = parse_chunk(chunk)
            if entry is not None:
                left.append((chunk, entry))
    found = [(chunk, entry) for chunk in fresh if (entry := parse_chunk(chunk)[0]) is not None]
    for same in (_same_but_link, _same_content):
        rest = []
        for old_one in left:
            matches = [i for i, new in enumerate(found) if same(new, old_one)]
            if not matches:
                rest.append(old_one)
                continue
            del found[next((i for i in matches if found[i][1].pr_link == link), matches[-1])]
        left = rest
    return found


def _corrected(ancestor: bytes, main: bytes, pr: bytes, corrections: list[Correction]) -> bytes:
    """The PR's corrected history, then main's new entries: the answer when the PR side
    only corrects pr-links and main only appended. Read back: from main's side, the result
    is exactly the PR's corrections."""
    merged = pr + main[len(ancestor) :] if main.startswith(ancestor) else None
    after = compare(main, merged) if merged is not None else None
    if (
        merged is None
        or after is None
        or after.kind != "correction"
        or [(c.old, c.new) for c in after.corrections] != [(c.old, c.new) for c in corrections]
    ):
        raise ChangelogError(
            "the PR side of perf-changelog.yaml corrects pr-links and main changed more than "
            "its end; resolve this conflict by hand"
        )
    return merged


def merge(ancestor: bytes, main: bytes, pr: bytes, policy: LinkPolicy | None) -> bytes:
    """Main's bytes followed by the PR's appended entries main lacks (canonicalized when
    `policy` names the PR). Raises ChangelogError when the PR side does more than append
    whole, valid entries."""
    pr_result = check(ancestor, pr, None)
    if pr_result.diff.kind == "unchanged":
        return main
    if pr_result.diff.kind == "correction" and pr_result.ok:
        return _corrected(ancestor, main, pr, pr_result.diff.corrections)
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
    own = policy.canonical(policy.pr) if policy is not None and policy.pr is not None else None
    held = _new_since(ancestor, main, own)
    chunks, _ = split_entries(pr_result.diff.appended)
    new_text = []
    kept = []
    for chunk, entry in zip(chunks, pr_result.region_entries, strict=True):
        same = [(c, e) for c, e in held if e.content() == entry.content()]
        copy = next((c for c, _ in same if _landed_copy(chunk.text, entry, c.text, policy)), None)
        if copy is not None:
            # Each of main's copies stands for one of the PR's entries, not for every alike.
            held = [(c, e) for c, e in held if c is not copy]
            continue
        if same:
            where = pr_result.offset + chunk.line
            raise ChangelogError(
                f"main already holds an entry that reads the same as the PR's entry at line "
                f"{where} (pr-link {same[0][1].pr_link!r}); another PR's entry is never a "
                "reason to drop this one: resolve this conflict by hand"
            )
        new_text.append(strip_blank_tail(chunk.text))
        kept.append(entry)
    if not new_text:
        return main
    prefix = main if main.endswith(b"\n") or not main else main + b"\n"
    first_gap = b"\n" if prefix and not blank_lines_at_end(prefix) else b""
    merged = prefix + b"".join(
        (b"\n" if i else first_gap) + text for i, text in enumerate(new_text)
    )
    # What is about to be written reads as both sides did: main's last entry unchanged by
    # what follows it, then the PR's entries exactly as they read on its side.
    main_chunks, _ = split_entries(prefix)
    last = parse_chunk(main_chunks[-1])[0] if main_chunks else None
    lead = [last] if last is not None else []
    tail = (main_chunks[-1].text if lead else b"") + merged[len(prefix) :]
    before = [*lead, *kept]
    same_entries(before, tail, [e.pr_link for e in before])
    if policy is None or policy.pr is None:
        return merged
    # In a rebase, main's side holds this PR's earlier commits, replayed and canonicalized.
    rewritten, _, _ = canonicalize(prefix, merged, policy, base_may_link=True)
    return rewritten


def dropped_entries(
    ancestor: bytes,
    sides: list[tuple[bytes, str]],
    result: bytes,
    path: str = "perf-changelog.yaml",
) -> list[Violation]:
    """The entries each side (its bytes and its name) added since `ancestor` that a merge
    `result` (the file at `path`) no longer holds. Each entry of the result stands for one
    entry of one side, found by the same text, else the same text but for its link (it was
    canonicalized meanwhile), else what it reads: two alike entries need two in the
    result."""
    held = _new_since(ancestor, result)
    added = [(name, found) for data, name in sides for found in _new_since(ancestor, data)]
    for same in (_same_text, _same_but_link, _same_content):
        missing = []
        for name, found in added:
            match = next((i for i, kept in enumerate(held) if same(found, kept)), None)
            if match is None:
                missing.append((name, found))
            else:
                del held[match]
        added = missing
    return [
        Violation(
            None,
            Rule.MERGE,
            f"this merge drops the entry {name} added at its line {chunk.line}",
            f"bring both sides back with `git checkout --merge -- {path}`, "
            "then run `infx changelog resolve-conflict`",
        )
        for name, (chunk, _) in added
    ]


def main_by_content(
    ancestor: bytes, ours: bytes, theirs: bytes, mains: Iterable[bytes]
) -> MainSide | None:
    """Which side is main's by main's history (`mains`: the file at main's tips), None when
    that does not tell: the one side whose new entries include one of main's, byte for
    byte (a stash popped onto a branch that took main's entry, a cherry-pick onto main's
    tip, a branch merging one that holds main's newer entries)."""
    held = {strip_blank_tail(chunk.text) for text in mains for chunk in split_entries(text)[0]}
    if not held:
        return None
    found = [
        any(strip_blank_tail(chunk.text) in held for chunk, _ in _new_since(ancestor, side))
        for side in (ours, theirs)
    ]
    if found == [True, False]:
        return "ours"
    if found == [False, True]:
        return "theirs"
    return None


def takes_back(ancestor: bytes, side: bytes) -> bool:
    """Whether `side` is the ancestor without the entries the ancestor appended last: what
    `git revert` of a commit that appended entries hands a merge driver as "theirs"."""
    return side != ancestor and compare(side, ancestor).kind == "append"


def resolve(
    ancestor: bytes, ours: bytes, theirs: bytes, main_side: MainSide, policy: LinkPolicy | None
) -> bytes:
    """The resolution of a conflicted perf-changelog.yaml from git's three sides, where
    `main_side` says which of ours/theirs is main. Every resolver (the resolve-conflict
    command, the merge driver, the merge helper) goes through here."""
    main, pr = (theirs, ours) if main_side == "theirs" else (ours, theirs)
    return merge(ancestor, main, pr, policy)


def conflict_text(
    ours: bytes, theirs: bytes, labels: tuple[str, str], marker_size: int = 7
) -> bytes:
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
        + f"{'<' * marker_size} {labels[0]}\n".encode()
        + middle(a)
        + b"=" * marker_size
        + b"\n"
        + middle(b)
        + f"{'>' * marker_size} {labels[1]}\n".encode()
        + b"".join(a[len(a) - end :] if end else [])
    )
