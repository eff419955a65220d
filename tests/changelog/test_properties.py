"""Properties of the gate and the rewrite, over generated changelogs and arbitrary input."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infx.changelog.canonicalize import canonicalize
from infx.changelog.check import check
from infx.changelog.diff import PR_LINK_PREFIX
from infx.changelog.links import LinkPolicy
from tests.conftest import HISTORY, LINK, REPO, GitRepo, make_repo

POLICY = LinkPolicy(repo=REPO, pr=9)
KEYS = {"llama-fp8-mi355x-vllm", "llama-fp8-mi355x-sglang"}

words = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30
).filter(lambda s: s.strip() == s and s)
links = st.sampled_from(["XXX", f"{LINK}XXX", f"{LINK}9", f"{LINK}8", "TBD", f"{LINK}9/"])


@st.composite
def entries(draw) -> str:
    keys = draw(
        st.lists(st.sampled_from([*sorted(KEYS), "llama-*", "nope"]), min_size=1, max_size=2)
    )
    descs = draw(st.lists(words, min_size=1, max_size=2))
    link = draw(links)
    lines = [
        "- config-keys:",
        *(f'    - "{k}"' for k in keys),
        "  description:",
        *(f"    - {_quote(d)}" for d in descs),
        f"  pr-link: {link}",
    ]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


@st.composite
def head_variants(draw) -> bytes:
    """Heads derived from HISTORY: clean appends, and appends/edits with random damage."""
    appended = draw(st.lists(entries(), min_size=0, max_size=3))
    body = HISTORY + "".join("\n" + e for e in appended)
    data = bytearray(body.encode("utf-8"))
    for _ in range(draw(st.integers(0, 2))):
        if not data:
            break
        op = draw(st.sampled_from(["flip", "delete", "insert", "link"]))
        pos = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[pos] = draw(st.integers(0, 255))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 20))]
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from([b"\n", b" ", b"- x\n", b"\n\n", b"#"]))
        else:
            data = bytearray(
                bytes(data).replace(
                    f"{LINK}2".encode(), draw(st.sampled_from([f"{LINK}5", "TBD"])).encode()
                )
            )
    return bytes(data)


@settings(max_examples=300, deadline=None)
@given(head=head_variants())
def test_accepted_diff_is_prefix_or_link_correction(head: bytes) -> None:
    base = HISTORY.encode()
    result = check(base, head, POLICY, KEYS)
    if not result.ok:
        return
    if head.startswith(base):
        return
    base_lines, head_lines = base.split(b"\n"), head.split(b"\n")
    assert len(base_lines) == len(head_lines)
    for old, new in zip(base_lines, head_lines, strict=True):
        if old != new:
            assert old.startswith(PR_LINK_PREFIX) and new.startswith(PR_LINK_PREFIX)


@settings(max_examples=200, deadline=None)
@given(appended=st.lists(entries(), min_size=1, max_size=3))
def test_canonicalize_is_idempotent_and_keeps_base(appended: list[str]) -> None:
    base = HISTORY.encode()
    head = (HISTORY + "".join("\n" + e for e in appended)).encode()
    if not check(base, head, POLICY).ok:
        return
    once, _, _ = canonicalize(base, head, POLICY)
    twice, rewrites, _ = canonicalize(base, once, POLICY)
    assert once.startswith(base)
    assert twice == once and not rewrites
    result = check(base, once, LinkPolicy(repo=REPO))
    assert result.ok, result.violations
    assert len(once.split(b"\n")) == len(head.split(b"\n"))


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
        ).map(lambda v: __import__("json").dumps(v).encode()),
        head_variants(),
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
