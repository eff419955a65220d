"""How many nodes a multi-node row asks the scheduler for (`node-count`, formats that print
it), as InferenceX's planner of that era counts them.

In order: an aggregate config's `num-nodes`; else the srt-slurm recipe a worker names with
`CONFIG_FILE=` in its additional settings, when the repository holds it (its
`resources`: `agg_nodes`, or `prefill_nodes` + `decode_nodes`); else per role, a
`PREFILL_NODES=`/`DECODE_NODES=` setting, or the role's GPUs (num-worker x tp x pp x
pcp-size) over the GPUs of one node of its hardware, rounded up. A node's GPUs come from the
runners file's hardware entry for the worker's `hardware` label (else the config's runner);
a label without an entry takes the one GPU count its GPU family (the label's first word,
without `cluster:`) agrees on.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable, Mapping
from typing import Any

from infx.errors import ConfigError

RECIPES_ROOT = "benchmarks/multi_node/srt-slurm-recipes"
_CONFIG_FILE = "CONFIG_FILE="

# Reads a file of the repository at the planned revision (None: not there).
RecipeReader = Callable[[str], bytes | None]


def _family(label: str) -> str:
    return label.removeprefix("cluster:").split("-", 1)[0]


def gpus_per_node(label: str, gpus: Mapping[str, int]) -> int:
    """GPUs of one node of `label`: its own hardware entry, else its family's single count."""
    if label in gpus:
        return gpus[label]
    counts = {count for name, count in gpus.items() if _family(name) == _family(label)}
    if len(counts) == 1:
        return counts.pop()
    if not counts:
        raise ConfigError(
            f"cannot tell the GPUs per node of {label!r}: configs/runners.yaml has no hardware "
            "entry for it or its GPU family"
        )
    raise ConfigError(
        f"the GPUs per node of {label!r} are ambiguous: its GPU family's hardware entries "
        f"say {sorted(counts)}"
    )


def _settings(worker: Mapping[str, Any]) -> list[str]:
    found = worker.get("additional-settings") or []
    return [s for s in found if isinstance(s, str)]


def _override(worker: Mapping[str, Any], name: str) -> int | None:
    pattern = re.compile(rf"^{re.escape(name)}=(\d+)$")
    values = [int(m.group(1)) for s in _settings(worker) if (m := pattern.match(s))]
    if not values:
        return None
    if len(set(values)) != 1 or values[0] <= 0:
        raise ConfigError(f"conflicting or invalid {name} settings: {values}")
    return values[0]


def _recipe_nodes(
    prefill: Mapping[str, Any], decode: Mapping[str, Any], read: RecipeReader | None
) -> int | None:
    files = {
        s.split("=", 1)[1]
        for worker in (prefill, decode)
        for s in _settings(worker)
        if s.startswith(_CONFIG_FILE)
    }
    if not files or read is None:
        return None
    if len(files) != 1:
        raise ConfigError(f"conflicting CONFIG_FILE settings: {sorted(files)}")
    name = files.pop()
    path = posixpath.normpath(
        name
        if name.startswith(f"{RECIPES_ROOT}/")
        else f"{RECIPES_ROOT}/{name.removeprefix('recipes/')}"
    )
    if not path.startswith(f"{RECIPES_ROOT}/"):
        raise ConfigError(f"CONFIG_FILE={name} points outside {RECIPES_ROOT}/")
    data = read(path)
    if data is None:
        # Some recipes live only in the runtime image: the topology is the estimate then.
        return None
    from infx.matrix.load import load_yaml, yaml_error, yaml_problem

    try:
        doc = load_yaml(data)
    except yaml_error() as exc:
        raise yaml_problem(path, exc) from None
    resources = doc.get("resources") if isinstance(doc, dict) else None
    if not isinstance(resources, dict):
        raise ConfigError(f"{path}: the recipe has no `resources` mapping")
    try:
        if "agg_nodes" in resources:
            return int(resources["agg_nodes"])
        if "prefill_nodes" in resources and "decode_nodes" in resources:
            return int(resources["prefill_nodes"]) + int(resources["decode_nodes"])
    except (TypeError, ValueError):
        raise ConfigError(f"{path}: the recipe's node counts are not whole numbers") from None
    raise ConfigError(f"{path}: the recipe's resources name no node count")


def _role_nodes(worker: Mapping[str, Any], role: str, runner: str, gpus: Mapping[str, int]) -> int:
    override = _override(worker, f"{role.upper()}_NODES")
    if override is not None:
        return override
    per_node = gpus_per_node(str(worker.get("hardware") or runner), gpus)
    total: int = worker["num-worker"] * worker["tp"] * worker.get("pp", 1)
    total *= worker.get("pcp-size", 1)
    return math.ceil(total / per_node)


def node_count(
    row: Mapping[str, Any],
    num_nodes: int | None,
    gpus: Mapping[str, int],
    read: RecipeReader | None,
) -> int:
    """The scheduling node count of a multi-node row (its prefill and decode blocks built)."""
    if not row.get("disagg") and num_nodes is not None:
        return num_nodes
    if num_nodes is not None:
        raise ConfigError("num-nodes is not valid for a disaggregated config")
    prefill, decode = row["prefill"], row["decode"]
    from_recipe = _recipe_nodes(prefill, decode, read)
    if from_recipe is not None:
        return from_recipe
    runner = str(row["runner"])
    return _role_nodes(prefill, "prefill", runner, gpus) + _role_nodes(
        decode, "decode", runner, gpus
    )
