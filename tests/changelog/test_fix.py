"""`infx changelog fix`: the gate's mechanical fixes, in appended text only."""

from __future__ import annotations

import pytest

from infx.changelog.fix import fix_appended
from tests.changelog.conftest import real_entry
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


# --- on the real InferenceX layout ---------------------------------------------------------


def test_a_file_saved_with_crlf_gets_lf_back(inferencex: GitRepo) -> None:
    """An editor saved the whole file with Windows line endings: the gate says so in one
    line, and fix restores LF because the result is history plus the appended entry."""
    history = inferencex.read()
    inferencex.write(
        "perf-changelog.yaml", (history + real_entry().encode()).replace(b"\n", b"\r\n")
    )
    gate = inferencex.infx("changelog", "check")
    assert gate.exit_code == 1
    problems = gate.stdout.splitlines()[:-1]
    assert len(problems) == 1, gate.output
    assert "the file was saved with CRLF line endings" in problems[0]

    fixed = inferencex.infx("changelog", "fix")
    assert fixed.exit_code == 0, fixed.output
    assert "CRLF" in fixed.stdout
    assert inferencex.read() == history + real_entry().encode()
    assert inferencex.infx("changelog", "check").exit_code == 0


@pytest.mark.parametrize("crlf", [False, True], ids=["bom", "bom and crlf"])
def test_a_file_saved_with_a_byte_order_mark_gets_it_removed(
    inferencex: GitRepo, crlf: bool
) -> None:
    """Editors on Windows save UTF-8 with a byte-order mark (often with CRLF too): the gate
    says so in one line instead of "history changed at line 1", and fix removes it
    because the rest is history plus the appended entry."""
    history = inferencex.read()
    saved = history + real_entry().encode()
    saved = b"\xef\xbb\xbf" + (saved.replace(b"\n", b"\r\n") if crlf else saved)
    inferencex.write("perf-changelog.yaml", saved)
    gate = inferencex.infx("changelog", "check")
    assert gate.exit_code == 1
    problems = gate.stdout.splitlines()[:-1]
    assert len(problems) == 1, gate.output
    assert "the file was saved with a byte-order mark" in problems[0]
    assert ("CRLF" in problems[0]) == crlf

    fixed = inferencex.infx("changelog", "fix")
    assert fixed.exit_code == 0, fixed.output
    assert "byte-order mark" in fixed.stdout
    assert inferencex.read() == history + real_entry().encode()
    assert inferencex.infx("changelog", "check").exit_code == 0


def test_crlf_over_an_edited_history_is_still_refused(inferencex: GitRepo) -> None:
    history = inferencex.read()
    edited = history.replace(b"/pull/95\n", b"/pull/96\n") + real_entry().encode()
    inferencex.write("perf-changelog.yaml", edited.replace(b"\n", b"\r\n"))
    fixed = inferencex.infx("changelog", "fix")
    assert fixed.exit_code == 1 and "nothing was fixed" in fixed.output
    assert inferencex.read() == edited.replace(b"\n", b"\r\n")


@pytest.mark.parametrize(
    ("extra", "named", "suggestion"),
    [
        ("  scenario-typ:\n    - fixed-seq-len\n", "scenario-typ", "did you mean 'scenario-type'?"),
        ("  evals-only: yes\n", "evals-only: 'yes' is not of type 'boolean'", "use true or false"),
    ],
)
def test_fix_exits_1_naming_what_it_cannot_fix(
    inferencex: GitRepo, extra: str, named: str, suggestion: str
) -> None:
    history = inferencex.read().decode()
    inferencex.write("perf-changelog.yaml", history + real_entry(link="TBD", extra=extra))
    result = inferencex.infx("changelog", "fix")
    assert result.exit_code == 1, result.output
    assert "fixed: pr-link 'TBD' -> XXX" in result.stdout
    assert named in result.output and suggestion in result.output
    # The mechanical fix is written; what remains is the person's.
    assert inferencex.read().decode() == history + real_entry(extra=extra)


def test_fix_names_a_mistyped_config_key_with_the_closest_one(inferencex: GitRepo) -> None:
    history = inferencex.read().decode()
    inferencex.write("perf-changelog.yaml", history + real_entry(key="dsv4-fp4-mi355x-vlm"))
    result = inferencex.infx("changelog", "fix")
    assert result.exit_code == 1, result.output
    assert "nothing to fix" not in result.output
    assert "did you mean 'dsv4-fp4-mi355x-vllm'?" in result.output


@pytest.mark.parametrize("value", [">-\n    PENDING", "|-\n    TBD"])
def test_fix_leaves_a_spread_placeholder_to_the_person(inferencex: GitRepo, value: str) -> None:
    """Splicing XXX into the first line would leave the old word on the next one."""
    text = inferencex.read().decode() + real_entry(link=value)
    inferencex.write("perf-changelog.yaml", text)
    result = inferencex.infx("changelog", "fix")
    assert result.exit_code == 1
    assert "write `pr-link: XXX` on one line" in result.output
    assert inferencex.read().decode() == text


def test_fix_never_changes_what_a_value_says(inferencex: GitRepo) -> None:
    """Trailing spaces inside a literal block are part of the text: stripping them would
    change the entry, so fix refuses and writes nothing."""
    block = "- config-keys:\n    - dsv4-fp4-mi355x-vllm\n  description:\n    - |\n      spaced   \n"
    text = inferencex.read().decode() + "\n" + block + "  pr-link: TBD\n"
    inferencex.write("perf-changelog.yaml", text)
    result = inferencex.infx("changelog", "fix")
    assert result.exit_code == 1
    assert "would read differently" in result.output
    assert inferencex.read().decode() == text


def test_a_quoted_spelling_with_a_comment_right_after_it_becomes_xxx(repo: GitRepo) -> None:
    """`"PENDING"#later` reads PENDING and a comment; `XXX#later` would read as one value."""
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link='"PENDING"#later'))
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == HISTORY + "\n" + entry(link="XXX #later")


def test_trailing_spaces_after_an_entry_start_are_removed(repo: GitRepo) -> None:
    # `- config-keys: ` reads as `- config-keys:` to YAML; fix removes the spaces and the
    # gate then cuts the entry there (before, fix refused: "would hold 1 entries instead of 0").
    repo.write(
        "perf-changelog.yaml",
        HISTORY + "\n" + entry().replace("- config-keys:\n", "- config-keys:  \n", 1),
    )
    before = repo.infx("changelog", "check", "--base", "base")
    assert before.exit_code == 1 and "followed by trailing spaces" in before.output
    assert "infx changelog fix does it" in before.output
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0, result.output
    assert "removed trailing spaces from 1 line(s)" in result.output
    assert repo.read().decode() == HISTORY + "\n" + entry()
