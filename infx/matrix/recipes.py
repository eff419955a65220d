"""The srt-slurm recipes a multi-node row names, as the repository holds them.

A recipe is named by a worker's `CONFIG_FILE=` setting (format pr3058) or by a search
space's `srt-recipe` (format e2e), as `path[:variant]` relative to the recipes folder. A
file of variants holds `base` and `override_<name>` blocks; the variant `base`, or an
override merged over base (mappings merge, a null deletes, anything else replaces), is
the recipe the launcher submits, before it binds the point (concurrency, environment).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from infx.errors import ConfigError

RECIPES_ROOT = "benchmarks/multi_node/srt-slurm-recipes"

# Reads a file of the repository at the planned revision (None: not there).
RecipeReader = Callable[[str], bytes | None]

# Parts of a recipe that name a point or a cluster rather than the recipe: the job name,
# the point's concurrencies and the cluster's exporter port. The fingerprint leaves them out.
POINT_PATHS = (
    ("name",),
    ("benchmark", "concurrencies"),
    ("benchmark", "env", "CONC"),
    ("telemetry", "dcgm_exporter", "port"),
)


def recipe_path(name: str, source: str) -> str:
    """The repository path of a recipe file named `name` (by `source`, for messages), which
    must stay under the recipes folder."""
    path = posixpath.normpath(
        name
        if name.startswith(f"{RECIPES_ROOT}/")
        else f"{RECIPES_ROOT}/{name.removeprefix('recipes/')}"
    )
    if not path.startswith(f"{RECIPES_ROOT}/"):
        raise ConfigError(f"{source}{name} points outside {RECIPES_ROOT}/")
    return path


def read_recipe(path: str, read: RecipeReader) -> Any:
    """The parsed recipe file at `path`; None when the repository does not hold it (some
    recipes live only in the runtime image)."""
    data = read(path)
    if data is None:
        return None
    from infx.matrix.load import load_yaml, yaml_error, yaml_problem

    try:
        return load_yaml(data)
    except yaml_error() as exc:
        raise yaml_problem(path, exc) from None


def merged(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """An override variant over its base, as srtctl merges them."""
    out = dict(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class Variant:
    """One named recipe: its file, and the recipe itself (None: infx cannot resolve it, and
    `why` says so)."""

    path: str
    recipe: Mapping[str, Any] | None
    why: str = ""
    # Picked from a file of variants (base and overrides), not a file of one recipe.
    picked: bool = False


def variant(name: str, read: RecipeReader) -> Variant:
    """The recipe `path[:variant]` names, as the repository holds it."""
    file, _, selector = name.partition(":")
    path = recipe_path(file, "srt-recipe ")
    doc = read_recipe(path, read)
    if doc is None:
        return Variant(path, None, "the repository does not hold it")
    if not isinstance(doc, Mapping):
        raise ConfigError(f"{path}: the recipe is not a mapping")
    if "base" not in doc:
        # A file of one recipe is that recipe, whatever variant is named.
        return Variant(path, doc)
    if not (selector == "base" or (selector.startswith("override_") and selector in doc)):
        return Variant(path, None, f"variant {selector!r} is not base or one of its overrides")
    found = merged(mapping(doc["base"]), mapping(doc.get(selector)))
    found.setdefault("schema", doc.get("schema"))
    return Variant(path, found, picked=True)


def _without(block: Mapping[str, Any], path: tuple[str, ...]) -> Mapping[str, Any]:
    key, *rest = path
    if key not in block:
        return block
    if not rest:
        return {k: v for k, v in block.items() if k != key}
    inner = block[key]
    if not isinstance(inner, Mapping):
        return block
    return {**block, key: _without(inner, tuple(rest))}


def fingerprinted(name: str, read: RecipeReader) -> Mapping[str, Any]:
    """The recipe `name` as a fingerprint hashes it: the variant without its point paths.
    A recipe infx cannot resolve stops the plan, naming it: hashing the row alone would give
    two different recipes one fingerprint."""
    found = variant(name, read)
    if found.recipe is None:
        raise ConfigError(f"srt-recipe {name}: cannot fingerprint it: {found.why}")
    recipe = found.recipe
    for path in POINT_PATHS:
        recipe = _without(recipe, path)
    return recipe
