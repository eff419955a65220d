"""Whether a changelog entry selects any benchmark job, and why not when it selects none.

The gate asks this of each appended entry: an entry that selects nothing would plan
"Nothing to run" and let the sweep go green having run nothing. The verdict is the
planner's own (`build_plan` of the entry alone, with the default flags); the reason is
read from the same configs afterwards, only when there is nothing.

Only a field that narrows the selection can make it empty: a valid config has at least
one scenario, each with a non-empty search space and concurrency (the master-config
schema says so), and an entry without `scenario-type`, `evals-only` or `all-evals`
plans throughput rows for every scenario of every config it names. Such an entry is
answered without loading the planner, which keeps the common gate run as fast as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from infx.errors import ConfigError

if TYPE_CHECKING:
    from infx.formats import Format
    from infx.matrix.expand import Hardware
    from infx.matrix.load import MasterConfigs
    from infx.matrix.plan import Revision

NARROWING = ("scenario-type", "evals-only", "all-evals")

# How many configs a reason names before it counts the rest.
_SHOWN = 3


def _planned(buckets: Mapping[str, Any]) -> bool:
    from infx.matrix.rows import EVAL_BUCKETS

    shapes = (buckets.get(shape) or {} for shape in ("single_node", "multi_node"))
    return any(rows for shape in shapes for rows in shape.values()) or any(
        buckets.get(name) for name in EVAL_BUCKETS
    )


def nothing_selected(
    entry: Mapping[str, Any],
    masters: MasterConfigs,
    hardware: Mapping[str, Hardware] | None = None,
    fmt: Format | None = None,
) -> str | None:
    """Why `entry`, planned on its own against `masters`, selects no benchmark job; None
    when it selects some, and when only the planner can judge it (append-only entries need
    the base revision; an invalid selected config is the planner's and `sweep validate`'s
    to report, as is a runner missing from `hardware`)."""
    if entry.get("append-only") or not any(entry.get(field) for field in NARROWING):
        return None
    from infx.formats import PR2707
    from infx.matrix.plan import Revision, build_plan, entry_configs
    from infx.matrix.validate import validate_configs

    head = Revision(masters, hardware or {}, fmt or PR2707)
    try:
        configs = entry_configs(entry, head.masters.keys())
        if any(p.severity == "error" for p in validate_configs(head.masters, configs, head.fmt)):
            return None
        if _planned(build_plan([dict(entry)], head).buckets):
            return None
        return _reason(entry, configs, head)
    except ConfigError:
        return None


def _reason(entry: Mapping[str, Any], configs: list[str], head: Revision) -> str:
    from infx.matrix.evals import eval_rows
    from infx.matrix.expand import SCENARIOS, expand, is_multinode

    wanted = tuple(entry.get("scenario-type") or SCENARIOS)
    present = {
        key: [s for s in SCENARIOS if (head.masters.config(key).get("scenarios") or {}).get(s)]
        for key in configs
    }
    if not any(set(found) & set(wanted) for found in present.values()):
        shown = [
            f"{key} has only {', '.join(found)}" if found else f"{key} has no scenario"
            for key, found in list(present.items())[:_SHOWN]
        ]
        if len(present) > _SHOWN:
            shown.append(f"and {len(present) - _SHOWN} more configs")
        return f"scenario-type {', '.join(wanted)}: {'; '.join(shown)}"
    flag = "all-evals" if entry.get("all-evals") else "evals-only"
    if entry.get("evals-only") or entry.get("all-evals"):
        points = [
            row
            for key in configs
            for row in expand(key, head.masters.config(key), head.hardware, wanted, head.fmt)
        ]
        rows = eval_rows(points, bool(entry.get("all-evals")), head.fmt)
        floor = entry.get("eval-min-prefill-ep")
        eps = [row["prefill"].get("ep", 1) for row in rows if is_multinode(row)]
        if eps and floor is not None:
            return (
                f"eval-min-prefill-ep {floor} is above the prefill ep of every eval point "
                f"(highest: {max(eps)})"
            )
        return (
            f"{flag}: its configs have no eval point (evals run on 8k1k rows at concurrency "
            "16 and above, and on agentic rows)"
        )
    return "its configs expand to no benchmark point"
