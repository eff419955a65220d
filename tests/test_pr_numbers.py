"""A pull request number is 1 to 2**53 - 1 on every command that takes one: the results
site refuses a larger one (JavaScript rounds it; its link opens nothing), and 0 or a
negative number names no pull request. `reuse gate --pr-number` took any integer and the
other PR options any from 1 up; each is now a one-line usage error (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.numbers import PR_NUMBERS

GATE = ["reuse", "gate", "--commit-sha", "a" * 40, "--event-name", "pull_request", "--ref", "r"]
PR_OPTIONS = {
    "reuse gate": [*GATE, "--pr-number"],
    "reuse status": ["reuse", "status", "--pr"],
    "changelog check": ["changelog", "check", "--pr"],
    "changelog canonicalize": ["changelog", "canonicalize", "--pr"],
    "changelog resolve-conflict": ["changelog", "resolve-conflict", "--pr"],
    "changelog merge-driver": ["changelog", "merge-driver", "a", "b", "c", "--pr"],
    "results compare": ["results", "compare", "--pr"],
    "review signoff": ["review", "signoff", "--pr"],
    "merge": ["merge"],
}
BAD = ["0", "-1", str(2**53), str(2**63), "9" * 40, "\u0663", "+7", "1_0"]


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("command", PR_OPTIONS)
def test_a_pr_number_outside_1_to_2_53_is_a_one_line_usage_error(command: str, value: str) -> None:
    result = CliRunner().invoke(cli, [*PR_OPTIONS[command], value])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    assert repr(value) in errors[0] or value in errors[0], errors[0]


def test_the_merge_driver_refuses_a_bad_pr_number_from_its_environment() -> None:
    args = ["changelog", "merge-driver", "a", "b", "c"]
    result = CliRunner().invoke(cli, args, env={"INFX_PR_NUMBER": str(2**53)})
    assert result.exit_code == 2 and "below 2**53" in result.output, result.output


def test_the_bound_is_the_site_s() -> None:
    """One bound: the options' and the site's overlay (infx.site.facts) are one range."""
    from infx.site import facts

    assert facts.PR_NUMBERS is PR_NUMBERS
    assert range(1, 2**53) == PR_NUMBERS


def test_the_largest_pr_number_and_leading_zeros_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no repository here: the command fails past its options
    for value in (str(2**53 - 1), "007"):
        result = CliRunner().invoke(cli, ["changelog", "canonicalize", "--pr", value])
        assert "Invalid value" not in result.output, result.output
