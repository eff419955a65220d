"""Messages that say the fix (issue #10, item 4): each on a real repository through the CLI."""

from __future__ import annotations

import json

import pytest

from tests.conftest import HISTORY, LINK, GitRepo, entry


def check(repo: GitRepo, *extra: str):
    return repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7", *extra)


def lines_of(output: str) -> list[str]:
    return [line for line in output.splitlines() if not line.endswith("problem(s) found")]


def test_entry_inserted_mid_file_names_its_line(repo: GitRepo) -> None:
    first, second = HISTORY.split("\n\n")
    repo.commit(**{"perf-changelog.yaml": first + "\n\n" + entry() + "\n" + second})
    result = check(repo)
    assert result.exit_code == 1
    assert lines_of(result.stdout) == [
        "perf-changelog.yaml:7: history: entry inserted at line 7; move it to the end of the "
        "file (fix: history is append-only: new entries go after the last entry)"
    ]


def test_entry_inserted_right_after_an_entry_start_names_the_new_entry(repo: GitRepo) -> None:
    """The inserted block and the next entry begin alike; the message still names the new one."""
    first, second = HISTORY.split("\n\n")
    repo.commit(**{"perf-changelog.yaml": entry() + "\n" + HISTORY})
    assert "entry inserted at line 1;" in check(repo).output
    repo.commit(**{"perf-changelog.yaml": first + "\n\n" + entry() + "\n" + second})
    assert "entry inserted at line 7;" in check(repo).output


def test_boolean_field_says_true_or_false(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + entry(extra="  evals-only: yes\n")})
    result = check(repo)
    assert "evals-only: 'yes' is not of type 'boolean' (fix: use true or false)" in result.output
    assert "see schemas/" not in result.output


def test_tab_inside_a_quoted_string_is_not_an_indentation_problem(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + entry(description="x\ty")})
    result = check(repo)
    line = HISTORY.count("\n") + 5
    assert lines_of(result.stdout) == [
        f"perf-changelog.yaml:{line}:9: characters: tab is not allowed (fix: use a space "
        '(inside a double-quoted string, write "\\t"))'
    ]


def test_tab_in_the_indentation_says_indent_with_spaces(repo: GitRepo) -> None:
    text = entry().replace("    - llama", "\t- llama")
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + text})
    result = check(repo)
    line = HISTORY.count("\n") + 3
    assert (
        f"perf-changelog.yaml:{line}:1: characters: tab in the indentation "
        "(fix: indent with spaces)" in result.output
    )


def test_crlf_is_one_message_with_the_count(repo: GitRepo) -> None:
    crlf = ("\n" + entry()).replace("\n", "\r\n")
    repo.commit(**{"perf-changelog.yaml": HISTORY.encode() + crlf.encode()})
    result = check(repo)
    assert result.exit_code == 1
    found = lines_of(result.stdout)
    assert len(found) == 1, result.output
    assert "6 line(s) end with CRLF" in found[0] and "infx changelog fix" in found[0]


def test_repeated_bytes_are_counted_not_dropped(repo: GitRepo) -> None:
    text = "".join("\n" + entry(description=f"a\t{i}") for i in range(8))
    repo.commit(**{"perf-changelog.yaml": HISTORY + text})
    found = lines_of(check(repo).stdout)
    assert sum("tab is not allowed" in line for line in found) == 5
    assert found[-1].endswith("characters: and 3 more tabs")


def test_repeated_rule_violations_are_summarized_with_the_count(repo: GitRepo) -> None:
    text = "".join("\n" + entry(link=f"{LINK}PENDING") for _ in range(45))
    repo.commit(**{"perf-changelog.yaml": HISTORY + text})
    result = check(repo)
    found = lines_of(result.stdout)
    assert sum("'https://github.com/acme/bench/pull/PENDING' is not" in f for f in found) == 20
    assert found[-1].endswith("pr-link: and 25 more pr-link problem(s) like the ones above")
    payload = json.loads(check(repo, "--format", "json").stdout)
    assert len(payload["violations"]) == 21


def test_wildcard_fix_cites_the_config_glob_in_force(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + entry(keys=["qwen-*", "llama-fp"])})
    result = check(repo, "--config", "configs/amd-*.yaml")
    assert "wildcard 'qwen-*' matches no master config key (configs/amd-*.yaml)" in result.output
    assert "a key defined in configs/amd-*.yaml" in result.output
    assert "configs/*-master.yaml" not in result.output


def test_rule_name_is_not_repeated(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + entry(keys=["nope"], link="TBD")})
    result = check(repo)
    assert "pr-link: 'TBD' is not accepted (this is PR #7)" in result.output
    assert "config-keys: 'nope' is not defined in any master config" in result.output
    assert "pr-link: pr-link" not in result.output
    assert "config-keys: config key" not in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--base", "base"],
        ["lint"],
        ["canonicalize", "--base", "base", "--pr", "3"],
        ["fix", "--base", "base"],
        ["new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"],
    ],
    ids=lambda c: c[0],
)
def test_missing_file_is_a_usage_error(repo: GitRepo, command: list[str]) -> None:
    result = repo.infx("changelog", *command, "--file", "missing.yaml")
    assert result.exit_code == 2
    assert "no such file: missing.yaml" in result.output
    assert not (repo.path / "missing.yaml").exists()
