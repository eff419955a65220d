"""`infx changelog canonicalize`: placeholders become the PR link, every other byte stays."""

from __future__ import annotations

from dataclasses import replace

import pytest

from infx.changelog.canonicalize import rewrite_region
from infx.changelog.links import LinkPolicy
from infx.changelog.parse import parse_region
from infx.errors import ChangelogError
from tests.conftest import HISTORY, LINK, GitRepo, entry


def test_rewrites_placeholders_only(repo: GitRepo) -> None:
    text = HISTORY + "\n" + entry(link="XXX") + "\n" + entry(link=f'"{LINK}XXX"  # draft')
    repo.write("perf-changelog.yaml", text)
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert result.exit_code == 0, result.output
    expected = HISTORY + "\n" + entry(link=f"{LINK}41") + "\n" + entry(link=f"{LINK}41  # draft")
    assert repo.read().decode() == expected
    assert "rewrote pr-link 'XXX'" in result.output


def test_idempotent(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    once = repo.read()
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert result.exit_code == 0 and "already canonical" in result.output
    assert repo.read() == once


def test_check_mode_writes_nothing(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    before = repo.read()
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41", "--check")
    assert result.exit_code == 1 and "would rewrite" in result.output
    assert repo.read() == before


def test_refuses_a_diff_that_breaks_a_rule(repo: GitRepo) -> None:
    text = HISTORY.replace("Bring up", "Brought up") + "\n" + entry()
    repo.write("perf-changelog.yaml", text)
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert result.exit_code == 1 and "nothing was rewritten" in result.output
    assert repo.read().decode() == text


def test_history_placeholders_untouched(repo: GitRepo) -> None:
    history = HISTORY.replace(f"{LINK}2", f"{LINK}XXX")
    repo.commit(**{"perf-changelog.yaml": history})
    repo.git("tag", "-f", "base")
    repo.write("perf-changelog.yaml", history + "\n" + entry())
    repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert repo.read().decode() == history + "\n" + entry(link=f"{LINK}41")


def test_keeps_file_mode(repo: GitRepo) -> None:
    path = repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    path.chmod(0o640)
    repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert path.stat().st_mode & 0o777 == 0o640
    assert not list(repo.path.glob(".perf-changelog.yaml.*"))


def test_value_positions_are_byte_offsets() -> None:
    """Rewrites splice bytes, so an entry records where a value starts in bytes: after 'ké: '
    that is byte 7 of the line, though it is the sixth character."""
    region = "- config-keys:\n    - a\n  ké: XXX\n".encode()
    (entry,), _ = parse_region(region)
    assert entry.value_pos["ké"] == (3, 7)


@pytest.mark.parametrize("value", ["|-\n    XXX", ">-\n    XXX", '"XX\\\n    X"'])
def test_refuses_a_pr_link_spread_over_lines(repo: GitRepo, value: str) -> None:
    """Splicing the link into the first line would leave `    XXX` behind: the value would
    read `.../pull/41 XXX`. Nothing is written."""
    text = HISTORY + "\n" + entry(link=value)
    repo.write("perf-changelog.yaml", text)
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert result.exit_code == 1, result.output
    assert "write `pr-link: XXX` on one line" in result.output
    assert repo.read().decode() == text


def test_the_rewrite_is_read_back_before_it_is_written() -> None:
    """A rewrite whose result would read differently (here: a position that points into
    the description) is refused instead of written."""
    region = entry().encode()
    (parsed,), _ = parse_region(region)
    wrong = replace(parsed, value_pos={**parsed.value_pos, "pr-link": (4, 7)})
    policy = LinkPolicy(repo="acme/bench", pr=41)
    with pytest.raises(ChangelogError, match="nothing was written"):
        rewrite_region(region, [wrong], policy)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ('"XXX"#draft', f"{LINK}41 #draft"),
        ("'XXX'#draft", f"{LINK}41 #draft"),
        (f'"{LINK}XXX"# to do', f"{LINK}41 # to do"),
    ],
)
def test_a_quoted_placeholder_with_a_comment_right_after_it(
    repo: GitRepo, value: str, written: str
) -> None:
    """YAML readers (libyaml, PyYAML) take `"XXX"#draft` for the value XXX and a comment, and
    the gate accepts it; the link must not run into the comment, which would make `#draft`
    part of a plain value. The comment keeps its place, after one space."""
    text = HISTORY + "\n" + entry(link=value)
    repo.write("perf-changelog.yaml", text)
    assert repo.infx("changelog", "check", "--base", "base", "--pr", "41").exit_code == 0
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == HISTORY + "\n" + entry(link=written)
    repo.commit("canonical")
    check = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD")
    assert check.exit_code == 0, check.output


@pytest.mark.parametrize("landed", [f"{LINK}2", f"{LINK}2/changes", f"'{LINK}2'  "])
def test_refuses_a_pr_number_history_already_holds(repo: GitRepo, landed: str) -> None:
    """A pull request lands once: when history already links PR 2, `--pr 2` is a wrong
    number, and writing it would credit these entries to another PR's results."""
    history = HISTORY.replace(f"  pr-link: {LINK}2\n", f"  pr-link: {landed}\n")
    repo.commit(**{"perf-changelog.yaml": history})
    repo.git("tag", "-f", "base")
    text = history + "\n" + entry()
    repo.write("perf-changelog.yaml", text)
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "2")
    assert result.exit_code == 1, result.output
    assert "already links PR #2 at line 11" in result.output
    assert repo.read().decode() == text
    assert repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "22").exit_code == 0


def test_a_problem_of_the_whole_appended_text_is_not_given_line_none(repo: GitRepo) -> None:
    many = "".join(f'    - "point {n} {"x" * 200}"\n' for n in range(22_000))
    big = entry().replace('    - "Tune flags"\n', many)
    repo.write("perf-changelog.yaml", HISTORY + "\n" + big)
    before = repo.read()
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "41")
    assert result.exit_code == 1 and "infx checks at most 4 MiB" in result.output
    assert "line None" not in result.output
    assert repo.read() == before
