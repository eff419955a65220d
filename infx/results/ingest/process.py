"""One benchmark job's client output plus its matrix row -> normalized result rows.

The row says what was measured (identity), how (recipe) and on how many GPUs; the
client output says how fast. Metrics follow the InferenceX convention: token
throughput per GPU, latencies in seconds, interactivity = 1000 / TPOT in ms.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import deque
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from infx import schemas
from infx.errors import ResultsError, UsageError
from infx.matrix.contract import row_gpus
from infx.matrix.expand import row_concs
from infx.matrix.rows import MatrixRow, gpu_type
from infx.matrix.rows import Worker as MatrixWorker
from infx.results.ingest.clients import AIPERF, LM_EVAL, VLLM, ClientRun, Score
from infx.results.table.rows import (
    Accuracy,
    Gpus,
    Identity,
    Metrics,
    Recipe,
    Row,
    RunInfo,
    Table,
    Worker,
)

# jsonschema loads inside the functions that check a matrix row or say why a document is
# rejected (start-up time: jsonschema-rs gives the verdict on a document).
if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

FORMAT = "infx-results/1"
FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
RESULT_FILE = "infx-result.json"  # one job's rows
TABLE_FILE = "results.json"  # a run's table (`collect`)
AIPERF_EXPORT = "aiperf/profile_export_aiperf.json"
LM_EVAL_DIR = "lm-eval"
_ROW_DEFS = ("singleNodeRow", "agenticSingleNodeRow", "multiNodeRow", "agenticMultiNodeRow")
_WORKER_KEYS = ("num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn")


@cache
def _row_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = schemas.load("sweep-matrix")
    return Draft202012Validator(
        {"$defs": schema["$defs"], "anyOf": [{"$ref": f"#/$defs/{d}"} for d in _ROW_DEFS]}
    )


def _is_text(prop: dict[str, Any], defs: dict[str, Any]) -> bool:
    if "$ref" in prop:
        prop = defs[prop["$ref"].rsplit("/", 1)[-1]]
    if prop.get("type") == "string":
        return True
    values = prop.get("enum", [prop["const"]] if "const" in prop else None)
    return values is not None and all(isinstance(v, str) for v in values)


@cache
def _row_fields() -> dict[str, bool]:
    """Every matrix row key -> whether its value is plain text (else JSON) in the environment."""
    defs = schemas.load("sweep-matrix")["$defs"]
    fields: dict[str, bool] = {}
    for name in _ROW_DEFS:
        for key, prop in defs[name]["properties"].items():
            fields[key] = fields.get(key, True) and _is_text(prop, defs)
    return fields


def row_from_env(env: Mapping[str, str]) -> MatrixRow:
    """Undo `infx sweep row-env`: EXP_NAME=... -> {"exp-name": ...}, JSON values parsed."""
    row: dict[str, object] = {}
    for key, text in _row_fields().items():
        name = key.upper().replace("-", "_")
        if name not in env:
            continue
        value = env[name]
        if text:
            row[key] = value
            continue
        try:
            row[key] = json.loads(value)
        except json.JSONDecodeError:
            raise UsageError(f"environment variable {name} is not JSON: {value[:60]!r}") from None
    if not row:
        raise UsageError(
            "no matrix row: pass --row JSON or export the row first (infx sweep row-env)"
        )
    return check_row(row)


def check_row(row: object) -> MatrixRow:
    """The row must be one a sweep plan can emit; say which field is wrong otherwise."""
    if not isinstance(row, dict):
        raise UsageError("the matrix row is not a JSON object")
    from jsonschema.exceptions import best_match  # start-up time

    best = best_match(_row_validator().iter_errors(row))
    if best is not None:
        best = schemas.closest(best)
        where = ".".join(str(p) for p in best.absolute_path) or "row"
        raise UsageError(f"not a sweep matrix row{_row_name(row)}: {where}: {schemas.brief(best)}")
    return cast(MatrixRow, row)  # the schema of a matrix row accepted it


def _row_name(row: Mapping[str, Any]) -> str:
    """The row's short identity for a message, ` (exp-name X, conc N)`, as far as it has one."""
    said = [
        f"{key} {row[key]}"
        for key in ("exp-name", "conc")
        if isinstance(row.get(key), str | int) and len(str(row[key])) <= 60
    ]
    return f" ({', '.join(said)})" if said else ""


