"""What the changelog commands say about inputs they cannot use: a malformed master config or
runners file (a broken rule, exit 1, as in every command), and a --file that is a folder, a
device or outside the repository (a usage error, exit 2, in one line)."""

from __future__ import annotations

import json

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
