"""Numbers YAML 1.1 and 1.2 read differently never pass the gate; `fix` writes the plain
decimal where every reader agrees (issue #25, item 15)."""

from __future__ import annotations

import warnings

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from infx.changelog.numbers import (
    PLAIN_DECIMAL,
    YAML11_FIRST_CHARS,
    agreed_decimal,
    number_problem,
    yaml11_reading,
)
from tests.conftest import HISTORY, GitRepo, entry

# Spellings some reader takes for a number, each with what PyYAML (YAML 1.1, the InferenceX
# planner) and ruamel (YAML 1.2, infx) read: the issue's, and the others found by trying.
DISAGREE = {
    "010": (8, 10),
    "-010": (-8, -10),
    "0_10": (8, 10),
    "0o10": ("0o10", 8),
    "0o_7": ("0o_7", 7),
    "08": ("08", 8),
    "1:30": (90, "1:30"),
    "190:20:30": (685230, "190:20:30"),
    "1e3": ("1e3", 1000.0),
    "1E3": ("1E3", 1000.0),
    "1.0e3": ("1.0e3", 1000.0),
    "0e0": ("0e0", 0.0),
}
AGREE = {
    "0x10": 16,
    "+0x10": 16,
    "0b101": 5,
    "1_000": 1000,
    "+5": 5,
    "-0": 0,
    "10.0": 10,
    "1.0E+3": 1000,
}


