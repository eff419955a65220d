"""A malformed master config or runners file is a rule the repository's content breaks: every
sweep command that reads it exits 1 with one line naming the file (an unreadable or missing
file stays a usage error, 2)."""

from __future__ import annotations

import pytest

from tests.conftest import GitRepo, entry
from tests.matrix.conftest import bench

__all__ = ["bench"]

MALFORMED = {
    "configs/nvidia-master.yaml": (
        "foo: [unclosed\n",  # not YAML
        "- a list\n",  # not a mapping of config keys
        "cfg-a: 1\ncfg-a: 2\n",  # a key defined twice
    ),
    "configs/runners.yaml": (
        ": bad: [\n",  # not YAML
        "- a list\n",  # not the runners schema
        "labels:\n  mi355x: [2024-01-01]\n",  # a YAML date where a node name goes
    ),
}
CASES = [(name, text) for name, texts in MALFORMED.items() for text in texts]
COMMANDS = {
    "plan": ("sweep", "plan", "--base", "base", "--head", "HEAD"),
    "validate": ("sweep", "validate"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("name", "text"), CASES)
def test_a_malformed_config_file_exits_1_with_one_line(
    bench: GitRepo, command: str, name: str, text: str
) -> None:
    bench.commit(**{"perf-changelog.yaml": entry(), name.replace("/", "__"): text})
    result = bench.infx(*COMMANDS[command])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"infx: error: {name}"), result.output
    assert result.output.count("\n") == 1, result.output
