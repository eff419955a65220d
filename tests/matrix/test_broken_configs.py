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


LAUGHS = "laugh0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"laugh{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9)
)


@pytest.mark.parametrize(
    ("file", "tail", "says"),
    [
        (
            "configs/amd-master.yaml",
            "self: &a [*a, *a]\n",
            "an alias refers to the node that holds it",
        ),
        (
            "configs/runners.yaml",
            "self: &a [*a, *a]\n",
            "an alias refers to the node that holds it",
        ),
        ("configs/amd-master.yaml", LAUGHS, "aliases expand to more than 1,000,000 values"),
    ],
    ids=["self-alias", "self-alias-runners", "billion-laughs"],
)
@pytest.mark.parametrize("command", [("sweep", "validate"), ("sweep", "plan", "--base", "base")])
def test_aliases_that_never_end_are_invalid_yaml(
    bench: GitRepo, file: str, tail: str, says: str, command: tuple[str, ...]
) -> None:
    """An alias inside its own anchor recursed without end (RecursionError, exit 3); nine
    nested lists of ten aliases (10**9 values) held `sweep validate` for good."""
    bench.commit("aliases", **{file: (bench.path / file).read_text() + tail})
    result = bench.infx(*command)
    assert result.exit_code == 1, result.output
    assert f"{file}: invalid YAML: {says}" in result.output


DEEP = "deep:\n" + "".join(f"{' ' * i}a:\n" for i in range(1, 900)) + f"{' ' * 900}b: 1\n"


@pytest.mark.parametrize("file", ["configs/amd-master.yaml", "configs/runners.yaml"])
def test_nesting_past_pythons_recursion_is_one_line(bench: GitRepo, file: str) -> None:
    """900 levels pass libyaml (its limit is 1,000) and crashed PyYAML's constructor or the
    plain-data walk (whichever reader read it) with a RecursionError (exit 3)."""
    bench.commit("deep", **{file: (bench.path / file).read_text() + DEEP})
    result = bench.infx("sweep", "validate")
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"infx: error: {file}") and "nested" in result.output
    assert "Traceback" not in result.output
