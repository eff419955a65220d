"""Which master config each planned row came from. The plan itself stays byte for byte what
InferenceX's planner writes (its rows name no config); `infx sweep plan` writes this map
beside it (`config-keys.json` in the sweep-plan artifact), `infx sweep chunk` hands each
job its config's key, `infx sweep row-env` exports it and `infx results process` writes it
into the job's result rows: two configs that measure the same identity (InferenceX's
`...-disagg-mtp` and `...-disagg-8k1k-mtp`) stay two points all the way to the verdict.

A row is found by its signature: the row without what a plan varies per point or marks
for evals (concurrency, experiment name, fingerprint, eval flags), so trimmed, eval and
canary rows find the config they were expanded from. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from infx.digest import hexdigest
from infx.matrix.contract import printed
from infx.matrix.expand import expand

if TYPE_CHECKING:
    from infx.matrix.plan import Revision

FILE = "config-keys.json"
FORMAT = "infx-config-keys/1"
_NOT_SIGNED = frozenset(
    {
        "conc",
        "exp-name",
        "recipe-fingerprint",
        "run-eval",
        "eval-only",
        "eval-conc",
        "eval-all-concs",
        "eval-framework",
        "eval-suite",
    }
)


def signature(row: Mapping[str, Any]) -> str:
    """What a row measures and how, less its point and eval fields."""
    signed = {k: v for k, v in row.items() if k not in _NOT_SIGNED}
    return hexdigest(signed)[:32]


def origins(keys: Iterable[str], head: Revision) -> dict[str, str]:
    """Signature -> the config key whose rows carry it, for the configs a plan selected (the
    first of them when two configs expand into identical rows: those measure one point),
    built in the format the plan was."""
    found: dict[str, str] = {}
    fmt = head.fmt
    for key in keys:
        config = head.masters.config(key)
        for row in expand(key, config, head.hardware, fmt=fmt, recipes=head.recipes):
            found.setdefault(signature(printed(row, fmt)), key)
    return found


def document(found: Mapping[str, str]) -> dict[str, Any]:
    """config-keys.json."""
    return {"format": FORMAT, "rows": dict(sorted(found.items()))}


def read(doc: Any) -> dict[str, str] | None:
    """The map of a config-keys.json document, or None when it is not one."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    rows = doc.get("rows")
    if not isinstance(rows, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in rows.items()
    ):
        return None
    return dict(rows)


def keys_of(rows: Iterable[Mapping[str, Any]], found: Mapping[str, str]) -> list[str]:
    """Each row's config key ("" when the map has none: the row's results then name no
    config, and are told apart by image)."""
    return [found.get(signature(row), "") for row in rows]
