"""What the changelog commands say about inputs they cannot use: a malformed master config or
runners file (a broken rule, exit 1, as in every command), and a --file that is a folder, a
device or outside the repository (a usage error, exit 2, in one line)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import HISTORY, GitRepo, entry

# A master file the planner's index cannot read past (configs are parsed where selected,
# so these are what stops every command), with the words that name it.
MALFORMED = {
    "unclosed flow": ("llama-fp8-b200-trt: [\n", "configs/nvidia-master.yaml:2: invalid YAML"),
    "a list": ("- a\n- b\n", "configs/nvidia-master.yaml: a master config file must be a mapping"),
}


def _branch_with_entry(repo: GitRepo) -> None:
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("infx: error:")]


@pytest.mark.parametrize(("text", "said"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_master_config_breaks_a_rule_in_the_gate_as_in_the_planner(
    repo: GitRepo, text: str, said: str
) -> None:
    _branch_with_entry(repo)
    repo.write("configs/nvidia-master.yaml", text)
    gate = repo.infx("changelog", "check", "--repo", "acme/bench")
    assert gate.exit_code == 1, gate.output
    (line,) = _error_lines(gate.output)
    assert line.startswith(f"infx: error: {said}")
    assert gate.output.count("\n") == 1
    plan = repo.infx("sweep", "plan")
    assert plan.exit_code == gate.exit_code == 1, plan.output


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_a_malformed_master_config_is_exit_1_in_every_format(repo: GitRepo, fmt: str) -> None:
    _branch_with_entry(repo)
    text, said = MALFORMED["unclosed flow"]
    repo.write("configs/nvidia-master.yaml", text)
    result = repo.infx("changelog", "check", "--repo", "acme/bench", "--format", fmt)
    assert result.exit_code == 1, result.output
    if fmt == "json":
        assert said in json.loads(result.stdout)["error"]
    else:
        assert result.stdout.startswith("::error file=perf-changelog.yaml,title=")


def test_a_malformed_runners_file_is_no_usage_error_of_the_gate(repo: GitRepo) -> None:
    """The gate does not read runners.yaml (the planner does, and says exit 1): the gate's
    verdict on the changelog stands, and nothing is turned into a usage error."""
    _branch_with_entry(repo)
    repo.write("configs/runners.yaml", "mi355x: [unclosed\n")
    gate = repo.infx("changelog", "check", "--repo", "acme/bench")
    assert gate.exit_code == 0, gate.output
    plan = repo.infx("sweep", "plan")
    assert plan.exit_code == 1 and "configs/runners.yaml" in plan.output, plan.output


# Every command that reads --file in the working tree, with the options it needs.
READERS = {
    "lint": ["lint"],
    "check": ["check", "--base", "base"],
    "fix": ["fix", "--base", "base"],
    "canonicalize": ["canonicalize", "--base", "base", "--pr", "3"],
    "new": ["new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"],
}


def _one_error(result, said: str) -> None:
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result.output)
    assert said in line, line
    assert "no such file" not in result.output


@pytest.mark.parametrize("command", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize("folder", ["/tmp", "configs"])
def test_a_folder_is_named_as_one(repo: GitRepo, command: list[str], folder: str) -> None:
    _one_error(repo.infx("changelog", *command, "--file", folder), f"{folder} is a directory")


@pytest.mark.parametrize("command", READERS.values(), ids=READERS.keys())
def test_a_device_or_a_pipe_is_not_a_regular_file(repo: GitRepo, command: list[str]) -> None:
    _one_error(repo.infx("changelog", *command, "--file", "/dev/zero"), "not a regular file")
    os.mkfifo(repo.path / "pipe.yaml")  # reading it would wait forever
    _one_error(repo.infx("changelog", *command, "--file", "pipe.yaml"), "not a regular file")


@pytest.mark.parametrize("command", [c for n, c in READERS.items() if n != "lint"])
def test_a_file_outside_the_repository_is_refused(
    repo: GitRepo, tmp_path: Path, command: list[str]
) -> None:
    """The gate reads --file at git commits too: outside the repository there is no history,
    and the whole file read as appended gave hundreds of problems."""
    outside = tmp_path / "elsewhere" / "perf-changelog.yaml"
    outside.parent.mkdir()
    outside.write_text(HISTORY + "\n" + entry())
    before = outside.read_bytes()
    _one_error(repo.infx("changelog", *command, "--file", str(outside)), "outside the repository")
    _one_error(
        repo.infx("changelog", *command, "--file", "../elsewhere/perf-changelog.yaml"),
        "outside the repository",
    )
    assert outside.read_bytes() == before


def test_lint_checks_a_file_anywhere(repo: GitRepo, tmp_path: Path) -> None:
    """lint reads one file on its own, no history: a file outside the repository is fine."""
    outside = tmp_path / "history.yaml"
    outside.write_text(HISTORY)
    result = repo.infx("changelog", "lint", "--file", str(outside))
    assert result.exit_code == 0 and result.output == f"{outside}: ok\n"


def test_an_absolute_path_inside_the_repository_is_its_file(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    absolute = str(repo.path / "perf-changelog.yaml")
    result = repo.infx("changelog", "check", "--base", "base", "--pr", "3", "--file", absolute)
    assert result.exit_code == 0 and "ok (1 appended entry)" in result.output, result.output
