"""`infx changelog fix`: the gate's mechanical fixes, in appended text only."""

from __future__ import annotations

import pytest

from infx.changelog.fix import fix_appended
from tests.conftest import HISTORY, LINK, GitRepo, entry


def test_fixes_what_the_gate_names_and_the_gate_then_passes(repo: GitRepo) -> None:
    messy = (
        "\n\n"
        + entry(link=f"{LINK}PENDING").replace('Tune flags"', 'Tune flags"   ')
        + "  \n"
        + entry(link="TBD")
        + entry(link="'pending'")
        + "\n\n"
    ).replace("\n", "\r\n")
    repo.write("perf-changelog.yaml", HISTORY.encode() + messy.encode())
    before = repo.infx("changelog", "check", "--base", "base", "--pr", "7")
    assert before.exit_code == 1

    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0, result.output
    start = HISTORY.count("\n")
    assert result.stdout.splitlines() == [
        "perf-changelog.yaml: fixed: converted 20 CRLF line ending(s) to LF",
        "perf-changelog.yaml: fixed: removed trailing spaces from 1 line(s)",
        f"perf-changelog.yaml:{start + 2}: fixed: one empty line before this entry "
        "(was 2 empty lines)",
        f"perf-changelog.yaml:{start + 8}: fixed: one empty line before this entry "
        "(was a line of spaces)",
        f"perf-changelog.yaml:{start + 14}: fixed: one empty line before this entry (was none)",
        "perf-changelog.yaml: fixed: removed 2 blank line(s) at the end of the file",
        f"perf-changelog.yaml:{start + 6}: fixed: pr-link '{LINK}PENDING' -> XXX",
        f"perf-changelog.yaml:{start + 12}: fixed: pr-link 'TBD' -> XXX",
        f"perf-changelog.yaml:{start + 18}: fixed: pr-link 'pending' -> XXX",
    ]
    assert repo.read().decode() == HISTORY + "\n" + entry() + "\n" + entry() + "\n" + entry()
    after = repo.infx("changelog", "check", "--base", "base", "--pr", "7")
    assert after.exit_code == 0, after.output
    again = repo.infx("changelog", "fix", "--base", "base")
    assert again.exit_code == 0 and again.stdout == "perf-changelog.yaml: nothing to fix\n"


def test_final_newline_is_added(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry().rstrip("\n"))
    result = repo.infx("changelog", "fix", "--base", "base")
    assert "added the newline that ends the file" in result.output
    assert repo.read().decode() == HISTORY + "\n" + entry()


def test_check_mode_writes_nothing(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link="PENDING"))
    before = repo.read()
    result = repo.infx("changelog", "fix", "--base", "base", "--check")
    assert result.exit_code == 1 and "would fix: pr-link 'PENDING' -> XXX" in result.output
    assert repo.read() == before


def test_history_is_never_touched(repo: GitRepo) -> None:
    history = HISTORY.replace(f"{LINK}2", f"{LINK}PENDING  ")
    repo.commit(**{"perf-changelog.yaml": history})
    repo.git("tag", "-f", "base")
    repo.write("perf-changelog.yaml", history + "\n" + entry(link="TBD"))
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0
    assert repo.read().decode() == history + "\n" + entry()


def test_refuses_a_file_that_edits_history(repo: GitRepo) -> None:
    text = HISTORY.replace("Bring up", "Brought up") + "\n" + entry(link="TBD")
    repo.write("perf-changelog.yaml", text)
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 1 and "nothing was fixed" in result.output
    assert repo.read().decode() == text


def test_writes_atomically_and_keeps_the_mode(repo: GitRepo) -> None:
    path = repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link="TBD"))
    path.chmod(0o640)
    repo.infx("changelog", "fix", "--base", "base")
    assert path.stat().st_mode & 0o777 == 0o640
    assert not list(repo.path.glob(".perf-changelog.yaml.*"))


@pytest.mark.parametrize(
    "link",
    ["XXX", f"{LINK}XXX", f"{LINK}12", "https://example.com/x", "XXXX", f"{LINK}pending/x"],
)
def test_leaves_links_that_are_not_placeholder_spellings(link: str) -> None:
    head = (HISTORY + "\n" + entry(link=link)).encode()
    assert fix_appended(HISTORY.encode(), head) == (head, [])


@pytest.mark.parametrize("link", ["pull/PENDING", "pull/", "pull/tbd", f"{LINK}PENDING"])
def test_placeholder_spellings_become_xxx(link: str) -> None:
    head = (HISTORY + "\n" + entry(link=link)).encode()
    fixed, fixes = fix_appended(HISTORY.encode(), head)
    assert fixed == (HISTORY + "\n" + entry()).encode()
    assert [f.what for f in fixes] == [f"pr-link {link!r} -> XXX"]


def test_base_defaults_to_where_the_branch_left_main(repo: GitRepo) -> None:
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link="pull/PENDING"))
    result = repo.infx("changelog", "fix")
    assert result.exit_code == 0 and "pr-link 'pull/PENDING' -> XXX" in result.output
    assert repo.infx("changelog", "check").exit_code == 0
