"""History stays immutable and hostile appends fail fast with one line (issue #9, items 1-2)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import HISTORY, LINK, GitRepo, entry

SEPARATORS = {
    "CR": "\r",
    "NEL U+0085": "\u0085",
    "LS U+2028": "\u2028",
    "PS U+2029": "\u2029",
}


def gate(repo: GitRepo, *extra: str):
    return repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7", *extra)


def problems(output: str) -> list[str]:
    return [line for line in output.splitlines() if not line.endswith("problem(s) found")]


@pytest.mark.parametrize("separator", SEPARATORS.values(), ids=SEPARATORS.keys())
def test_correction_cannot_smuggle_a_key_after_a_line_break(repo: GitRepo, separator: str) -> None:
    smuggled = HISTORY.replace(f"{LINK}1\n", f"{LINK}3{separator}  config-keys: [llama*]\n")
    repo.commit(**{"perf-changelog.yaml": smuggled})
    result = gate(repo)
    assert result.exit_code == 1, result.output
    assert "pr-link correction" not in result.output
    assert "must stay '  pr-link: <link>' with nothing else" in result.output
    lint = repo.infx("changelog", "lint")
    assert lint.exit_code == 1, lint.output


@pytest.mark.parametrize(
    "line",
    [f"  pr-link:\t{LINK}3", f"  pr-link: &a {LINK}3", f"  pr-link: {LINK}3 # note"],
    ids=["tab", "anchor", "comment"],
)
def test_correction_line_is_exactly_prefix_and_link(repo: GitRepo, line: str) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY.replace(f"  pr-link: {LINK}1", line)})
    result = gate(repo)
    assert result.exit_code == 1, result.output
    assert "perf-changelog.yaml:5: history: line 5 must stay" in result.output


def test_correction_that_changes_what_yaml_reads_is_rejected(repo: GitRepo) -> None:
    """A plain scalar continues on a deeper-indented line: the new link would read as
    '<link> /changes', so the line alone proves nothing."""
    history = HISTORY.replace(f"{LINK}1\n", f"{LINK}1\n    /changes\n")
    repo.commit(**{"perf-changelog.yaml": history})
    repo.git("tag", "-f", "base")
    repo.commit(**{"perf-changelog.yaml": history.replace(f"{LINK}1\n", f"{LINK}3\n")})
    result = gate(repo)
    assert result.exit_code == 1
    assert "reads differently, not just its pr-link" in result.output


def test_plain_correction_passes_and_names_the_link(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY.replace(f"{LINK}1\n", f"{LINK}3\n")})
    result = gate(repo)
    assert result.exit_code == 0, result.output
    assert "1 pr-link correction(s)" in result.output


def alias_bomb(levels: int) -> str:
    lines = ['  description: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"  d{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "- config-keys:\n    - llama-fp8-mi355x-vllm\n" + "\n".join(lines) + "\n  pr-link: XXX\n"


HOSTILE = {
    "merge key": (entry(extra="  <<: {pr-link: XXX}\n"), "merge key '<<' is not allowed"),
    "deep nesting": (
        entry(description="x").replace('"x"', "[" * 246 + "]" * 246),
        "values nest deeper than 8 levels",
    ),
    "alias bomb": (alias_bomb(9), "anchor '&a0' is not allowed"),
    "anchor": (entry(link="&link XXX"), "anchor '&link' is not allowed"),
    "tag": (entry(link="!!str XXX"), "tag 'tag:yaml.org,2002:str' is not allowed"),
    "200,000-item flow list": (
        entry().replace('    - "Tune flags"', "    - [" + ", ".join(["x"] * 200_000) + "]"),
        "more than 100,000 values",
    ),
}


@pytest.mark.parametrize(("text", "message"), HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_append_is_refused_in_one_line(repo: GitRepo, text: str, message: str) -> None:
    """Run as a process with a generous timeout: a regression fails here instead of hanging."""
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + text})
    proc = subprocess.run(
        [sys.executable, "-m", "infx", "changelog", "check", "--base", "base", "--pr", "7"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    found = problems(proc.stdout)
    assert len(found) == 1 and message in found[0], proc.stdout


@pytest.mark.parametrize(("text", "message"), HOSTILE.values(), ids=HOSTILE.keys())
def test_lint_refuses_the_same_hostile_entries(repo: GitRepo, text: str, message: str) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + text)
    result = repo.infx("changelog", "lint")
    assert result.exit_code == 1 and message in result.output, result.output


def test_unquoted_leading_wildcard_is_an_alias_with_a_hint(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + entry(keys=["*-mi355x-vllm"])})
    result = gate(repo)
    assert result.exit_code == 1
    assert "'*-mi355x-vllm' is a YAML alias" in result.output
    assert "quote values that start with '*'" in result.output
