"""Properties of the gate and the rewrite, over generated changelogs and hostile input."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infx.changelog.canonicalize import canonicalize
from infx.changelog.check import check
from infx.changelog.links import LinkPolicy
from infx.changelog.new import quote
from infx.matrix.load import load_yaml as load_fast
from tests.conftest import HISTORY, LINK, REPO, GitRepo, load_yaml12, make_repo

POLICY = LinkPolicy(repo=REPO, pr=9)
KEYS = {"llama-fp8-mi355x-vllm", "llama-fp8-mi355x-sglang"}
BASE = HISTORY.encode()
LINK_LINES = [m.start() for m in re.finditer(rb"(?m)^  pr-link: .*$", BASE)]

words = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30
).filter(lambda s: s.strip() == s and s)
links = st.sampled_from(["XXX", f"{LINK}XXX", f"{LINK}9", f"{LINK}8", "TBD", f"{LINK}9/"])
# What YAML readers may take for a line break, or for more than a plain link.
BREAKS = ["\r", "\u0085", "\u2028", "\u2029", "\n"]
DRESSINGS = ["\t", "&a ", "!!str ", "'", '"', "*a", "", "  "]


@st.composite
def entries(draw, valid: bool = False) -> str:
    names = [*sorted(KEYS), "llama-*"] + ([] if valid else ["nope"])
    keys = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2))
    descs = draw(st.lists(words, min_size=1, max_size=2))
    link = draw(st.sampled_from(POLICY.accepted_forms()) if valid else links)
    lines = [
        "- config-keys:",
        *(f'    - "{k}"' for k in keys),
        "  description:",
        *(f"    - {quote(d)}" for d in descs),
        f"  pr-link: {link}",
    ]
    return "\n".join(lines) + "\n"


@st.composite
def hostile_entries(draw) -> str:
    """Entries that use YAML features the changelog never needs, or nest and repeat a lot."""
    kind = draw(st.sampled_from(["merge", "alias", "anchor", "tag", "deep", "flow", "bomb"]))
    head = "- config-keys:\n    - llama-fp8-mi355x-vllm\n"
    if kind == "merge":
        return head + '  description: ["x"]\n  <<: {pr-link: XXX}\n'
    if kind == "alias":
        return head + '  description: &d ["x"]\n  pr-link: *d\n'
    if kind == "anchor":
        return head + '  description: ["x"]\n  pr-link: &p XXX\n'
    if kind == "tag":
        return head + '  description: !!seq ["x"]\n  pr-link: XXX\n'
    if kind == "deep":
        depth = draw(st.integers(9, 400))
        return head + "  description:\n    - " + "[" * depth + "]" * depth + "\n  pr-link: XXX\n"
    if kind == "flow":
        items = draw(st.sampled_from([100_001, 200_000]))
        return head + "  description: [" + ", ".join(["x"] * items) + "]\n  pr-link: XXX\n"
    levels = draw(st.integers(1, 9))
    body = '  description: &a0 ["lol", "lol", "lol"]\n'
    for level in range(1, levels + 1):
        body += f"  d{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 3) + "]\n"
    return head + body + "  pr-link: XXX\n"


@st.composite
def appends(draw) -> bytes:
    """HISTORY plus new entries, some hostile, with random damage anywhere."""
    appended = draw(
        st.lists(
            st.one_of(entries(valid=True), entries(), hostile_entries()), min_size=0, max_size=3
        )
    )
    data = bytearray(("".join([HISTORY, *("\n" + e for e in appended)])).encode())
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        op = draw(st.sampled_from(["flip", "delete", "insert"]))
        pos = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[pos] = draw(st.integers(0, 255))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 20))]
        else:
            data[pos:pos] = draw(st.sampled_from([b"\n", b" ", b"- x\n", b"\n\n", b"#", b"\r"]))
    return bytes(data)


@st.composite
def corrections(draw) -> bytes:
    """HISTORY with pr-link lines rewritten: plain links, and links followed or preceded by
    line breaks, tabs, anchors, tags, quotes and smuggled keys."""
    data = BASE
    for start in sorted(draw(st.sets(st.sampled_from(LINK_LINES), min_size=1)), reverse=True):
        end = data.index(b"\n", start)
        link = f"{LINK}{draw(st.integers(1, 99))}"
        if draw(st.sampled_from([True, True, False])):
            new = f"  pr-link: {link}"
        else:
            dressing = draw(st.sampled_from(DRESSINGS))
            smuggled = draw(st.sampled_from(BREAKS)) + "  config-keys: [llama*]"
            new = draw(
                st.sampled_from(
                    [
                        f"  pr-link: {link}{smuggled}",
                        f"  pr-link: {dressing}{link}",
                        f"  pr-link:{dressing}{link}",
                        f"  pr-link: {link}{dressing}",
                    ]
                )
            )
        data = data[:start] + new.encode() + data[end:]
    return data


def entries_read_by_every_reader(data: bytes) -> list[list[dict]]:
    """The changelog as YAML 1.1 (C) and YAML 1.2 (pure Python) readers see it."""
    return [load_fast(data), json.loads(json.dumps(load_yaml12(data)))]


def test_accepted_diff_keeps_history_for_every_reader() -> None:
    """An accepted diff is an append, or corrections that change only pr-link values; every
    reader sees history as before. Enough examples must be accepted to mean something."""
    accepted: list[str] = []

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(head=st.one_of(appends(), corrections()))
    def accepted_heads(head: bytes) -> None:
        result = check(BASE, head, POLICY, KEYS)
        if not result.ok:
            return
        accepted.append(result.diff.kind)
        for before, after in zip(
            entries_read_by_every_reader(BASE), entries_read_by_every_reader(head), strict=True
        ):
            if result.diff.kind == "append":
                assert head.startswith(BASE) and after[: len(before)] == before
                assert len(after) == len(before) + len(result.entries)
                continue
            assert len(after) == len(before)
            for old, new in zip(before, after, strict=True):
                assert {**old, "pr-link": None} == {**new, "pr-link": None}
        if result.diff.kind == "correction":
            changed = [
                (old, new)
                for old, new in zip(BASE.split(b"\n"), head.split(b"\n"), strict=True)
                if old != new
            ]
            assert len(changed) == len(result.corrections)
            for (old, new), fix in zip(changed, result.corrections, strict=True):
                assert new == f"  pr-link: {fix.new}".encode()
                assert old.startswith(b"  pr-link: ") and POLICY.is_canonical(fix.new)

    accepted_heads()
    assert accepted.count("append") >= 20, accepted
    assert accepted.count("correction") >= 20, accepted


def test_canonicalize_is_idempotent_and_keeps_base() -> None:
    """On every head the gate accepts, canonicalize leaves the base alone, rewrites once,
    and its result passes the gate without a PR number. Enough heads must be accepted, and
    enough of them hold a placeholder to rewrite, to mean something."""
    rewritten: list[int] = []

    @settings(max_examples=200, deadline=None)
    @given(appended=st.lists(entries(), min_size=1, max_size=3))
    def accepted_heads(appended: list[str]) -> None:
        head = (HISTORY + "".join("\n" + e for e in appended)).encode()
        if not check(BASE, head, POLICY).ok:
            return
        once, first, _ = canonicalize(BASE, head, POLICY)
        twice, rewrites, _ = canonicalize(BASE, once, POLICY)
        assert once.startswith(BASE)
        assert twice == once and not rewrites
        result = check(BASE, once, LinkPolicy(repo=REPO))
        assert result.ok, result.violations
        assert len(once.split(b"\n")) == len(head.split(b"\n"))
        rewritten.append(len(first))

    accepted_heads()
    assert len(rewritten) >= 20, rewritten
    assert sum(1 for n in rewritten if n) >= 10, rewritten


@settings(max_examples=60, deadline=None)
@given(appended=st.lists(hostile_entries(), min_size=1, max_size=3))
def test_hostile_entries_are_refused_before_loading(appended: list[str]) -> None:
    head = (HISTORY + "".join("\n" + e for e in appended)).encode()
    result = check(BASE, head, POLICY, KEYS)
    assert not result.ok
    assert {v.rule for v in result.violations} <= {"yaml", "size", "schema"}
    assert len(result.violations) <= len(appended)


@pytest.fixture(scope="module")
def fuzz_repo(tmp_path_factory) -> GitRepo:
    return make_repo(tmp_path_factory.mktemp("fuzz") / "repo")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.one_of(
        st.binary(max_size=400),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda c: (
                st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4)
            ),
            max_leaves=12,
        ).map(lambda v: json.dumps(v).encode()),
        appends(),
        corrections(),
    )
)
def test_arbitrary_input_never_crashes_the_cli(fuzz_repo: GitRepo, data: bytes) -> None:
    fuzz_repo.write("perf-changelog.yaml", data)
    result = fuzz_repo.infx("changelog", "check", "--base", "base", "--pr", "9")
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code:
        assert result.output.strip()
    lint = fuzz_repo.infx("changelog", "lint")
    assert lint.exit_code in (0, 1) and "Traceback" not in lint.output
    fix = fuzz_repo.infx("changelog", "fix", "--base", "base", "--check")
    # fix refuses a file holding conflict markers with exit 2, by design (test_conflicts)
    conflicted = fix.exit_code == 2 and "holds unresolved conflict markers" in fix.output
    assert (fix.exit_code in (0, 1) or conflicted) and "Traceback" not in fix.output
