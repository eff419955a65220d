"""Matrix rows, typed once, and the plan files that carry them to the workflows: job outputs
per bucket, env vars, recipe paths.

`MatrixRow` is the row of `schemas/sweep-matrix.schema.json` (the union of its four row
definitions: single-node, agentic single-node, multi-node, agentic multi-node), keys as
the JSON spells them. A plan read from a file or an artifact is checked against that
schema once, by `read_plan` or `checked_plan`, and typed from there on;
tests/matrix/test_rows.py holds the types to the schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Required, TypedDict, cast, final

from infx import schemas
from infx.errors import UsageError


class Component(TypedDict):
    """A router or KV offload backend: its name and, when pinned, its version."""

    name: str
    version: NotRequired[str]


Worker = TypedDict(
    "Worker",
    {
        "num-worker": int,
        "tp": int,
        "pp": int,
        "dcp-size": int,
        "pcp-size": int,
        "ep": int,
        "dp-attn": bool,
        "hardware": NotRequired[str | dict[str, Any]],
        "additional-settings": list[str],
    },
)

# Required: the keys every row shape has; the others belong to some shapes only.
MatrixRow = TypedDict(
    "MatrixRow",
    {
        "image": Required[str],
        "model": Required[str],
        "model-prefix": Required[str],
        "precision": Required[str],
        "framework": Required[str],
        "runner": Required[str],
        "spec-decoding": Required[Literal["mtp", "draft_model", "none"]],
        "conc": Required[int | list[int]],  # a list on multi-node rows
        "exp-name": Required[str],
        "isl": int,
        "osl": int,
        "tp": int,
        "pp": int,
        "dcp-size": int,
        "pcp-size": int,
        "ep": int,
        "dp-attn": bool,
        "max-model-len": int,
        "disagg": bool,
        "run-eval": bool,
        "eval-only": bool,
        "eval-conc": int,
        "eval-all-concs": bool,
        "eval-framework": str,
        "eval-suite": str,
        "node-count": int,
        "prefill": Worker,
        "decode": Worker,
        "router": Component,
        "kv-p2p-transfer": str,
        "kv-offloading": Literal["none", "dram"],
        "kv-offload-backend": Component,
        "total-cpu-dram-gb": int,
        "duration": int,
        "scenario-type": Literal["agentic-coding"],
        "recipe-fingerprint": str,
        "srt-recipe": str,
        "eval-srt-recipe": str,
        "require-power": bool,
    },
    total=False,
)

PlanEntry = TypedDict(
    "PlanEntry",
    {
        "config-keys": Required[list[str]],
        "description": Required[list[str]],
        "pr-link": Required[str],
        "evals-only": Required[bool],
        "all-evals": Required[bool],
        "no-evals": bool,
        "append-only": Required[bool],
        "eval-min-prefill-ep": int,
        "scenario-type": list[Literal["fixed-seq-len", "agentic-coding"]],
    },
    total=False,
)


class ChangelogMetadata(TypedDict):
    base_ref: str
    head_ref: str
    entries: list[PlanEntry]


@final
class MatrixPlan(TypedDict):
    """`infx sweep plan`'s output: rows per bucket, and the entries that selected them."""

    single_node: dict[str, list[MatrixRow]]
    multi_node: dict[str, list[MatrixRow]]
    evals: list[MatrixRow]
    agentic_evals: list[MatrixRow]
    multinode_evals: list[MatrixRow]
    multinode_agentic_evals: list[MatrixRow]
    changelog_metadata: ChangelogMetadata


@final
class CanarySplit(TypedDict):
    """A plan with its canary row split off to run first (`sweep canary`)."""

    canary: list[MatrixRow]
    remaining: MatrixPlan


PlanDocument = MatrixPlan | CanarySplit
EvalBucket = Literal["evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals"]
EVAL_BUCKETS: tuple[EvalBucket, ...] = (
    "evals",
    "agentic_evals",
    "multinode_evals",
    "multinode_agentic_evals",
)
_SAFE = re.compile(r"[^A-Za-z0-9._:/@+=,-]")


