"""The small commands the sweep workflow's jobs call, as use cases: split off the canary,
turn a plan into job outputs and chunks, one row into a job's environment, and validate
the configs. Pure: the command reads the plan, the row and the configs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from infx.errors import ConfigError, UsageError
from infx.matrix.era import Choice
from infx.matrix.load import MasterConfigs
from infx.matrix.origins import keys_of
from infx.matrix.plan import canary
from infx.matrix.rows import (
    PlanDocument,
    bucket_outputs,
    checked_matrix,
    chunk_rows,
    recipe_path,
    row_env,
    row_id,
)
from infx.matrix.sources import RunnerInfo
from infx.matrix.validate import runner_label_problems, validate_configs
from infx.sweep.outcome import Outcome

_COMPACT = (",", ":")
# A master config key as schemas/result.schema.json takes it (`recipe.config-key`).
_CONFIG_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}")
# What the recipe path is made of: a row without them names no script.
_RECIPE_FIELDS = ("model-prefix", "precision", "framework", "runner")


def canary_outcome(stdin: str) -> Outcome:
    """`sweep canary`: {"canary": [row], "remaining": plan-without-it} of the plan on stdin."""
    try:
        payload = json.loads(stdin)
    except json.JSONDecodeError as exc:
        raise UsageError(f"stdin is not a JSON plan: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise UsageError("stdin is not a JSON plan: nested too deeply") from None
    row, remaining = canary(checked_matrix(payload, "stdin"))
    split = {"canary": [row] if row else [], "remaining": remaining}
    return Outcome(stdout=[json.dumps(split, indent=2)])


def outputs_outcome(document: PlanDocument) -> Outcome:
    """`sweep outputs`: the chunk indices per bucket as job outputs."""
    values = bucket_outputs(document)
    shown = {k: v for k, v in values.items() if k != "changelog-metadata"}
    return Outcome(outputs=values, stdout=[json.dumps(shown)])


def chunk_outcome(
    document: PlanDocument,
    bucket: str,
    index: int,
    pins: Mapping[str, str],
    found: Mapping[str, str] | None = None,
) -> Outcome:
    """`sweep chunk`: one chunk's rows as the job output `rows`, the node each row is
    pinned to (`runs-on`; empty: the row's runner label), and the master config each row
    was planned from (`config-keys`; empty: not known), by the plan's config-keys.json."""
    rows = chunk_rows(document, bucket, index)
    nodes = [pins.get(row_id(row), "") for row in rows]
    outputs = {
        "rows": json.dumps(rows, separators=_COMPACT),
        "runs-on": json.dumps(nodes, separators=_COMPACT),
        "config-keys": json.dumps(keys_of(rows, found or {}), separators=_COMPACT),
    }
    pinned = sum(1 for node in nodes if node)
    suffix = f", {pinned} pinned to a node" if pinned else ""
    return Outcome(outputs=outputs, stdout=[f"{bucket} chunk {index}: {len(rows)} row(s){suffix}"])


def row_env_outcome(text: str, runner_name: str, config_key: str = "") -> Outcome:
    """`sweep row-env`: the matrix row in $ROW as KEY=value lines, RECIPE_SCRIPT, and the
    row's master config ($CONFIG_KEY, from `sweep chunk`) as INFX_CONFIG_KEY, which
    `results process` writes into the job's result rows."""
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"ROW is not a JSON matrix row: {exc.msg}") from None
    if not isinstance(row, dict):
        raise UsageError("ROW is not a JSON matrix row")
    lines = row_env(row)
    lacking = [key for key in _RECIPE_FIELDS if key not in row]
    if lacking:
        raise UsageError(f"ROW is not a matrix row: it lacks {', '.join(lacking)}")
    lines["RECIPE_SCRIPT"] = recipe_path(row, runner_name)
    if config_key:
        if not _CONFIG_KEY.fullmatch(config_key):
            raise UsageError(f"CONFIG_KEY is not a master config key: {config_key[:60]!r}")
        lines["INFX_CONFIG_KEY"] = config_key
    return Outcome(stdout=[f"{key}={value}" for key, value in lines.items()])


def validate_outcome(
    masters: MasterConfigs, runners: RunnerInfo, strict: bool, choice: Choice
) -> Outcome:
    """`sweep validate`: every problem of the configs (by the schema of the format in force)
    and the runners file, one a line."""
    problems = validate_configs(masters, None, choice.format) + runners.problems
    if runners.runners is not None:
        problems += runner_label_problems(masters, runners.runners, strict)
    errors = [p for p in problems if p.severity == "error"]
    out = Outcome(stderr=[f"infx: {choice.note()}", *(problem.text() for problem in problems)])
    if errors:
        out.error = ConfigError(f"{len(errors)} config error(s)")
    else:
        out.stdout.append(f"{len(masters)} config(s) valid")
    return out
