"""Properties of the merge resolver and the link rewrite over generated entries: nothing
lost, nothing doubled, main first, and no byte changed but a placeholder's."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infx.changelog.canonicalize import canonicalize
from infx.changelog.check import check
from infx.changelog.links import LinkPolicy
from infx.changelog.merge import dropped_entries, merge
from infx.changelog.new import quote
from infx.changelog.parse import parse_region, split_entries
from infx.errors import ChangelogError
from tests.conftest import HISTORY, LINK, REPO

PR = 9
POLICY = LinkPolicy(repo=REPO, pr=PR)
MAIN = LinkPolicy(repo=REPO)
BASE = HISTORY.encode()

words = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20
).filter(lambda s: s.strip() == s)
# Every spelling of a PR's link the gate accepts on the pr-link line, comments included.
PR_LINKS = [
    "XXX",
    "'XXX'",
    '"XXX"',
    f"{LINK}XXX",
    f"'{LINK}XXX'",
    f"{LINK}{PR}",
    '"XXX"#draft',
    "XXX # to do",
    f"'{LINK}XXX'   # c",
    "  XXX",
]
main_links = st.integers(100, 200).map(lambda n: f"{LINK}{n}")


@st.composite
def entries(draw, links: st.SearchStrategy[str]) -> str:
    """An entry as people write them: keys in either order, a trailing comment line or
    flag, trailing spaces, any Unicode in the descriptions."""
    keys = draw(
        st.lists(
            st.sampled_from(["llama-fp8-mi355x-vllm", "llama-fp8-mi355x-sglang", "llama-*"]),
            min_size=1,
            max_size=2,
        )
    )
    description = [
        "  description:",
        *(f"    - {quote(d)}" for d in draw(st.lists(words, min_size=1, max_size=2))),
    ]
    link = [f"  pr-link: {draw(links)}"]
    extra = draw(st.sampled_from([[], ["  evals-only: false"], ["# a comment"]]))
    body = description + link if draw(st.booleans()) else link + description
    lines = ["- config-keys:", *(f"    - {k}" for k in keys), *body, *extra]
    if draw(st.booleans()):
        lines = [line + "  " if line.startswith("    ") else line for line in lines]
    return "\n".join(lines) + "\n"


def appended(base: bytes, texts: list[str]) -> bytes:
    return base + "".join("\n" + t for t in texts).encode()


def read(data: bytes) -> list[dict]:
    found, problems = parse_region(data)
    assert not problems, problems
    return [e.data for e in found]


def landed(text: str) -> dict:
    (data,) = read(text.encode())
    if POLICY.is_placeholder(data["pr-link"]):
        data["pr-link"] = f"{LINK}{PR}"
    return data


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    mains=st.lists(entries(main_links), max_size=3),
    prs=st.lists(entries(st.sampled_from(PR_LINKS)), min_size=1, max_size=3),
    first=st.integers(0, 3),
)
def test_a_merge_holds_every_entry_of_both_sides_once_mains_first(
    mains: list[str], prs: list[str], first: int
) -> None:
    """Main appended `mains`, the PR `prs`. With `first` > 0 the merge is a rebase step:
    the PR's first entries were replayed onto main already (canonicalized), and the
    ancestor is the PR's commit that holds them. The result is main's bytes, then the PR's
    entries not yet on main, each exactly once, canonicalized; or, when one of them reads
    as one main appended, a refusal (never a drop)."""
    done = prs[: min(first, len(prs) - 1)]
    ancestor = appended(BASE, done)
    main_alone = appended(BASE, mains)
    main = canonicalize(main_alone, appended(main_alone, done), POLICY)[0]
    pr = appended(BASE, prs)
    assert check(BASE, main_alone, MAIN).ok
    assert check(BASE, pr, POLICY).ok
    main_read = read(main[len(BASE) :])
    new = prs[len(done) :]
    clash = any(
        {k: v for k, v in landed(t).items() if k != "pr-link"}
        == {k: v for k, v in m.items() if k != "pr-link"}
        for t in new
        for m in read(appended(b"", mains))
    )
    try:
        result = merge(ancestor, main, pr, POLICY)
    except ChangelogError:
        assert clash
        return
    assert not clash
    assert result.startswith(main)
    assert read(result[len(BASE) :]) == main_read + [landed(t) for t in new]
    assert check(main, result, POLICY).ok


PLACEHOLDER_TOKEN = re.compile(rb"""(['"]?)(?:XXX|""" + re.escape(f"{LINK}XXX".encode()) + rb")\1")


@settings(max_examples=150, deadline=None)
@given(prs=st.lists(entries(st.sampled_from(PR_LINKS)), min_size=1, max_size=3))
def test_canonicalize_changes_no_byte_but_a_placeholders(prs: list[str]) -> None:
    """Line by line, the rewritten file is the old one with each placeholder token (quotes
    included) replaced by the link, and a comment that touched it moved one space away."""
    head = appended(BASE, prs)
    new, rewrites, _ = canonicalize(BASE, head, POLICY)
    old_lines, new_lines = head.split(b"\n"), new.split(b"\n")
    assert len(old_lines) == len(new_lines)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert [r.line - 1 for r in rewrites] == changed
    link = f"{LINK}{PR}".encode()
    for i in changed:
        before, after = old_lines[i], new_lines[i]
        token = PLACEHOLDER_TOKEN.search(before, before.index(b":") + 1)
        assert token is not None
        rest = before[token.end() :]
        gap = b" " if rest.startswith(b"#") else b""
        assert after == before[: token.start()] + link + gap + rest


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    mains=st.lists(entries(main_links), min_size=1, max_size=3),
    prs=st.lists(entries(st.sampled_from(PR_LINKS)), min_size=1, max_size=3),
    drop=st.integers(0, 5),
)
def test_the_merge_check_passes_a_full_merge_and_names_one_dropped_entry(
    mains: list[str], prs: list[str], drop: int
) -> None:
    """A merge that holds every entry of both sides (the resolver's, or both kept by hand
    where it refuses) drops nothing; the same result without any one new entry drops
    exactly one, whichever side it came from and however alike the entries read."""
    main, pr = appended(BASE, mains), appended(BASE, prs)
    try:
        result = merge(BASE, main, pr, POLICY)
    except ChangelogError:
        result = appended(main, prs)
    sides = [(main, "main"), (pr, "the branch")]
    assert dropped_entries(BASE, sides, result) == []
    chunks, _ = split_entries(result)
    gone = len(split_entries(BASE)[0]) + drop % (len(mains) + len(prs))
    cut = b"".join(c.text for i, c in enumerate(chunks) if i != gone).rstrip(b"\n") + b"\n"
    assert len(dropped_entries(BASE, sides, cut)) == 1