# GitHub refuses a matrix of more than 256 jobs.
MATRIX_LIMIT = 256
# A job's outputs may total 1 MB, counted as UTF-16; a chunk's rows travel as one output,
# so a chunk stays below this with room for the job's other outputs.
OUTPUT_BUDGET = 900_000


# The plan's job families, one benchmark job of the sweep workflow each.
BUCKETS = (
    "canary",
    "single",
    "agentic",
    "multi",
    "multi-agentic",
    "evals",
    "agentic-evals",
    "multinode-evals",
    "multinode-agentic-evals",
)


# --- where rows enter -----------------------------------------------------------------


def _first_problem(payload: object) -> str | None:
    problems = schemas.errors("sweep-matrix", payload)
    return problems[0].message if problems else None


def checked_matrix(payload: object, what: str) -> MatrixPlan:
    """A parsed plan checked against the sweep-matrix schema: from here on its rows are
    `MatrixRow`s. Anything else is a usage error naming `what`."""
    problem = _first_problem(payload)
    if problem is not None:
        raise UsageError(f"{what} is not a sweep plan: {problem}")
    return cast(MatrixPlan, payload)


def checked_plan(payload: object, what: str) -> PlanDocument:
    """A parsed plan or canary split of one, checked as `checked_matrix` checks a plan."""
    refused = f"{what} is not a sweep plan or canary output"
    if not isinstance(payload, dict):
        raise UsageError(refused)
    if "remaining" in payload:
        canary = payload.get("canary")
        if set(payload) != {"canary", "remaining"} or not isinstance(canary, list):
            raise UsageError(refused)
        head = {**empty_plan(), "single_node": {"canary": canary}}
        problem = _first_problem(head) or _first_problem(payload["remaining"])
    else:
        problem = _first_problem(payload)
    if problem is not None:
        raise UsageError(f"{refused}: {problem}")
    return cast(PlanDocument, payload)


def read_plan(data: bytes | str, what: str) -> PlanDocument:
    """A plan file's bytes (a plan or a canary split), parsed and checked."""
    try:
        payload = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise UsageError(f"{what} is not JSON: {detail}") from None
    except RecursionError:
        raise UsageError(f"{what} is not JSON: nested too deeply") from None
    return checked_plan(payload, what)


def empty_plan() -> MatrixPlan:
    return {
        "single_node": {},
        "multi_node": {},
        "evals": [],
        "agentic_evals": [],
        "multinode_evals": [],
        "multinode_agentic_evals": [],
        "changelog_metadata": {"base_ref": "", "head_ref": "", "entries": []},
    }


# --- rows of a plan -------------------------------------------------------------------


