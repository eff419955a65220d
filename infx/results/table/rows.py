"""A results table as types: schemas/result.schema.json's document, its `run`, its `row` and
the row's parts, keys as the JSON spells them.

A table is checked against that schema where it enters (`infx.results.ingest.files`, the
history database, main's runs through the API) and typed from there on;
tests/results/table/test_rows.py holds these types to the schema. Enumerations stay `str`:
the schema has checked their values. A row's `identity` names a point; without `conc` it
names the point's config, so `conc` is the one key the type does not require.
"""

# No `from __future__ import annotations` here: the classes' NotRequired keys must be seen
# when they are made (`__required_keys__`, which tests/results/table/test_rows.py reads).
from collections.abc import Mapping
from typing import NotRequired, TypedDict

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
        "hardware": NotRequired[str],
    },
)

Identity = TypedDict(
    "Identity",
    {
        "scenario": str,
        "runner": str,
        "hardware": str,
        "model": str,
        "model-prefix": str,
        "framework": str,
        "precision": str,
        "multinode": bool,
        "disagg": bool,
        "spec-decoding": str,
        "isl": NotRequired[int],
        "osl": NotRequired[int],
        "tp": NotRequired[int],
        "pp": NotRequired[int],
        "dcp-size": NotRequired[int],
        "pcp-size": NotRequired[int],
        "ep": NotRequired[int],
        "dp-attn": NotRequired[bool],
        "prefill": NotRequired[Worker],
        "decode": NotRequired[Worker],
        "kv-offloading": NotRequired[str],
        "kv-offload-backend": NotRequired[str],
        "router": NotRequired[str],
        "kv-p2p-transfer": NotRequired[str],
        "conc": NotRequired[int],  # required in a row; a config's identity is without it
    },
)

Recipe = TypedDict(
    "Recipe",
    {
        "image": str,
        "exp-name": str,
        "config-key": NotRequired[str],
        "recipe-fingerprint": NotRequired[str],
        "max-model-len": NotRequired[int],
        "duration": NotRequired[int],
        "total-cpu-dram-gb": NotRequired[int],
        "router": NotRequired[Mapping[str, object]],
        "kv-offload-backend": NotRequired[Mapping[str, object]],
        "prefill-additional-settings": NotRequired[list[str]],
        "decode-additional-settings": NotRequired[list[str]],
    },
)


class Gpus(TypedDict):
    """The GPUs a job held: all of them, and per role on a multi-node job."""

    total: int
    prefill: NotRequired[int]
    decode: NotRequired[int]


# Throughput, latencies (seconds), interactivity: `<stat>_<ttft|tpot|itl|e2el|intvty>` and
# the named throughputs; the schema allows any such key.
Metrics = dict[str, float]


class Accuracy(TypedDict):
    """One score of an eval row (lm-eval's task, metric and filter)."""

    task: str
    metric: str
    filter: str
    value: float
    stderr: NotRequired[float]
    samples: NotRequired[int]


class Row(TypedDict):
    """One point one job measured: a throughput row holds `metrics`, an eval row `accuracy`."""

    kind: str  # throughput | accuracy
    client: str
    source: NotRequired[str]
    identity: Identity
    recipe: Recipe
    gpus: Gpus
    metrics: NotRequired[Metrics]
    accuracy: NotRequired[list[Accuracy]]


class RunInfo(TypedDict, total=False):
    """The workflow run a table came from (`collect` writes it; the history adds the rest)."""

    id: int
    attempt: int
    sha: str
    ref: str
    url: str
    created_at: str
    reused_from: int


class Table(TypedDict):
    """A results document: one job's (`infx-result.json`) or a run's (`results.json`)."""

    format: str
    run: NotRequired[RunInfo]
    rows: list[Row]


# A comparison's index of a table: (kind|config) -> concurrency -> row.
ByConc = dict[int, Row]
Indexed = dict[str, ByConc]


def config_identity(identity: Identity) -> Identity:
    """The identity of a point's config: the point's, without its concurrency."""
    out = identity.copy()
    out.pop("conc", None)
    return out


class PointRecipe(TypedDict):
    """What measures a point again: its identity and its recipe."""

    identity: Identity
    recipe: Recipe


def metrics_of(row: Row | None) -> Metrics:
    """A row's metrics; none for an eval row or no row."""
    return row.get("metrics", {}) if row is not None else {}


def run_of(table: Table) -> RunInfo:
    """A copy of the table's `run` (empty when it names none)."""
    return table["run"].copy() if "run" in table else {}