class OutOfRange(ValueError):
    """A JSON integer no float holds: Python's reader takes any integer (past 4,300 digits
    `int` itself refuses it), the verdict's float arithmetic and NumPy cannot."""


def bounded_int(text: str) -> int:
    """`parse_int` for json.loads: the integer, or OutOfRange when it is beyond every float."""
    digits = len(text) - text.startswith("-")
    if digits <= 308:
        return int(text)
    value = int(text) if digits == 309 else None
    if value is None or abs(value) > sys.float_info.max:
        raise OutOfRange(f"a number of {digits} digits is out of range (larger than any float)")
    return value


def job_row(row_json: str | None, env: Mapping[str, str]) -> MatrixRow:
    """The job's matrix row: --row's JSON, else the environment `infx sweep row-env` set."""
    if row_json is None:
        return row_from_env(env)
    try:
        return check_row(json.loads(row_json, parse_int=bounded_int))
    except json.JSONDecodeError as exc:
        raise UsageError(f"--row is not JSON: {exc.msg}") from None
    except OutOfRange as exc:
        raise UsageError(f"--row: {exc}") from None


def result_file(env: Mapping[str, str]) -> Path:
    """Where a job's result file is by default: RESULTS_DIR/infx-result.json."""
    return Path(env.get("RESULTS_DIR", "results")) / RESULT_FILE


def scenario(row: MatrixRow) -> str:
    return row.get("scenario-type", FIXED)


def is_eval(row: MatrixRow) -> bool:
    return bool(row.get("run-eval"))


def eval_concurrency(row: MatrixRow) -> int:
    return row.get("eval-conc") or max(row_concs(row))


def client_for(row: MatrixRow) -> str:
    if is_eval(row):
        return LM_EVAL
    return AIPERF if scenario(row) == AGENTIC else VLLM


def expected_outputs(row: MatrixRow) -> list[tuple[int, str]]:
    """(conc, path relative to the results directory) of each client output the row needs."""
    if is_eval(row):
        return [(eval_concurrency(row), LM_EVAL_DIR)]
    if scenario(row) == AGENTIC:
        return [(row_concs(row)[0], AIPERF_EXPORT)]
    name = row["exp-name"]
    conc = row["conc"]
    if isinstance(conc, list):
        return [(c, f"{name}_conc{c}.json") for c in conc]
    return [(conc, f"{name}.json")]


def _worker(block: MatrixWorker) -> Worker:
    out: Worker = {
        "num-worker": block["num-worker"],
        "tp": block["tp"],
        "pp": block["pp"],
        "dcp-size": block["dcp-size"],
        "pcp-size": block["pcp-size"],
        "ep": block["ep"],
        "dp-attn": block["dp-attn"],
    }
    hardware = block.get("hardware")
    if hardware:
        out["hardware"] = hardware if isinstance(hardware, str) else json.dumps(hardware)
    return out


def gpus(row: MatrixRow) -> Gpus:
    """The job's GPUs as the row contract counts them; a job without GPUs has no result."""
    counted = row_gpus(row)
    if counted["total"] <= 0 or counted.get("prefill", 1) <= 0:
        raise ResultsError("the row's prefill workers have no GPU")
    found: Gpus = {"total": counted["total"]}
    if "prefill" in counted:
        found["prefill"], found["decode"] = counted["prefill"], counted["decode"]
    return found


# The parallelism of a single-node row, as its identity keeps it.
_SIZES: tuple[Literal["tp", "pp", "dcp-size", "pcp-size", "ep"], ...] = (
    "tp",
    "pp",
    "dcp-size",
    "pcp-size",
    "ep",
)