def row_id(row: MatrixRow) -> str:
    """A row's identity: its canonical JSON (two equal rows are one multiset's members)."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"))


def plan_of(document: PlanDocument) -> MatrixPlan:
    """The plan of a document without its split-off canary."""
    if "remaining" in document:
        return document["remaining"]
    return document


def jobs_of(document: PlanDocument) -> list[tuple[MatrixRow, bool]]:
    """(row, is_eval) of every job of a plan or of a canary split: the canary first, then
    throughput buckets (single-node, multi-node), then the eval buckets."""
    head = [(row, False) for row in document["canary"]] if "remaining" in document else []
    plan = plan_of(document)
    throughput = [
        (row, False)
        for shape in (plan["single_node"], plan["multi_node"])
        for rows in shape.values()
        for row in rows
    ]
    return head + throughput + [(row, True) for name in EVAL_BUCKETS for row in plan[name]]


def buckets(document: PlanDocument) -> dict[str, list[MatrixRow]]:
    """The rows of each workflow job family (one matrix job per bucket) of a plan or `canary`
    output."""
    plan = plan_of(document)
    single, multi = plan["single_node"], plan["multi_node"]
    return {
        "canary": document["canary"] if "remaining" in document else [],
        "single": [r for name, rows in single.items() if name != "agentic" for r in rows],
        "agentic": single.get("agentic", []),
        "multi": [r for name, rows in multi.items() if name != "agentic" for r in rows],
        "multi-agentic": multi.get("agentic", []),
        "evals": plan["evals"],
        "agentic-evals": plan["agentic_evals"],
        "multinode-evals": plan["multinode_evals"],
        "multinode-agentic-evals": plan["multinode_agentic_evals"],
    }


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def output_size(text: str) -> int:
    """Bytes GitHub counts against the output limit (UTF-16)."""
    return len(text.encode("utf-16-le"))


def chunks(rows: list[MatrixRow]) -> list[list[MatrixRow]]:
    """Consecutive runs of rows, each small enough for one matrix and one job output."""
    result: list[list[MatrixRow]] = []
    current: list[MatrixRow] = []
    size = 2
    for row in rows:
        cost = output_size(_compact(row)) + 2
        if cost + 2 > OUTPUT_BUDGET:
            raise UsageError(f"matrix row {row.get('exp-name', '?')} is too large for a job output")
        if current and (len(current) == MATRIX_LIMIT or size + cost > OUTPUT_BUDGET):
            result.append(current)
            current, size = [], 2
        current.append(row)
        size += cost
    if current:
        result.append(current)
    return result


def bucket_outputs(document: PlanDocument) -> dict[str, str]:
    """Per bucket, the list of its chunk indices (the outer matrix) and a has-<bucket> flag
    (a matrix cannot be empty). The rows themselves stay in the plan file: a full plan is
    larger than a job's outputs may be."""
    out: dict[str, str] = {}
    for name, rows in buckets(document).items():
        out[name] = _compact(list(range(len(chunks(rows)))))
        out[f"has-{name}"] = str(bool(rows)).lower()
    out["changelog-metadata"] = _compact(plan_of(document)["changelog_metadata"])
    return out


def chunk_rows(document: PlanDocument, bucket: str, index: int) -> list[MatrixRow]:
    """The rows of one chunk of a bucket, as `bucket_outputs` numbered them."""
    all_buckets = buckets(document)
    if bucket not in all_buckets:
        raise UsageError(f"no bucket {bucket!r}; buckets: {', '.join(all_buckets)}")
    parts = chunks(all_buckets[bucket])
    if not 0 <= index < len(parts):
        raise UsageError(f"bucket {bucket!r} has {len(parts)} chunk(s); no chunk {index}")
    return parts[index]


# --- one row in a benchmark job -------------------------------------------------------


def _env_value(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    if "\n" in text or "\r" in text:
        raise UsageError("matrix row values may not contain newlines")
    return text


def row_env(row: Mapping[str, object]) -> dict[str, str]:
    """`exp-name` -> EXP_NAME=...; lists and objects as compact JSON."""
    return {key.upper().replace("-", "_"): _env_value(value) for key, value in row.items()}


def gpu_type(runner_name: str, label: str) -> str:
    """`mi355x-amds_03` -> `mi355x`: the node name before its `_NN` suffix, up to the first dash.
    Without a node name (dry runs), the label stands in (`cluster:mi355x-amds` -> `mi355x`)."""
    name = runner_name or label.removeprefix("cluster:")
    name = re.sub(r"_\d+$", "", name)
    return name.split("-", 1)[0]


def recipe_path(row: Mapping[str, object], runner_name: str) -> str:
    """recipes/<model-prefix>_<precision>_<gpu>_<framework>[_agentic].sh"""
    parts = [
        row["model-prefix"],
        row["precision"],
        gpu_type(runner_name, str(row["runner"])),
        row["framework"],
    ]
    suffix = "_agentic" if row.get("scenario-type") == "agentic-coding" else ""
    name = "_".join(_SAFE.sub("", str(p)).replace("/", "") for p in parts)
    return f"recipes/{name}{suffix}.sh"
