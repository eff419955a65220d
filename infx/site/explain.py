"""Which changelog entry explains a step on main.

An entry explains a step of a config when it was added to the changelog in the commit range
between the two main runs (the last before the step and the first after it) and one of its
config keys names a master config whose model-prefix, runner, framework and precision are
the config's (names compared regardless of case and spacing), in one of the entry's
scenario types (all, when it names none). This is the planner's selection with the search
space left out: an entry that changed the recipe of one parallelism of a config explains a
step of its other parallelisms too, which is the safe side for a reader looking for a
cause. A step no entry explains is "unexplained" (runner, driver or infrastructure drift);
one whose commits git does not have is "unknown", with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infx.site.model import ChangelogEntry, Master, Range

EXPLAINED, UNEXPLAINED, UNKNOWN = "explained", "unexplained", "unknown"


def _name(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def matches(master: Master, identity: Mapping[str, Any]) -> bool:
    return (
        _name(master.model_prefix) == _name(identity.get("model-prefix", ""))
        and _name(master.runner) == _name(identity.get("runner", ""))
        and _name(master.framework) == _name(identity.get("framework", ""))
        and _name(master.precision) == _name(identity.get("precision", ""))
    )


def explains(entry: ChangelogEntry, identity: Mapping[str, Any]) -> bool:
    scenario = identity.get("scenario")
    if entry.scenario_types and scenario not in entry.scenario_types:
        return False
    return any(matches(m, identity) for m in entry.masters)


@dataclass(frozen=True)
class Explanation:
    status: str  # explained | unexplained | unknown
    entries: tuple[ChangelogEntry, ...] = ()
    note: str = ""


def explain(found: Range | None, identity: Mapping[str, Any]) -> Explanation:
    """The entries of the step's range that explain it, or why none can be named."""
    if found is None:
        return Explanation(UNKNOWN, note="no changelog history was read")
    if found.entries is None:
        return Explanation(UNKNOWN, note=found.note)
    entries = tuple(e for e in found.entries if explains(e, identity))
    return Explanation(EXPLAINED if entries else UNEXPLAINED, entries)