def ruamel_reading(spelling: str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return YAML(typ="safe", pure=True).load(f"k: {spelling}")["k"]


@pytest.mark.parametrize(("spelling", "readings"), DISAGREE.items())
def test_the_readers_disagree_as_the_table_says(
    spelling: str, readings: tuple[object, object]
) -> None:
    assert (yaml.safe_load(f"k: {spelling}")["k"], ruamel_reading(spelling)) == readings
    assert yaml11_reading(spelling) == readings[0]


@pytest.mark.parametrize(("spelling", "readings"), DISAGREE.items())
def test_a_spelling_read_two_ways_is_named_and_not_guessed(
    spelling: str, readings: tuple[object, object]
) -> None:
    problem = number_problem(spelling, readings[1])
    assert problem is not None
    message, fix = problem
    assert "YAML 1.1 and 1.2 read" in message and "InferenceX planner" in message
    assert "write the plain decimal you mean" in fix
    assert agreed_decimal(spelling, readings[1]) is None


@pytest.mark.parametrize(("spelling", "number"), AGREE.items())
def test_a_spelling_read_alike_but_not_plain_is_named_with_its_decimal(
    spelling: str, number: int
) -> None:
    read = ruamel_reading(spelling)
    problem = number_problem(spelling, read)
    assert problem is not None and f"write the plain decimal {number}" in problem[1]
    assert agreed_decimal(spelling, read) == str(number)


@pytest.mark.parametrize("spelling", ["0", "8", "10", "-12", "yes", "nan", "12e", "1,000", "~"])
def test_plain_decimals_and_non_numbers_are_left_to_the_schema(spelling: str) -> None:
    assert number_problem(spelling, ruamel_reading(spelling)) is None


NUMBERISH = st.text(alphabet="0123456789+-._:eEoxbB", min_size=1, max_size=8)


@given(NUMBERISH)
def test_no_spelling_the_readers_disagree_on_passes(spelling: str) -> None:
    """Whatever the spelling: when PyYAML and ruamel read it differently and either reads a
    number, or it is a number not spelled as a plain decimal, the rule names it."""
    try:
        old, new = yaml.safe_load(f"k: {spelling}")["k"], ruamel_reading(spelling)
    except Exception:
        return
    numbers = [r for r in (old, new) if isinstance(r, int | float) and not isinstance(r, bool)]
    if not numbers:
        return
    problem = number_problem(spelling, new)
    if problem is None:
        assert type(old) is type(new) and (old == new or old != old), (spelling, old, new)
        whole = isinstance(new, int) or (isinstance(new, float) and new.is_integer())
        assert PLAIN_DECIMAL.fullmatch(spelling) or not whole, spelling


ANCHOR = "  eval-min-prefill-ep: {}\n"


def appended(repo: GitRepo, value: str) -> int:
    """Append an entry whose eval-min-prefill-ep is spelled `value`; its line."""
    text = HISTORY + "\n" + entry(extra=ANCHOR.format(value))
    repo.write("perf-changelog.yaml", text)
    return text.count("\n")


@pytest.mark.parametrize("spelling", ["010", "0o10", "0x10", "1_000", "+5", "1:30", "1e3"])
def test_the_gate_names_file_line_and_fix(repo: GitRepo, spelling: str) -> None:
    line = appended(repo, spelling)
    result = repo.infx("changelog", "check", "--base", "base", "--pr", "7")
    assert result.exit_code == 1
    assert f"perf-changelog.yaml:{line}:" in result.output
    assert "number:" in result.output and "write the plain decimal" in result.output


def test_the_plain_decimal_passes_the_gate(repo: GitRepo) -> None:
    appended(repo, "8")
    result = repo.infx("changelog", "check", "--base", "base", "--pr", "7")
    assert result.exit_code == 0, result.output


def test_lint_names_them_in_a_whole_file(repo: GitRepo) -> None:
    line = appended(repo, "010")
    result = repo.infx("changelog", "lint")
    assert result.exit_code == 1 and f"perf-changelog.yaml:{line}:" in result.output
    assert "read 8; YAML 1.2 readers (infx) read 10" in result.output


@pytest.mark.parametrize(("spelling", "decimal"), [("0x10", "16"), ("+5", "5"), ("1_000", "1000")])
def test_fix_writes_the_plain_decimal_and_nothing_else(
    repo: GitRepo, spelling: str, decimal: str
) -> None:
    line = appended(repo, spelling + "   # the floor")
    before = repo.read()
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0, result.output
    assert f"perf-changelog.yaml:{line}: fixed: {spelling} -> {decimal}" in result.output
    assert repo.read() == before.replace(
        f"prefill-ep: {spelling}   #".encode(), f"prefill-ep: {decimal}   #".encode()
    )
    assert repo.infx("changelog", "check", "--base", "base", "--pr", "7").exit_code == 0


@pytest.mark.parametrize("spelling", ["010", "0o10", "1:30"])
def test_fix_leaves_a_spelling_read_two_ways_to_the_person(repo: GitRepo, spelling: str) -> None:
    appended(repo, spelling)
    before = repo.read()
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 1 and "write the plain decimal you mean" in result.output
    assert repo.read() == before


def test_fix_never_touches_history(repo: GitRepo) -> None:
    """A history entry spelled `0x10` (it landed before the rule) stays; the gate checks
    appended entries only, so it does not block the branch either."""
    history = (
        HISTORY
        + "\n"
        + entry(extra=ANCHOR.format("0x10"), link="https://github.com/acme/bench/pull/3")
    )
    repo.commit("old", **{"perf-changelog.yaml": history})
    repo.git("tag", "-f", "base")
    repo.write("perf-changelog.yaml", history + "\n" + entry(extra=ANCHOR.format("+5")))
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == history + "\n" + entry(extra=ANCHOR.format("5"))


def test_fix_rewrites_a_value_written_below_its_key(repo: GitRepo) -> None:
    text = HISTORY + "\n" + entry(extra="  eval-min-prefill-ep:\n    0x10\n")
    repo.write("perf-changelog.yaml", text)
    result = repo.infx("changelog", "fix", "--base", "base")
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == text.replace("    0x10\n", "    16\n")


@pytest.mark.parametrize(("spelling", "advice"), [("0x10", True), ("010", False)])
def test_the_merge_driver_refuses_such_an_entry(repo: GitRepo, spelling: str, advice: bool) -> None:
    """The driver takes the PR's entries only when they pass the gate's rules: a spelling
    `fix` repairs gets the abort-then-fix advice, one it leaves to the person does not."""
    import subprocess

    from tests.changelog.test_merge import MAIN_ENTRY, branches, use_driver

    use_driver(repo)
    branches(
        repo, HISTORY + "\n" + entry(extra=ANCHOR.format(spelling)), HISTORY + "\n" + MAIN_ENTRY
    )
    merge = subprocess.run(
        ["git", "merge", "--no-edit", "main"], cwd=repo.path, capture_output=True, text=True
    )
    assert merge.returncode != 0
    assert f"{spelling!r}" in merge.stderr
    assert ("run `git merge --abort`, then `infx changelog fix`" in merge.stderr) is advice


@pytest.mark.parametrize("digits", ["1" * 5000, "0" + "1" * 5000, "1_" + "1" * 5000])
def test_a_number_longer_than_python_converts_is_a_one_line_error(
    repo: GitRepo, digits: str
) -> None:
    """As an attacker: 5,000 digits made ruamel raise ValueError, a traceback (exit 3)."""
    appended(repo, digits)
    result = repo.infx("changelog", "check", "--base", "base", "--pr", "7")
    assert result.exit_code == 1, result.output
    assert "more than 4,300 digits" in result.output and "Traceback" not in result.output
    assert yaml11_reading("1" * 5000) == "1" * 5000


def test_the_gate_skips_pyyaml_only_for_values_it_reads_as_text() -> None:
    """A text value whose first character no YAML 1.1 resolver starts with is text to PyYAML,
    so the gate does not import it to ask; every character that starts one is listed."""
    assert set(yaml.resolver.Resolver.yaml_implicit_resolvers) == YAML11_FIRST_CHARS
    for first in {chr(c) for c in range(32, 0x250)} - YAML11_FIRST_CHARS:
        assert yaml11_reading(first + "1:30") == first + "1:30"
