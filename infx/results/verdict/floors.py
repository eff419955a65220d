"""Accuracy floors: the lowest eval score a model may post before its job fails.

InferenceX keeps them in `utils/evals/thresholds.yaml`: `default` (task -> floor) and
`models` (model-prefix -> task -> floor); a model's own floor wins over the default, and a
task with neither is not checked. As there, the `exact_match` scores are checked, every
filter of them. The settings key `accuracy-floors` holds either that file's path or the
same table inline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from infx.errors import UsageError
from infx.markdown import text
from infx.results.table.rows import Row, Table

METRIC = "exact_match"


@dataclass(frozen=True)
class Floors:
    default: Mapping[str, float] = field(default_factory=dict)
    models: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def floor(self, prefix: str, task: str) -> tuple[float, str] | None:
        """The floor for a model's task and where it came from, or None."""
        own = self.models.get(prefix, {})
        if task in own:
            return float(own[task]), f"models.{prefix}"
        if task in self.default:
            return float(self.default[task]), "default"
        return None


@dataclass(frozen=True)
class Check:
    prefix: str
    task: str
    name: str  # metric,filter
    value: float
    floor: float
    source: str

    @property
    def passed(self) -> bool:
        return self.value >= self.floor

    def text(self) -> str:
        relation = "meets" if self.passed else "is below"
        return (
            f"{self.prefix} {self.task} {self.name} {self.value:.4f} {relation} its floor "
            f"{self.floor:g} ({self.source})"
        )


def checks(rows: Iterable[Row], floors: Floors) -> list[Check]:
    """Every exact_match score of these results rows' accuracy rows that has a floor."""
    found = []
    for row in rows:
        if row.get("kind") != "accuracy":
            continue
        prefix = row["identity"]["model-prefix"]
        for score in row.get("accuracy", []):
            if score["metric"] != METRIC:
                continue
            rule = floors.floor(prefix, score["task"])
            if rule is None:
                continue
            name = f"{score['metric']},{score['filter']}" if score["filter"] else score["metric"]
            found.append(Check(prefix, score["task"], name, score["value"], *rule))
    return found


def table_of(value: Any, where: str) -> Floors:
    """The floors of a settings table or a thresholds file's contents (`where` names it)."""
    if not isinstance(value, Mapping) or not set(value) <= {"default", "models"}:
        raise UsageError(f"{where}: expected `default` and/or `models` tables of floors")
    default = value.get("default") or {}
    models = value.get("models") or {}
    tables = [("default", default), *((f"models.{m}", t) for m, t in models.items())]
    for name, table in tables:
        if not isinstance(table, Mapping):
            raise UsageError(f"{where}: {name} is not a table of task -> floor")
        for task, number in table.items():
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise UsageError(f"{where}: {name}.{task} is not a number")
            if not 0 <= number <= 1:
                raise UsageError(f"{where}: {name}.{task} = {number} is not between 0 and 1")
    return Floors(dict(default), {str(m): dict(t) for m, t in models.items()})


@dataclass(frozen=True)
class Verdict:
    """What `infx results floors` says: a line per score, the summary of those below their
    floor, and the failure (exit 1) when any is."""

    lines: list[str]
    summary: str | None = None
    failure: str | None = None


def verdict(doc: Table, floors: Floors | None) -> Verdict:
    found = checks(doc["rows"], floors) if floors is not None else []
    lines = [check.text() for check in found]
    failed = [c for c in found if not c.passed]
    if not found:
        lines.append("no accuracy floor applies to these results")
    if not failed:
        return Verdict(lines)
    summary = "### Accuracy below its floor\n\n" + "\n".join(f"- {text(c.text())}" for c in failed)
    return Verdict(lines, summary + "\n", "; ".join(c.text() for c in failed))
