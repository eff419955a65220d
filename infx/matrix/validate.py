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
from infx.formats import PR2707, Format
from infx.matrix.expand import POWER_SEQ
from infx.matrix.load import MasterConfigs


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
    """The node graph of a YAML text (PyYAML's C composer: positions without building data)."""
    import yaml

    try:
        return yaml.compose(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None


def locate(data: bytes, path: Iterable[Any]) -> int | None:
    """1-based line of the node at `path` (falling back to the deepest parent found)."""
    node = _tree(data)
    line = None
    for step in path:
        children: list[tuple[Any, Any]] = []
        if node is not None and node.id == "mapping":
            children = [(k.value, k) for k, _ in node.value]
            values = [v for _, v in node.value]
        elif node is not None and node.id == "sequence":
            children = [(i, item) for i, item in enumerate(node.value)]
            values = list(node.value)
        found = [i for i, (name, _) in enumerate(children) if name == step or name == str(step)]
        if not found:
            break
        line = children[found[0]][1].start_mark.line + 1
        node = values[found[0]]
    return line


def locate_in_config(masters: MasterConfigs, key: str, path: Iterable[Any]) -> int | None:
    """File line of `path` inside config `key`, parsing only that config's lines."""
    text, first = masters.text_of(key)
    line = locate(text, [key, *path])
    return None if line is None else line + first - 1


_PLAIN = (str, int, float, bool, type(None))
_DEEPEST = 100  # levels of nesting; real configs and runners.yaml have fewer than ten
_KINDS = {"bytes": "binary value", "date": "date", "datetime": "timestamp", "set": "set"}


def _not_plain(value: object, path: list[Any]) -> tuple[list[Any], str] | None:
    """Where a parsed YAML value holds something JSON has no word for (a YAML date, binary,
    set or a non-string key), which the schemas cannot judge; None when it is plain data.
    Nesting past `_DEEPEST` is refused too: it recursed past Python's limit (exit 3)."""
    if len(path) > _DEEPEST and isinstance(value, (dict, list)):
        return path[:3], f"nested more than {_DEEPEST} levels deep"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return path, f"key {key!r} is not a string (quote it)"
            found = _not_plain(item, [*path, key])
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _not_plain(item, [*path, index])
            if found is not None:
                return found
        return None
    if isinstance(value, _PLAIN):
        return None
    kind = _KINDS.get(type(value).__name__, type(value).__name__)
    return path, f"{value!r:.40} is a YAML {kind}, not plain data (quote it)"


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


def _rule_problems(config: dict[str, Any], fmt: Format) -> Iterator[tuple[list[Any], str]]:
    scenarios = config.get("scenarios") if isinstance(config, dict) else None
    fixed = scenarios.get("fixed-seq-len") if isinstance(scenarios, dict) else None
    for i, item in enumerate(fixed if fmt.require_power and isinstance(fixed, list) else []):
        asks = isinstance(item, dict) and item.get("require-power") is True
        if asks and (item.get("isl"), item.get("osl")) != POWER_SEQ:
            yield (
                ["scenarios", "fixed-seq-len", i, "require-power"],
                f"require-power is for isl {POWER_SEQ[0]} / osl {POWER_SEQ[1]} only "
                "(the power rollout measures 8k1k)",
            )
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
    masters: MasterConfigs, keys: Iterable[str] | None = None, fmt: Format = PR2707
) -> list[ConfigProblem]:
    """Schema and rule problems of the given configs (all when `keys` is None), by the
    format's master-config schema."""
    schema = fmt.master_schema
    known = schemas.known_keys(schema)
    problems = []
    chosen = masters.items() if keys is None else ((k, masters.config(k)) for k in keys)
    for key, config in chosen:
        source = masters.sources[key]
        odd = _not_plain(config, [])
        if odd is not None:
            where = ".".join(map(str, odd[0]))
            line = locate_in_config(masters, key, odd[0])
            problems.append(ConfigProblem(source, line, key, f"{where}: {odd[1]}".lstrip(": ")))
            continue
        errors = list(schemas.errors(schema, {key: config}))
        explained = [e for e in errors if schemas.describe(e, known) is not None]
        for error in explained or errors:
            # A key valid elsewhere in the schema (a search space's `srt-recipe` written at
            # the config's top) is named when no sibling rule's error explains it.
            message = schemas.describe(error, known if explained else frozenset())
            if message is None:
                continue
            path = list(error.absolute_path)[1:]
            if isinstance(error.instance, dict) and "unknown key(s)" in message:
                # At the first unknown key's own line, not its parent's.
                names = message.rsplit("unknown key(s) ", 1)[-1].split(", ")
                path += [k for k in error.instance if str(k) in names][:1]
            problems.append(
                ConfigProblem(
                    source,
                    locate_in_config(masters, key, path),
                    key,
                    message.removeprefix(f"{key}.").removeprefix(f"{key}: "),
                )
            )
        for path, message in _rule_problems(config, fmt):
            dotted = ".".join(map(str, path))
            problems.append(
                ConfigProblem(
                    source, locate_in_config(masters, key, path), key, f"{dotted}: {message}"
                )
            )
    return sorted(problems)


