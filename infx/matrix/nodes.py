"""How many nodes a multi-node row asks the scheduler for (`node-count`, formats that print
it), as InferenceX's planner of that era counts them.

In order: an aggregate config's `num-nodes`; else the srt-slurm recipe the row names, when
the repository holds it; else per role, a `PREFILL_NODES=`/`DECODE_NODES=` setting, or the
role's GPUs (num-worker x tp x pp x pcp-size) over the GPUs of one node of its hardware,
rounded up. A node's GPUs come from the runners file's node facts for the worker's
`hardware` label (else the config's runner); a label without them takes the one GPU count
its GPU family (the label's first word, without `cluster:`) agrees on.

Where the recipe is named and how it counts depends on the format (`Format.recipe`,
`Format.recipe_nodes`):

- `resources` (pr3058): a worker's `CONFIG_FILE=` setting names it; its `resources` say
  `agg_nodes`, or `prefill_nodes` + `decode_nodes`.
- `roles` (e2e): the row's `srt-recipe` (`path[:variant]`) names it. The recipe declares
  `schema: 2`; a file of variants (`base` plus `override_<name>` blocks) is read as the
  variant named (`base`, or an override merged over base: mappings merge, a null deletes,
  anything else replaces); a zip group or a file of another schema counts nothing, so the
  topology estimates. The count is the nodes of its `roles` (a role on `colocate` takes
  none) plus its enabled services' node pools and, when any of the discovery services
  (etcd/nats, or `infra.etcd_nats_dedicated_node`), the frontend or the benchmark client
  wants a node of its own, one more per such role, or one in all when the client shares
  the frontend's node (`benchmark.colocate_with_frontend`, the default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from infx.errors import ConfigError
from infx.matrix.recipes import (
    RecipeReader,
    mapping,
    read_recipe,
    recipe_path,
    variant,
)
from infx.numbers import SQLITE_INTEGER_END

_CONFIG_FILE = "CONFIG_FILE="
_MOST = SQLITE_INTEGER_END - 1  # the most nodes a count may say: infx's whole-number bound


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


def _count(name: str, digits: str) -> int:
    """`digits` as a role's node count, 1 to `_MOST`, or one line refusing it."""
    try:
        value = int(digits)
    except ValueError:  # past int()'s 4,300 digits, which InferenceX's planner fails on too
        value = 0
    if 0 < value < SQLITE_INTEGER_END:
        return value
    shown = digits if len(digits) <= 24 else f"{digits[:20]}... ({len(digits)} digits)"
    raise ConfigError(f"{name}={shown} is not a node count (a whole number, 1 to {_MOST})")


def _override(worker: Mapping[str, Any], name: str) -> int | None:
    """The role's node count its `NAME=` settings give, read as InferenceX's planner reads
    them: only a setting that is the whole assignment counts (`NAME=2 ` counts nothing), and
    its digits are any script's decimal digits, as Python's `\\d` and int() take them
    (`NAME=\\u0663` is 3). The estimate prices the row at this count (`node-count`)."""
    pattern = re.compile(rf"^{re.escape(name)}=(\d+)$")
    values = {_count(name, m.group(1)) for s in _settings(worker) if (m := pattern.match(s))}
    if len(values) > 1:
        raise ConfigError(f"conflicting {name} settings: {sorted(values)}")
    return values.pop() if values else None


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
    path = recipe_path(files.pop(), "CONFIG_FILE=")
    doc = read_recipe(path, read)
    if doc is None:
        return None
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


def _extra_nodes(recipe: Mapping[str, Any], path: str) -> int:
    """Nodes a schema-2 recipe takes besides its roles: service pools and dedicated nodes."""
    services = [
        s for s in recipe.get("services") or [] if isinstance(s, Mapping) and s.get("enabled", True)
    ]
    pools = sum(int(s.get("nodes") or 0) for s in services)
    dedicated = bool(mapping(recipe.get("infra")).get("etcd_nats_dedicated_node", False))
    discovery = {
        mapping(s.get("placement")).get("node") == "dedicated"
        for s in services
        if s.get("type") in ("etcd", "nats")
    }
    if len(discovery) > 1:
        raise ConfigError(f"{path}: the recipe's etcd and nats disagree on a dedicated node")
    if discovery:
        dedicated = discovery.pop()
    roles = int(dedicated)
    for section, legacy in (("frontend", "dedicated_node"), ("benchmark", "client_dedicated_node")):
        settings = mapping(recipe.get(section))
        own = mapping(settings.get("placement")).get("node") == "dedicated"
        roles += int(own or bool(settings.get(legacy, False)))
    if roles and mapping(recipe.get("benchmark")).get("colocate_with_frontend", True):
        roles = 1
    return pools + roles


def _role_recipe_nodes(name: str, read: RecipeReader) -> int | None:
    """Nodes of the schema-2 srt-slurm recipe `name` (`path[:variant]`), None when it cannot
    tell (not in the repository, a zip group, a variant of another schema)."""
    found = variant(name, read)
    recipe, path = found.recipe, found.path
    if recipe is None or (found.picked and recipe.get("schema") != 2):
        return None
    if recipe.get("schema") != 2:
        raise ConfigError(f"{path}: srt-slurm recipes must declare schema: 2")
    roles = mapping(recipe.get("roles"))
    if not roles:
        raise ConfigError(f"{path}: the recipe has no worker roles")
    total = 0
    for role, spec in roles.items():
        nodes = mapping(spec).get("nodes")
        if nodes is None:
            raise ConfigError(f"{path}: recipe role {role!r} must say its nodes")
        if nodes == "colocate":
            continue
        try:
            total += int(nodes)
        except (TypeError, ValueError):
            raise ConfigError(f"{path}: role {role!r} nodes {nodes!r} is not a count") from None
    return total + _extra_nodes(recipe, path)


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
    counting: Literal["resources", "roles"] = "resources",
) -> int:
    """The scheduling node count of a multi-node row (its prefill and decode blocks built),
    its recipe counted the format's way (`counting`)."""
    if not row.get("disagg") and num_nodes is not None:
        return num_nodes
    if num_nodes is not None:
        raise ConfigError("num-nodes is not valid for a disaggregated config")
    prefill, decode = row["prefill"], row["decode"]
    if counting == "roles":
        named = row.get("srt-recipe")
        from_recipe = _role_recipe_nodes(str(named), read) if named and read else None
    else:
        from_recipe = _recipe_nodes(prefill, decode, read)
    if from_recipe is not None:
        return from_recipe
    runner = str(row["runner"])
    return _role_nodes(prefill, "prefill", runner, gpus) + _role_nodes(
        decode, "decode", runner, gpus
    )