def identity(row: MatrixRow, conc: int, runner_name: str = "") -> Identity:
    hardware = gpu_type(runner_name, row["runner"])
    if not hardware:  # `-x`, `_01` or an empty label: no GPU type before the first dash
        named = f"runner name {runner_name!r}" if runner_name else f"runner label {row['runner']!r}"
        raise UsageError(f"{named} names no GPU type (wanted like mi355x-amds_03 or h200)")
    out: Identity = {
        "scenario": scenario(row),
        "runner": row["runner"],
        "hardware": hardware,
        "model": row["model"],
        "model-prefix": row["model-prefix"],
        "framework": row["framework"],
        "precision": row["precision"],
        "multinode": "prefill" in row,
        "disagg": bool(row.get("disagg", False)),
        "spec-decoding": row["spec-decoding"],
    }
    if "isl" in row:
        out["isl"], out["osl"] = row["isl"], row["osl"]
    if "prefill" in row:
        out["prefill"], out["decode"] = _worker(row["prefill"]), _worker(row["decode"])
    else:
        for key in _SIZES:
            out[key] = row[key]
        out["dp-attn"] = row["dp-attn"]
    if "kv-offloading" in row:
        out["kv-offloading"] = row["kv-offloading"]
    if "kv-offload-backend" in row:
        out["kv-offload-backend"] = row["kv-offload-backend"]["name"]
    if "router" in row:
        out["router"] = row["router"]["name"]
    if "kv-p2p-transfer" in row:
        out["kv-p2p-transfer"] = row["kv-p2p-transfer"]
    out["conc"] = conc
    return out


def recipe(row: MatrixRow) -> Recipe:
    out: Recipe = {"image": row["image"], "exp-name": row["exp-name"]}
    if "recipe-fingerprint" in row:
        out["recipe-fingerprint"] = row["recipe-fingerprint"]
    if "max-model-len" in row:
        out["max-model-len"] = row["max-model-len"]
    if "duration" in row:
        out["duration"] = row["duration"]
    if "total-cpu-dram-gb" in row:
        out["total-cpu-dram-gb"] = row["total-cpu-dram-gb"]
    if "router" in row:
        out["router"] = row["router"]
    if "kv-offload-backend" in row:
        out["kv-offload-backend"] = row["kv-offload-backend"]
    if "prefill" in row and row["prefill"].get("additional-settings"):
        out["prefill-additional-settings"] = list(row["prefill"]["additional-settings"])
    if "decode" in row and row["decode"].get("additional-settings"):
        out["decode-additional-settings"] = list(row["decode"]["additional-settings"])
    return out


_CONFIG_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}")


def checked_config_key(text: str) -> str:
    """The master config's key a job was planned from (`INFX_CONFIG_KEY`, exported by
    `infx sweep row-env`), checked as schemas/result.schema.json writes it; "" for none."""
    if text and not _CONFIG_KEY.fullmatch(text):
        raise UsageError(f"not a master config key: {text[:60]!r}")
    return text


def with_config_key(recipe: Recipe, key: str) -> Recipe:
    """The recipe naming its master config (after image and exp-name), when one is known."""
    if not key:
        return recipe
    head = {"image": recipe["image"], "exp-name": recipe["exp-name"], "config-key": key}
    rest = {k: v for k, v in recipe.items() if k not in ("image", "exp-name")}
    return cast(Recipe, head | rest)  # the recipe and its key, in the order the file shows


def metrics(run: ClientRun, gpu: Gpus) -> Metrics:
    total, output = run.total_tput, run.output_tput
    out_gpus = gpu.get("decode") or gpu["total"]
    in_gpus = gpu.get("prefill") or gpu["total"]
    out: Metrics = {
        "tput_per_gpu": total / gpu["total"],
        "output_tput_per_gpu": output / out_gpus,
        "input_tput_per_gpu": (total - output) / in_gpus,
        "total_tput": total,
        "output_tput": output,
        "completed": run.completed,
    }
    if run.request_throughput is not None:
        out["request_throughput"] = run.request_throughput
    if run.duration is not None:
        out["duration"] = run.duration
    for key, ms in sorted(run.latencies_ms.items()):
        out[key] = ms / 1000.0
        stat, _, kind = key.partition("_")
        if kind == "tpot" and stat != "std" and ms > 0:
            out[f"{stat}_intvty"] = 1000.0 / ms
    return out


