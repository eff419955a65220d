"""The I/O edge of sweep planning: read changelog, master configs and runners at git refs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml.error import YAMLError

from infx import git
from infx.errors import ConfigError
from infx.matrix.expand import Hardware, hardware_table
from infx.matrix.load import MasterConfigs, parse_masters, read_masters_at
from infx.matrix.validate import ConfigProblem, Runners, validate_runners
from infx.yamlio import load_fast, yaml_error_text


def load_masters(root: Path, tree: str | None, pattern: str) -> MasterConfigs:
    return parse_masters(read_masters_at(tree, pattern, root))


@dataclass
class RunnerInfo:
    runners: Runners | None
    problems: list[ConfigProblem]

    @property
    def hardware(self) -> dict[str, Hardware]:
        if self.runners is None:
            return {}
        return hardware_table(self.runners.hardware)


def load_runners(root: Path, tree: str | None, path: str) -> RunnerInfo:
    data = git.read_at(tree, path, root)
    if data is None:
        return RunnerInfo(
            None, [ConfigProblem(path, None, "runners", "runners file not found", "warning")]
        )
    try:
        doc = load_fast(data)
    except YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {yaml_error_text(exc)}") from None
    runners, problems = validate_runners(doc, path, data)
    if problems:
        raise ConfigError("; ".join(p.text() for p in problems))
    return RunnerInfo(runners, [])
