"""Validate master configs and runners.yaml: schema first, then the rules JSON Schema cannot state.

Problems name the config key and the file line. Parsing uses the C loader; a file
is re-read with the round-trip loader only when a problem needs its line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from infx import schemas
from infx.matrix.load import MasterConfigs
from infx.yamlio import load_with_lines


@dataclass(frozen=True, order=True)
class ConfigProblem:
    file: str
    line: int | None
    key: str
    message: str
    severity: str = "error"

    def text(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity}: {self.key}: {self.message}"


@cache
def _tree(data: bytes) -> Any:
    return load_with_lines(data)


def locate(data: bytes, path: Iterable[Any]) -> int | None:
    """1-based line of the node at `path` (falling back to the deepest parent found)."""
    try:
        node = _tree(data)
    except Exception:  # the fast loader accepted it; positions are a courtesy
        return None
    line = None
    for step in path:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(node, dict):
                line = lc.key(step)[0] + 1 if lc else line
            elif isinstance(node, list):
                line = lc.item(step)[0] + 1 if lc else line
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
    return line


def _spaces(config: dict[str, Any]) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    scenarios = config.get("scenarios") if isinstance(config, dict) else None
    if not isinstance(scenarios, dict):
        return
    for scenario, items in scenarios.items():
        for i, item in enumerate(items if isinstance(items, list) else []):
            spaces = item.get("search-space") if isinstance(item, dict) else None
            for j, space in enumerate(spaces if isinstance(spaces, list) else []):
                if isinstance(space, dict):
                    yield ["scenarios", scenario, i, "search-space", j], space


def _rule_problems(config: dict[str, Any]) -> Iterator[tuple[list[Any], str]]:
    for path, space in _spaces(config):
        start, end = space.get("conc-start"), space.get("conc-end")
        if isinstance(start, int) and isinstance(end, int) and start > end:
            yield [*path, "conc-start"], f"conc-start {start} is greater than conc-end {end}"
        blocks = [(path, space)] + [
            ([*path, role], space[role])
            for role in ("prefill", "decode")
            if isinstance(space.get(role), dict)
        ]
        for where, block in blocks:
            tp, dcp = block.get("tp"), block.get("dcp-size", 1)
            if isinstance(tp, int) and isinstance(dcp, int) and dcp > 0 and tp % dcp:
                yield [*where, "dcp-size"], f"tp {tp} is not divisible by dcp-size {dcp}"


def validate_configs(
    masters: MasterConfigs, keys: Iterable[str] | None = None
) -> list[ConfigProblem]:
    """Schema and rule problems of the given configs (all when `keys` is None)."""
    known = schemas.known_keys("master-config")
    problems = []
    for key in masters.keys() if keys is None else keys:
        config = masters.config(key)
        source = masters.sources[key]
        data = masters.texts[source]
        for error in schemas.errors("master-config", {key: config}):
            message = schemas.describe(error, known)
            if message is None:
                continue
            path = list(error.absolute_path)
            problems.append(
                ConfigProblem(source, locate(data, path), key, message.removeprefix(f"{key}."))
            )
        for path, message in _rule_problems(config):
            dotted = ".".join(map(str, path))
            problems.append(
                ConfigProblem(source, locate(data, [key, *path]), key, f"{dotted}: {message}")
            )
    return sorted(problems)


@dataclass
class Runners:
    labels: dict[str, list[str]]
    hardware: dict[str, dict[str, int]]


def validate_runners(
    doc: Any, name: str, data: bytes
) -> tuple[Runners | None, list[ConfigProblem]]:
    problems = []
    for error in schemas.errors("runners", doc):
        message = schemas.describe(error)
        if message is not None:
            problems.append(
                ConfigProblem(name, locate(data, list(error.absolute_path)), "runners", message)
            )
    if problems:
        return None, problems
    return Runners(dict(doc["labels"]), dict(doc.get("hardware") or {})), []


def runner_label_problems(
    masters: MasterConfigs, runners: Runners, strict: bool, keys: Iterable[str] | None = None
) -> list[ConfigProblem]:
    """A runner label no runner carries means jobs that queue forever."""
    problems = []
    for key in masters.keys() if keys is None else keys:
        config = masters.config(key)
        label = config.get("runner") if isinstance(config, dict) else None
        if isinstance(label, str) and label not in runners.labels:
            source = masters.sources[key]
            problems.append(
                ConfigProblem(
                    source,
                    locate(masters.texts[source], [key, "runner"]),
                    key,
                    f"runner label {label!r} is not in runners.yaml; its jobs would queue forever",
                    "error" if strict else "warning",
                )
            )
    return sorted(problems)