def throughput_row(
    row: MatrixRow, run: ClientRun, conc: int, source: str, runner_name: str = ""
) -> Row:
    if run.concurrency is not None and run.concurrency != conc:
        raise ResultsError(
            f"{source}: the client ran at concurrency {run.concurrency}, the row asks for {conc}"
        )
    gpu = gpus(row)
    return {
        "kind": "throughput",
        "client": run.client,
        "source": source,
        "identity": identity(row, conc, runner_name),
        "recipe": recipe(row),
        "gpus": gpu,
        "metrics": metrics(run, gpu),
    }


def accuracy_row(row: MatrixRow, scores: list[Score], source: str, runner_name: str = "") -> Row:
    accuracy = []
    for score in scores:
        entry: Accuracy = {
            "task": score.task,
            "metric": score.metric,
            "filter": score.filter,
            "value": score.value,
        }
        if score.stderr is not None:
            entry["stderr"] = score.stderr
        if score.samples is not None:
            entry["samples"] = score.samples
        accuracy.append(entry)
    return {
        "kind": "accuracy",
        "client": LM_EVAL,
        "source": source,
        "identity": identity(row, eval_concurrency(row), runner_name),
        "recipe": recipe(row),
        "gpus": gpus(row),
        "accuracy": accuracy,
    }


@cache
def _result_validator() -> Draft202012Validator:
    """schemas/result.schema.json with its `$ref`s inlined: resolving references is most of
    the cost of checking a 2,000-row table, and the schema has no recursive ones."""
    from jsonschema import Draft202012Validator

    schema = schemas.load("result")
    defs = schema["$defs"]

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"$ref"}:
                return inline(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: inline(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return Draft202012Validator(inline(schema))


def result_errors(doc: Any, finite: bool = False) -> list[ValidationError]:
    """Schema errors of a results document, the first in document order first. The verdict
    comes from jsonschema-rs (a 2,000-row table in milliseconds instead of seconds); only a
    table it rejects is walked again to say why. `finite`: the caller knows no number in
    `doc` is NaN or infinite (it parsed JSON text that spells none), so none is looked for."""
    if not schemas.is_valid("result", doc):
        found = list(_result_validator().iter_errors(doc))
        if found:  # jsonschema-rs also rejects a NaN, which the walk below then finds
            return sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
    if finite:
        return []
    try:  # C speed; only a table holding NaN or an infinity is walked to say where
        json.dumps(doc, allow_nan=False)
        return []
    except ValueError:
        bad = _not_finite(doc, [])
    if bad is None:
        return []
    from jsonschema.exceptions import ValidationError

    return [ValidationError(f"{bad[1]} is not finite", path=deque(bad[0]))]


def _not_finite(value: Any, where: list[Any]) -> tuple[list[Any], float] | None:
    """Where a NaN or an infinity sits: Python's JSON reader takes them, a schema's
    `minimum` does not catch NaN, and a verdict on them is meaningless."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, value)
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _not_finite(item, [*where, key])
        if found is not None:
            return found
    return None


def written(target: Path, doc: Table) -> str:
    """`process`'s line: which points went where, measured by which client."""
    kinds = ", ".join(f"{r['kind']} conc {r['identity']['conc']}" for r in doc["rows"])
    return f"wrote {target}: {kinds} ({doc['rows'][0]['client']})"


def encoded(doc: object) -> bytes:
    """A results file's bytes: indented JSON and a final newline."""
    return (json.dumps(doc, indent=2, sort_keys=False) + "\n").encode()


def document(rows: list[Row], run: RunInfo | None = None) -> Table:
    """A results file; a document this module built and the schema rejects is a bug here."""
    doc: Table = (
        {"format": FORMAT, "run": run, "rows": rows} if run else {"format": FORMAT, "rows": rows}
    )
    problems = result_errors(doc)
    if problems:
        where = ".".join(str(p) for p in problems[0].absolute_path)
        raise ResultsError(
            f"result does not match schemas/result.schema.json at {where}: {problems[0].message}",
            internal=True,
        )
    return doc
