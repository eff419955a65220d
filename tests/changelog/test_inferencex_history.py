"""The real InferenceX history (when ../shared is present) reads unchanged."""

from __future__ import annotations

import pytest

from infx.changelog.check import check
from infx.changelog.links import LinkPolicy
from infx.changelog.parse import read_document
from infx.matrix.load import load_yaml as load_fast
from infx.matrix.load import parse_masters
from tests.conftest import SHARED

pytestmark = pytest.mark.skipif(
    not (SHARED / "perf-changelog.yaml").is_file(), reason="../shared/inferencex is not present"
)

POLICY = LinkPolicy(repo="SemiAnalysisAI/InferenceX", pr=2800)
NEW = (
    b"\n- config-keys:\n    - dsr1-fp4-mi355x-*\n  description:\n"
    b'    - "Bump the MI355X DeepSeek-R1 images"\n  pr-link: XXX\n'
)


@pytest.fixture(scope="module")
def history() -> bytes:
    return (SHARED / "perf-changelog.yaml").read_bytes()


@pytest.fixture(scope="module")
def keys() -> list[str]:
    files = {p.name: p.read_bytes() for p in sorted((SHARED / "configs").glob("*-master.yaml"))}
    return parse_masters(files).keys()


def test_every_history_entry_is_schema_valid(history: bytes) -> None:
    assert read_document(history)[1] == []
    assert len(load_fast(history)) == 772


def test_history_with_one_appended_entry_passes(history: bytes, keys: list[str]) -> None:
    result = check(history, history + NEW, POLICY, keys)
    assert result.ok, result.violations
    assert result.entries[0].line == history.count(b"\n") + 2


def test_history_with_bad_link_fails_at_its_line(history: bytes, keys: list[str]) -> None:
    head = history + NEW.replace(b"XXX", b"https://github.com/SemiAnalysisAI/InferenceX/pull/TBD")
    result = check(history, head, POLICY, keys)
    assert [(v.rule, v.line) for v in result.violations] == [("pr-link", history.count(b"\n") + 6)]


def test_real_history_links_that_fail_today_are_history(history: bytes) -> None:
    """Some historic links are not canonical (a `/changes` suffix, a placeholder); history
    stays as it is, so they never fail a later append."""
    placeholder_or_odd = [
        e for e in load_fast(history) if not POLICY.is_canonical(str(e["pr-link"]).strip())
    ]
    assert placeholder_or_odd
    assert check(history, history + NEW, POLICY).ok


@pytest.mark.parametrize(
    "separator", [b"\r", "\u0085".encode(), "\u2028".encode(), "\u2029".encode()]
)
def test_smuggled_key_after_a_corrected_link_is_rejected(history: bytes, separator: bytes) -> None:
    """The reproduction from issue #9: entry 1's config-keys must not change behind a
    'pr-link correction'; the gate and lint agree."""
    head = history.replace(b"/pull/95\n", b"/pull/96" + separator + b"  config-keys: [gptoss*]\n")
    assert head != history
    result = check(history, head, POLICY)
    assert not result.ok and result.diff.kind == "rejected"
    assert read_document(head)[1]


def test_a_plain_correction_of_real_history_passes(history: bytes) -> None:
    head = history.replace(b"/pull/95\n", b"/pull/96\n")
    result = check(history, head, POLICY)
    assert result.ok and [c.new for c in result.corrections] == [
        "https://github.com/SemiAnalysisAI/InferenceX/pull/96"
    ]


def test_whole_history_reads_as_one_append(history: bytes) -> None:
    """From the empty tree all 772 entries are appended and read, within every limit; what
    fails is only what later appends never see: the historic separators, and the one
    historic pr-link whose value sits on the line below its key (a new entry must write
    it on its own line)."""
    result = check(None, history, None)
    assert len(result.entries) == 772
    assert {v.rule for v in result.violations} == {"separator", "pr-link"}
    assert [v.line for v in result.violations if v.rule == "pr-link"] == [3595]


def _line(history: bytes, number: int) -> bytes:
    return history.split(b"\n")[number - 1]


# Three historic pr-link lines a maintainer could not fill in: trailing spaces (2482, 4898)
# and an empty value whose link sits on the next line (3595).
ODD_LINES = {
    2482: b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1311  ",
    4898: b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2201  ",
}


@pytest.mark.parametrize("number", sorted(ODD_LINES))
def test_a_link_with_trailing_spaces_can_be_corrected(history: bytes, number: int) -> None:
    old = _line(history, number)
    assert old == ODD_LINES[number]
    for new in (
        old.rstrip(b" "),
        b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/7",
    ):
        head = history.replace(old + b"\n", new + b"\n")
        result = check(history, head, POLICY)
        assert result.ok, result.violations
        assert [(c.line, c.new) for c in result.corrections] == [
            (number, new.removeprefix(b"  pr-link: ").decode())
        ]


def test_a_link_below_an_empty_pr_link_can_be_corrected(history: bytes) -> None:
    old = _line(history, 3595) + b"\n" + _line(history, 3596) + b"\n"
    assert old == b"  pr-link: \n    https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n"
    new = b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n"
    result = check(history, history.replace(old, new), POLICY)
    assert result.ok, result.violations
    assert [(c.line, c.old, c.new) for c in result.corrections] == [
        (3595, new[11:-1].decode(), new[11:-1].decode())
    ]
    # Line numbers after the joined line are the head's: a later correction names its line.
    later = history.replace(old, new).replace(b"/pull/2201  \n", b"/pull/2202\n")
    assert [c.line for c in check(history, later, POLICY).corrections] == [3595, 4897]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The new line stays strict: one link, nothing after it.
        (ODD_LINES[2482], ODD_LINES[2482].rstrip(b" ") + b" "),
        # Filling in the empty line but keeping the link below it: the value would read
        # "<link> <link>".
        (
            b"  pr-link: \n",
            b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n",
        ),
        # The link below moved up, a key smuggled into its place.
        (
            b"  pr-link: \n    https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n",
            b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n"
            b"  all-evals: true\n",
        ),
    ],
)
def test_old_forms_do_not_loosen_the_new_line(history: bytes, old: bytes, new: bytes) -> None:
    head = history.replace(old, new, 1)
    assert head != history
    result = check(history, head, POLICY)
    assert not result.ok and result.diff.kind == "rejected"


def test_the_cli_accepts_the_correction_on_a_branch(inferencex) -> None:
    history = inferencex.read()
    old = b"  pr-link: \n    https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n"
    inferencex.write(
        "perf-changelog.yaml",
        history.replace(
            old, b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1701\n"
        ),
    )
    result = inferencex.infx("changelog", "check")
    assert result.exit_code == 0, result.output
    assert "1 pr-link correction(s)" in result.output
