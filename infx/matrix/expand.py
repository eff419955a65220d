"""Expand one master config into matrix rows in the InferenceX row contract.

Field order matters (it is what the workflow templates and result tooling see),
so rows are built as ordered dicts, field by field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from infx.errors import ConfigError

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
SCENARIOS = (FIXED, AGENTIC)
AGENTIC_DURATION = 3600
MAX_LEN_PAD = 256
DRAM_CAP_MIB = 2_861_022
SEQ_LEN_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}

Row = dict[str, Any]


@dataclass(frozen=True)
class Hardware:
    available_cpu_dram_mib: int
    gpus_per_node: int


def hardware_table(entries: Mapping[str, Mapping[str, int]]) -> dict[str, Hardware]:
    """runners.yaml `hardware:` section -> label -> Hardware."""
    return {
        label: Hardware(hw["available-cpu-dram-mib"], hw["gpus-per-node"])
        for label, hw in entries.items()
    }


def seq_len_name(isl: int, osl: int) -> str:
    return SEQ_LEN_NAMES.get((isl, osl), f"{isl}_{osl}")


def concurrencies(space: dict[str, Any]) -> list[int]:
    """conc-list verbatim; a range doubles from start and always ends on end (4..48 -> 4,8,16,32,48)."""
    if "conc-list" in space:
        return list(space["conc-list"])
    start, end = space["conc-start"], space["conc-end"]
    values, conc = [], start
    while conc < end:
        values.append(conc)
        conc *= 2
    values.append(end)
    return values


def total_cpu_dram_gb(hardware: Hardware, utilization: float, gpus: int) -> int:
    """CPU DRAM budget for KV offload, scaled to the share of the node this job uses."""
    mib = min(hardware.available_cpu_dram_mib, DRAM_CAP_MIB)
    return int(mib * 2**20 * utilization * gpus / hardware.gpus_per_node / 1e9)


def fingerprint(row: Row) -> str:
    """sha256 of the row's canonical JSON without conc, exp-name and the fingerprint itself."""
    recipe = {k: v for k, v in row.items() if k not in ("conc", "exp-name", "recipe-fingerprint")}
    text = json.dumps(recipe, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _head(config: dict[str, Any]) -> Row:
    return {
        k: config[k] for k in ("image", "model", "model-prefix", "precision", "framework", "runner")
    }


def _parallelism(block: dict[str, Any]) -> Row:
    return {
        "tp": block["tp"],
        "pp": block.get("pp", 1),
        "dcp-size": block.get("dcp-size", 1),
        "pcp-size": block.get("pcp-size", 1),
    }


def _worker(block: dict[str, Any]) -> Row:
    worker = {
        "num-worker": block["num-worker"],
        **_parallelism(block),
        "ep": block["ep"],
        "dp-attn": block["dp-attn"],
        "additional-settings": list(block.get("additional-settings", [])),
    }
    if "hardware" in block:
        worker["hardware"] = block["hardware"]
    return worker


def _with_router(row: Row, config: dict[str, Any], space: dict[str, Any]) -> Row:
    """A search-space router overrides the config's; rows carry one only when set."""
    router = space.get("router", config.get("router"))
    if router is not None:
        row["router"] = router
    return row


def _kv_suffix(space: dict[str, Any]) -> str:
    mode = space.get("kv-offloading", "none")
    if mode == "none":
        return "_kvnone"
    return f"_kv{mode}-{space['kv-offload-backend']['name']}"


def _topology(worker: dict[str, Any]) -> str:
    text = f"{worker['num-worker']}x{worker['tp']}"
    if worker.get("ep", 1) != 1:
        text += f"ep{worker['ep']}"
    if worker.get("dp-attn"):
        text += "dpa"
    return text


@dataclass
class Expansion:
    """Rows of one config, split by scenario and node shape."""

    fixed: list[Row]
    agentic: list[Row]
    multinode: bool


def expand(
    key: str,
    config: dict[str, Any],
    hardware: dict[str, Hardware],
    scenarios: tuple[str, ...] = SCENARIOS,
) -> Expansion:
    """Every benchmark point of `config` for the selected scenarios."""
    multinode = bool(config["multinode"])
    fixed: list[Row] = []
    agentic: list[Row] = []
    for_scenarios = config["scenarios"]
    if FIXED in scenarios:
        for seq in for_scenarios.get(FIXED, []):
            for space in seq["search-space"]:
                rows = (
                    _fixed_multi(config, seq, space)
                    if multinode
                    else _fixed_single(config, seq, space)
                )
                fixed.extend(rows)
    if AGENTIC in scenarios:
        for scenario in for_scenarios.get(AGENTIC, []):
            for space in scenario["search-space"]:
                make = _agentic_multi if multinode else _agentic_single
                agentic.extend(make(key, config, scenario, space, hardware))
    return Expansion(fixed, agentic, multinode)


def _fixed_single(
    config: dict[str, Any], seq: dict[str, Any], space: dict[str, Any]
) -> Iterator[Row]:
    isl, osl = seq["isl"], seq["osl"]
    for conc in concurrencies(space):
        row = {
            **_head(config),
            "isl": isl,
            "osl": osl,
            **_parallelism(space),
            "conc": conc,
            "max-model-len": isl + osl + MAX_LEN_PAD,
            "ep": space.get("ep", 1),
            "dp-attn": space.get("dp-attn", False),
            "spec-decoding": space.get("spec-decoding", "none"),
            "exp-name": f"{config['model-prefix']}_{seq_len_name(isl, osl)}",
            "disagg": config.get("disagg", False),
            "run-eval": False,
        }
        yield _with_router(row, config, space)


def _multi_common(config: dict[str, Any], space: dict[str, Any]) -> Row:
    return {
        "spec-decoding": space.get("spec-decoding", "none"),
        "prefill": _worker(space["prefill"]),
        "decode": _worker(space["decode"]),
    }


def _multi_extras(row: Row, config: dict[str, Any], space: dict[str, Any]) -> Row:
    _with_router(row, config, space)
    transfer = space.get("kv-p2p-transfer", config.get("kv-p2p-transfer"))
    if transfer is not None:
        row["kv-p2p-transfer"] = transfer
    return row


def _fixed_multi(
    config: dict[str, Any], seq: dict[str, Any], space: dict[str, Any]
) -> Iterator[Row]:
    isl, osl = seq["isl"], seq["osl"]
    row = {
        **_head(config),
        "isl": isl,
        "osl": osl,
        **_multi_common(config, space),
        "conc": concurrencies(space),
        "max-model-len": isl + osl + MAX_LEN_PAD,
        "exp-name": f"{config['model-prefix']}_{seq_len_name(isl, osl)}",
        "disagg": config.get("disagg", False),
        "run-eval": False,
    }
    yield _multi_extras(row, config, space)


def _dram(
    key: str,
    config: dict[str, Any],
    scenario: dict[str, Any],
    space: dict[str, Any],
    hardware: dict[str, Hardware],
    gpus: int | None,
) -> int:
    if space.get("kv-offloading", "none") != "dram":
        return 0
    runner = config["runner"]
    if runner not in hardware:
        raise ConfigError(
            f"{key}: kv-offloading dram needs a hardware entry for runner {runner!r} "
            "in configs/runners.yaml"
        )
    node = hardware[runner]
    return total_cpu_dram_gb(
        node, scenario["dram-utilization"], node.gpus_per_node if gpus is None else gpus
    )


def _agentic_single(
    key: str,
    config: dict[str, Any],
    scenario: dict[str, Any],
    space: dict[str, Any],
    hardware: dict[str, Hardware],
) -> Iterator[Row]:
    par = _parallelism(space)
    spec = space.get("spec-decoding", "none")
    dram = _dram(key, config, scenario, space, hardware, par["tp"] * par["pp"] * par["pcp-size"])
    for conc in concurrencies(space):
        name = f"{config['model-prefix']}_tp{par['tp']}_conc{conc}{_kv_suffix(space)}"
        if spec != "none":
            name += f"_spec-{spec}"
        row = {
            **_head(config),
            **par,
            "ep": space.get("ep", 1),
            "dp-attn": space.get("dp-attn", False),
            "spec-decoding": spec,
            "conc": conc,
            "kv-offloading": space["kv-offloading"],
            "total-cpu-dram-gb": dram,
            "duration": AGENTIC_DURATION,
            "exp-name": name,
            "scenario-type": AGENTIC,
        }
        if "kv-offload-backend" in space:
            row["kv-offload-backend"] = space["kv-offload-backend"]
        yield _with_router(row, config, space)


def _agentic_multi(
    key: str,
    config: dict[str, Any],
    scenario: dict[str, Any],
    space: dict[str, Any],
    hardware: dict[str, Hardware],
) -> Iterator[Row]:
    common = _multi_common(config, space)
    mode = space.get("kv-offloading", "none")
    dram = _dram(key, config, scenario, space, hardware, None)
    topology = f"p{_topology(common['prefill'])}_d{_topology(common['decode'])}"
    for conc in concurrencies(space):
        name = f"{config['model-prefix']}_{topology}_conc{conc}"
        if mode != "none":
            name += _kv_suffix(space)
        row = {
            **_head(config),
            **common,
            "conc": [conc],
            "kv-offloading": mode,
            "total-cpu-dram-gb": dram,
            "duration": AGENTIC_DURATION,
            "exp-name": name,
            "scenario-type": AGENTIC,
            "disagg": config.get("disagg", False),
        }
        if "kv-offload-backend" in space:
            row["kv-offload-backend"] = space["kv-offload-backend"]
        yield _multi_extras(row, config, space)
