"""The one planning pipeline: changelog diff -> entries -> selected configs -> checked plan.

Pure: everything it reads comes in as bytes or parsed values, so `infx sweep plan`
and the plan benchmark run the same code; the CLI only gathers the inputs and prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from infx import schemas
from infx.changelog.check import key_violations
from infx.changelog.landed import added_entries
from infx.changelog.model import summarized
from infx.errors import ChangelogError, ConfigError, InternalError
from infx.matrix.era import Choice, choose
from infx.matrix.options import PlanOptions
from infx.matrix.plan import Plan, Revision, build_plan, entry_configs
from infx.matrix.validate import (
    ConfigProblem,
    Runners,
    runner_label_problems,
    runners_section_problems,
    validate_configs,
)


@dataclass
class SweepInputs:
    changelog_base: bytes | None
    changelog_head: bytes | None
    head: Revision
    runners: Runners | None = None
    base: Callable[[], Revision] | None = None
    refs: tuple[str, str] = ("", "")
    # Problems found while reading the inputs that do not stop planning.
    notes: list[ConfigProblem] = field(default_factory=list)
    # infx.toml's `format` (None: chosen from the configs and the changelog).
    format_setting: str | None = None
    changelog_path: str = "perf-changelog.yaml"
    # runners.yaml's bytes (None: not read or missing) and path, for the format's choice.
    runners_data: bytes | None = None
    runners_path: str = "configs/runners.yaml"


@dataclass
class SweepPlan:
    plan: Plan
    warnings: list[str] = field(default_factory=list)
    choice: Choice | None = None
    # The head revision as planned: in the chosen format.
    head: Revision | None = None


def plan_sweep(inputs: SweepInputs, options: PlanOptions, strict: bool = False) -> SweepPlan:
    """Plan the entries the diff added; raise on anything that would plan the wrong rows."""
    landed = added_entries(inputs.changelog_base, inputs.changelog_head)
    warnings = [v.located() for v in landed.warnings]
    masters = inputs.head.masters
    choice = choose(
        masters,
        inputs.changelog_head,
        inputs.format_setting,
        inputs.changelog_path,
        inputs.runners_data,
        inputs.runners_path,
    )
    fmt = choice.format
    refused = runners_section_problems(
        inputs.runners, fmt, inputs.runners_path, inputs.runners_data
    )
    if refused:
        raise ConfigError("; ".join(p.text() for p in refused))
    head = replace(inputs.head, fmt=fmt)
    read_base = inputs.base
    base = None if read_base is None else (lambda: replace(read_base(), fmt=fmt))
    keys = masters.keys()
    unknown = [v for entry in landed.entries for v in key_violations(entry, keys)]
    if unknown:
        raise ChangelogError(
            "config keys do not resolve:\n"
            + "\n".join(f"  line {v.line}: {v.text()}" for v in summarized(unknown))
        )
    entries = [entry.data for entry in landed.entries]
    selected = list(dict.fromkeys(k for e in entries for k in entry_configs(e, keys)))
    problems = inputs.notes + validate_configs(masters, selected, fmt)
    if inputs.runners is not None:
        problems += runner_label_problems(masters, inputs.runners, strict, selected)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise ConfigError(
            f"{len(errors)} config error(s):\n" + "\n".join(f"  {p.text()}" for p in errors)
        )
    warnings += [p.text() for p in problems if p.severity != "error"]
    plan = build_plan(entries, head, options, base, inputs.refs)
    wrong = schemas.errors("sweep-matrix", plan.as_json())
    if wrong:
        raise InternalError(
            "internal error: the plan does not match schemas/sweep-matrix.schema.json "
            f"({wrong[0].message}); please report this"
        )
    return SweepPlan(plan, warnings, choice, head)
