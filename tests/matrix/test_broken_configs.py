"""A master config file that is not YAML stops every command that reads master configs with
the same one line, naming file and line, and the same exit code: whichever config the
broken line sits in, and even when the command needs only the configs' keys (the gate) or
nothing was appended (the pre-commit hook runs the gate when a config changes)."""

from __future__ import annotations

import pytest

from tests.conftest import LINK, GitRepo, entry
from tests.matrix.conftest import AMD

# An unclosed `{` in the body of the second config, far from any key the entry names.
BROKEN = AMD.replace(
    "  model: deepseek-ai/DeepSeek-V4.1-Flash", "  model: {deepseek-ai/DeepSeek-V4.1-Flash"
)
MESSAGE = "configs/amd-master.yaml:{line}: invalid YAML: while parsing a flow mapping"


@pytest.fixture
def broken(bench: GitRepo) -> tuple[GitRepo, str]:
    assert BROKEN != AMD
    line = AMD.splitlines().index("  model: deepseek-ai/DeepSeek-V4.1-Flash") + 2
    bench.commit("break a config", **{"configs/amd-master.yaml": BROKEN})
    return bench, MESSAGE.format(line=line)


COMMANDS = {
    "gate, nothing appended": ("changelog", "check"),
    "gate, json": ("changelog", "check", "--base", "base", "--format", "json"),
    "gate, an entry appended": ("changelog", "check", "--base", "base"),
    "plan": ("sweep", "plan", "--base", "base"),
    "validate": ("sweep", "validate"),
    "fix": ("changelog", "fix", "--base", "base"),
    "new": ("changelog", "new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"),
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_every_command_names_file_and_line(
    broken: tuple[GitRepo, str], command: tuple[str, ...]
) -> None:
    repo, message = broken
    if command[-1] != "check":
        repo.write("perf-changelog.yaml", entry(["llama-fp8-mi355x-vllm"], f"{LINK}7"))
    result = repo.infx(*command)
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    if "json" not in command:
        errors = [line for line in result.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and errors[0].startswith(f"infx: error: {message}")


def test_a_config_no_entry_names_still_breaks_the_gate(broken: tuple[GitRepo, str]) -> None:
    """The entry names the first config, whose own lines are fine."""
    repo, message = broken
    repo.write("perf-changelog.yaml", entry(["llama-fp8-mi355x-vllm"], f"{LINK}7"))
    result = repo.infx("changelog", "check", "--base", "base")
    assert result.exit_code == 1 and message in result.output
    repo.commit("fixed", **{"configs/amd-master.yaml": AMD})
    assert repo.infx("changelog", "check", "--base", "HEAD~2").exit_code == 0


def test_a_config_nested_past_python_s_stack_is_refused_in_one_line(bench: GitRepo) -> None:
    """300 levels of mappings (and an anchor, which sends the file to PyYAML): a refusal
    naming the file, not a RecursionError ending in "a bug in infx"."""
    deep = "".join("  " * (i + 1) + "a:\n" for i in range(300))
    bench.write("configs/amd-master.yaml", AMD + f"\ndeep-fp8-mi355x-vllm: &d\n{deep}")
    result = bench.infx("sweep", "validate")
    assert result.exit_code == 1, result.output
    assert "configs/amd-master.yaml: invalid YAML: nested too deeply to read" in result.stderr
    assert "Traceback" not in result.output and "a bug in infx" not in result.output