CLUSTER = "cluster:"
_FACTS = ("available-cpu-dram-mib", "gpus-per-node")


@dataclass
class Runners:
    """runners.yaml as the planner reads it: the labels, each label's node facts (from
    `hardware`, or from `clusters` under `cluster:<id>`), and which of those two sections the
    file holds (the format in force must accept them: `runners_section_problems`)."""

    labels: dict[str, list[str]]
    hardware: dict[str, dict[str, int]]
    sections: tuple[str, ...] = ()


def _cluster_problems(doc: dict[str, Any], name: str, data: bytes) -> list[ConfigProblem]:
    """The ties between `clusters` and the labels: every cluster has its `cluster:<id>`
    label and every such label a cluster, and every runner sits in exactly one cluster."""
    labels: dict[str, list[str]] = doc["labels"]
    clusters: dict[str, Any] = doc["clusters"]
    own = {
        label.removeprefix(CLUSTER): runners
        for label, runners in labels.items()
        if label.startswith(CLUSTER)
    }
    found = []

    def problem(path: list[Any], message: str) -> None:
        found.append(ConfigProblem(name, locate(data, path), "runners", message))

    for cid in clusters:
        if cid not in own:
            problem(["clusters", cid], f"clusters.{cid}: no label {CLUSTER}{cid} lists its runners")
    for cid in own:
        if cid not in clusters:
            problem(
                ["labels", f"{CLUSTER}{cid}"], f"labels.{CLUSTER}{cid}: no clusters.{cid} record"
            )
    homes: dict[str, list[str]] = {}
    for cid, runners in own.items():
        for runner in runners:
            homes.setdefault(runner, []).append(cid)
    for label, runners in labels.items():
        for runner in runners:
            where = homes.get(runner, [])
            if len(where) != 1:
                said = f"several: {', '.join(where)}" if where else "none"
                problem(
                    ["labels", label],
                    f"labels.{label}: runner {runner!r} must be in exactly one cluster label "
                    f"({said})",
                )
                homes[runner] = ["reported"]
    return found


def validate_runners(
    doc: Any, name: str, data: bytes
) -> tuple[Runners | None, list[ConfigProblem]]:
    problems = []
    odd = _not_plain(doc, [])
    if odd is not None:
        where = ".".join(map(str, odd[0])) or "entry"
        line = locate(data, odd[0])
        return None, [ConfigProblem(name, line, "runners", f"{where}: {odd[1]}")]
    for error in schemas.errors("runners", doc):
        message = schemas.describe(error)
        if message is not None:
            problems.append(
                ConfigProblem(name, locate(data, list(error.absolute_path)), "runners", message)
            )
    if not problems and "clusters" in doc:
        problems = _cluster_problems(doc, name, data)
    if problems:
        return None, problems
    hardware = dict(doc.get("hardware") or {})
    for cid, record in (doc.get("clusters") or {}).items():
        hardware[f"{CLUSTER}{cid}"] = {k: record[k] for k in _FACTS if k in record}
    sections = tuple(key for key in ("hardware", "clusters") if key in doc)
    return Runners(dict(doc["labels"]), hardware, sections), []


def runners_section_problems(
    runners: Runners | None, fmt: Format, name: str, data: bytes | None = None
) -> list[ConfigProblem]:
    """What the format in force refuses in runners.yaml (`data`, for the lines), one line
    each: the section it does not read node facts from (`hardware` or `clusters`), and, in
    a format of clusters, a file without that section."""
    if runners is None:
        return []
    found = [
        ConfigProblem(
            name,
            locate(data, [section]) if data else None,
            "runners",
            f"{section}: not a section of runners.yaml in InferenceX format {fmt}, which "
            f"reads node facts from `{fmt.runners}:`",
        )
        for section in runners.sections
        if section != fmt.runners
    ]
    if fmt.runners == "clusters" and "clusters" not in runners.sections:
        found.append(
            ConfigProblem(
                name,
                None,
                "runners",
                f"no `clusters:` section, which InferenceX format {fmt} requires (each "
                "cluster's record, its runners under the label cluster:<id>)",
            )
        )
    return found


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
                    locate_in_config(masters, key, ["runner"]),
                    key,
                    f"runner label {label!r} is not in runners.yaml; its jobs would queue forever",
                    "error" if strict else "warning",
                )
            )
    return sorted(problems)
