"""Expand one master config into the rows of a sweep, as the InferenceX generator does.

Rows come out "raw": the fields the generator sets, before the row contract fills
defaults and fixes the field order (`infx.matrix.contract`). The raw form matters
because `recipe-fingerprint` hashes it, and published fingerprints key historical
results.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from infx.digest import hexdigest
from infx.errors import ConfigError
from infx.formats import PR2707, Format
from infx.matrix.nodes import node_count
from infx.matrix.recipes import RecipeReader, fingerprinted

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
SCENARIOS = (FIXED, AGENTIC)
AGENTIC_DURATION = 3600
MAX_LEN_PAD = 256
# 3 TB (decimal) expressed in MiB: the most CPU DRAM one node may offload KV into.
DRAM_CAP_MIB = 2_861_022
SEQ_LEN_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}
# Fields that name a point on a curve rather than the recipe that produced it.
POINT_FIELDS = frozenset({"conc", "exp-name", "recipe-fingerprint"})
# Where formats with `recipe = "field"` name a row's srt-slurm recipes, and the worker
# settings that named them before (read as those fields when comparing with old rows).
RECIPE_FIELDS = ("srt-recipe", "eval-srt-recipe")
RECIPE_SETTINGS = {"CONFIG_FILE": "srt-recipe", "EVAL_CONFIG_FILE": "eval-srt-recipe"}
# The one sequence a `require-power` scenario may have.
POWER_SEQ = (8192, 1024)

# A row as the generator makes it, before `infx.matrix.contract.printed` fixes its shape.
RawRow = dict[str, Any]


@dataclass(frozen=True)
class Hardware:
    available_cpu_dram_mib: int | None
    gpus_per_node: int


def hardware_table(entries: Mapping[str, Mapping[str, int]]) -> dict[str, Hardware]:
    """Node facts per label (runners.yaml `hardware:`, or its `clusters:` under their
    `cluster:<id>` labels) -> label -> Hardware."""
    return {
        label: Hardware(hw.get("available-cpu-dram-mib"), hw["gpus-per-node"])
        for label, hw in entries.items()
    }


def seq_len_name(isl: int, osl: int) -> str:
    return SEQ_LEN_NAMES.get((isl, osl), f"{isl}_{osl}")


def concurrencies(space: Mapping[str, Any]) -> list[int]:
    """conc-list verbatim; a range doubles from start and always ends on end (4..48 -> 4,8,16,32,48)."""
    if space.get("conc-list"):
        return list(space["conc-list"])
    start, end = space["conc-start"], space["conc-end"]
    values, conc = [], start
    while conc < end:
        values.append(conc)
        conc *= 2
    values.append(end)
    return values


def total_cpu_dram_gb(hardware: Hardware, utilization: float, gpus: int) -> int:
    """CPU DRAM budget for KV offload, scaled to the share of the node one server uses.

    Decimal arithmetic in the reference's order of operations, so the truncated
    result matches it exactly.
    """
    assert hardware.available_cpu_dram_mib is not None
    mib = min(hardware.available_cpu_dram_mib, DRAM_CAP_MIB)
    budget = Decimal(mib) * 2**20 * Decimal(str(utilization)) * gpus / hardware.gpus_per_node
    return int(budget / 1_000_000_000)


def recipe_identity(row: RawRow, fmt: Format = PR2707) -> RawRow:
    """The raw row without its point fields: what its fingerprint hashes and what tells its
    curve apart. In formats that name recipes in `srt-recipe` fields, a worker's old
    `CONFIG_FILE=` / `EVAL_CONFIG_FILE=` setting (a row of an older revision) reads as that
    field, so a recipe keeps its identity across the change of spelling."""
    found = {k: v for k, v in row.items() if k not in POINT_FIELDS}
    if fmt.recipe != "field":
        return found
    for role in ("prefill", "decode"):
        worker = found.get(role)
        settings = worker.get("additional-settings") if isinstance(worker, dict) else None
        if not settings:
            continue
        kept = []
        for setting in settings:
            name, _, value = str(setting).partition("=")
            field = RECIPE_SETTINGS.get(name)
            if field is None:
                kept.append(setting)
            elif found.get(field, value) != value:
                raise ConfigError(f"{row.get('exp-name')}: conflicting {field} selectors")
            else:
                found[field] = value
        assert isinstance(worker, dict)
        found[role] = {k: v for k, v in worker.items() if k != "additional-settings"}
        if kept:
            found[role]["additional-settings"] = kept
    return found


def fingerprint(row: RawRow, fmt: Format = PR2707, recipes: RecipeReader | None = None) -> str:
    """sha256 of the canonical JSON of the row's recipe identity (`recipe_identity`); in
    formats whose rows name an `srt-recipe`, of that identity beside the recipe variant the
    row names (`infx.matrix.recipes.fingerprinted`), so editing the recipe is a new curve."""
    found: Any = recipe_identity(row, fmt)
    named = row.get("srt-recipe")
    if fmt.recipe == "field" and named and recipes is not None:
        found = {"row": found, "recipe": [fingerprinted(str(named), recipes)]}
    return hexdigest(found, ascii=True)  # as InferenceX's own recipe-fingerprint


def is_agentic(row: Mapping[str, Any]) -> bool:
    return row.get("scenario-type") == AGENTIC


def row_concs(row: Mapping[str, Any]) -> list[int]:
    """The concurrencies one row runs: multi-node rows carry a list, single-node rows one."""
    conc = row["conc"]
    return list(conc) if isinstance(conc, list) else [conc]


def is_multinode(row: Mapping[str, Any]) -> bool:
    return row.get("prefill") is not None


def _head(config: Mapping[str, Any]) -> RawRow:
    return {
        k: config[k] for k in ("image", "model", "model-prefix", "precision", "framework", "runner")
    }


def _parallelism(space: Mapping[str, Any]) -> RawRow:
    return {
        "tp": space["tp"],
        "pp": space.get("pp", 1),
        "dcp-size": space.get("dcp-size", 1),
        "pcp-size": space.get("pcp-size", 1),
    }


def _optional(space: Mapping[str, Any], key: str, default: Any) -> Any:
    value = space.get(key)
    return default if value is None else value


def _worker(block: Mapping[str, Any], fmt: Format) -> RawRow:
    """The config's worker block with the format's raw defaults made explicit (pp,
    dcp-size and pcp-size; `additional-settings` too where the format fills it before the
    fingerprint): what the row hashes."""
    found = dict(block)
    for key, default in fmt.raw_worker_defaults.items():
        if found.get(key) is None:
            found[key] = list(default) if isinstance(default, list) else default
    return found


def _workers(space: Mapping[str, Any], fmt: Format) -> tuple[RawRow, RawRow]:
    """The row's prefill and decode blocks: the config's own pair, or an aggregate `worker`
    as one prefill worker (num-worker 1 unless given) beside an empty decode role."""
    if "worker" not in space:
        return _worker(space["prefill"], fmt), _worker(space["decode"], fmt)
    worker = _worker(space["worker"], fmt)
    prefill = {"num-worker": 1, **worker}
    decode = {
        "num-worker": 0,
        **{k: v for k, v in worker.items() if k not in ("num-worker", "additional-settings")},
    }
    return prefill, decode


def _recipes(space: Mapping[str, Any], fmt: Format) -> RawRow:
    """`srt-recipe` and `eval-srt-recipe` as the search space names them, in formats whose
    rows carry them."""
    if fmt.recipe != "field":
        return {}
    return {k: space[k] for k in RECIPE_FIELDS if space.get(k) is not None}


def _power(key: str, seq: Mapping[str, Any], fmt: Format) -> RawRow:
    """`require-power: true` on the rows of a fixed-seq-len scenario that asks for it, in
    formats that know it; the power rollout measures 8k1k only."""
    if not (fmt.require_power and seq.get("require-power")):
        return {}
    if (seq["isl"], seq["osl"]) != POWER_SEQ:
        raise ConfigError(
            f"{key}: require-power is for isl {POWER_SEQ[0]} / osl {POWER_SEQ[1]} only "
            f"(this scenario is {seq['isl']} / {seq['osl']})"
        )
    return {"require-power": True}


def _components(space: Mapping[str, Any], config: Mapping[str, Any]) -> RawRow:
    """router and kv-p2p-transfer, from the search-space entry or else the config."""
    found = {}
    for key in ("router", "kv-p2p-transfer"):
        value = space.get(key, config.get(key))
        if value is not None:
            found[key] = value
    return found


def _topology_tag(worker: Mapping[str, Any], role: str) -> str:
    tag = f"{role}{worker['num-worker']}x{worker['tp']}"
    if worker.get("ep", 1) != 1:
        tag += f"ep{worker['ep']}"
    if worker.get("dp-attn", False):
        tag += "dpa"
    return tag


def _kv_suffix(mode: str, backend: Mapping[str, Any] | None) -> str:
    return "kvnone" if mode == "none" else f"kv{mode}-{(backend or {})['name']}"


def _replica_gpus(key: str, worker: Mapping[str, Any], gpus_per_node: int) -> int:
    """GPUs one worker replica takes on one node; a replica must tile nodes exactly."""
    gpus = int(worker["tp"] * worker.get("pp", 1) * worker.get("pcp-size", 1))
    if gpus > gpus_per_node:
        if gpus % gpus_per_node:
            raise ConfigError(
                f"{key}: a prefill worker of {gpus} GPUs spans nodes but is not a multiple "
                f"of gpus-per-node {gpus_per_node}"
            )
        return gpus_per_node
    if gpus_per_node % gpus:
        raise ConfigError(
            f"{key}: a prefill worker of {gpus} GPUs does not divide gpus-per-node "
            f"{gpus_per_node} evenly"
        )
    return gpus


@dataclass(frozen=True)
class _Build:
    """What the rows of one config are built against: its key and body, the format, the
    runners' hardware and the repository's recipe files (for `node-count`)."""

    key: str
    config: Mapping[str, Any]
    hardware: Mapping[str, Hardware]
    fmt: Format
    recipes: RecipeReader | None

    def multi(self, row: RawRow, space: Mapping[str, Any]) -> RawRow:
        """A multi-node row with its components and, where the format prints it, its
        node count."""
        row.update(_components(space, self.config))
        if self.fmt.node_count:
            gpus = {label: hw.gpus_per_node for label, hw in self.hardware.items()}
            try:
                row["node-count"] = node_count(
                    row, space.get("num-nodes"), gpus, self.recipes, self.fmt.recipe_nodes
                )
            except ConfigError as exc:
                raise ConfigError(f"{self.key}: {exc}") from None
        return row


@dataclass(frozen=True)
class _Agentic:
    """One agentic-coding scenario of one config, with what its rows need besides a space."""

    build: _Build
    scenario: Mapping[str, Any]

    def finish(self, row: RawRow, space: Mapping[str, Any]) -> RawRow:
        backend = space.get("kv-offload-backend")
        if backend is not None:
            row["kv-offload-backend"] = backend
        if is_multinode(row):
            return self.build.multi(row, space)
        row.update(_components(space, self.build.config))
        return row


def _dram_gb(where: _Agentic, space: Mapping[str, Any]) -> int:
    """KV offload budget: single-node by the server's GPUs, multi-node by one replica of the
    prefill (or aggregate) worker on one node (only that role offloads to CPU DRAM)."""
    if space.get("kv-offloading", "none") != "dram":
        return 0
    build = where.build
    key, runner, hardware = build.key, build.config["runner"], build.hardware
    if runner not in hardware:
        raise ConfigError(
            f"{key}: kv-offloading dram needs a hardware entry for runner {runner!r} "
            "in configs/runners.yaml"
        )
    node = hardware[runner]
    if node.available_cpu_dram_mib is None:
        raise ConfigError(
            f"{key}: kv-offloading dram needs available-cpu-dram-mib for runner {runner!r} "
            "in configs/runners.yaml"
        )
    role = "worker" if "worker" in space else "prefill" if "prefill" in space else None
    if role is not None:
        gpus = _replica_gpus(key, space[role], node.gpus_per_node)
    else:
        gpus = space["tp"] * space.get("pp", 1) * space.get("pcp-size", 1)
        if gpus > node.gpus_per_node:
            raise ConfigError(
                f"{key}: tp*pp*pcp-size = {gpus} GPUs exceeds gpus-per-node "
                f"{node.gpus_per_node} of runner {runner!r}"
            )
    return total_cpu_dram_gb(node, where.scenario["dram-utilization"], gpus)


def expand(
    key: str,
    config: Mapping[str, Any],
    hardware: Mapping[str, Hardware],
    scenarios: tuple[str, ...] | frozenset[str] = SCENARIOS,
    fmt: Format = PR2707,
    recipes: RecipeReader | None = None,
) -> list[RawRow]:
    """Every benchmark point of `config` for the selected scenarios, as `fmt` builds them:
    fixed-seq-len rows first, then agentic rows, each in config order. `recipes` reads the
    repository's srt-slurm recipes for node counts (None: none are read)."""
    build = _Build(key, config, hardware, fmt, recipes)
    multinode = bool(config.get("multinode", False))
    found = config["scenarios"]
    rows: list[RawRow] = []
    if FIXED in scenarios:
        for seq in found.get(FIXED) or []:
            for space in seq["search-space"]:
                if multinode:
                    rows.extend(_fixed_multi(build, seq, space))
                else:
                    rows.extend(_fixed_single(build, seq, space))
    if AGENTIC in scenarios:
        for scenario in found.get(AGENTIC) or []:
            where = _Agentic(build, scenario)
            for space in scenario["search-space"]:
                agentic = _agentic_multi if multinode else _agentic_single
                rows.extend(agentic(where, space))
    return rows


def _fixed_single(
    build: _Build, seq: Mapping[str, Any], space: Mapping[str, Any]
) -> Iterator[RawRow]:
    config = build.config
    isl, osl = seq["isl"], seq["osl"]
    power = _power(build.key, seq, build.fmt)
    for conc in concurrencies(space):
        yield {
            **_head(config),
            "isl": isl,
            "osl": osl,
            **power,
            **_parallelism(space),
            "conc": conc,
            "max-model-len": isl + osl + MAX_LEN_PAD,
            "ep": _optional(space, "ep", 1),
            "dp-attn": _optional(space, "dp-attn", False),
            "spec-decoding": space.get("spec-decoding", "none"),
            **_recipes(space, build.fmt),
            "exp-name": f"{config['model-prefix']}_{seq_len_name(isl, osl)}",
            "disagg": config.get("disagg", False),
            "run-eval": False,
            **_components(space, config),
        }


def _fixed_multi(
    build: _Build, seq: Mapping[str, Any], space: Mapping[str, Any]
) -> Iterator[RawRow]:
    config = build.config
    isl, osl = seq["isl"], seq["osl"]
    prefill, decode = _workers(space, build.fmt)
    row = {
        **_head(config),
        "isl": isl,
        "osl": osl,
        **_power(build.key, seq, build.fmt),
        "spec-decoding": space.get("spec-decoding", "none"),
        "prefill": prefill,
        "decode": decode,
        "conc": concurrencies(space),
        "max-model-len": isl + osl + MAX_LEN_PAD,
        **_recipes(space, build.fmt),
        "exp-name": f"{config['model-prefix']}_{seq_len_name(isl, osl)}",
        "disagg": config.get("disagg", False),
        "run-eval": False,
    }
    yield build.multi(row, space)


def _agentic_single(where: _Agentic, space: Mapping[str, Any]) -> Iterator[RawRow]:
    config = where.build.config
    par = _parallelism(space)
    spec = space.get("spec-decoding", "none")
    mode = space["kv-offloading"]
    backend = space.get("kv-offload-backend")
    dram = _dram_gb(where, space)
    for conc in concurrencies(space):
        name = f"{config['model-prefix']}_tp{par['tp']}_conc{conc}_{_kv_suffix(mode, backend)}"
        if spec != "none":
            name += f"_spec-{spec}"
        row = {
            **_head(config),
            **par,
            "ep": _optional(space, "ep", 1),
            "dp-attn": _optional(space, "dp-attn", False),
            "spec-decoding": spec,
            "conc": conc,
            **_recipes(space, where.build.fmt),
            "kv-offloading": mode,
            "total-cpu-dram-gb": dram,
            "duration": AGENTIC_DURATION,
            "exp-name": name,
            "scenario-type": AGENTIC,
        }
        yield where.finish(row, space)


def _agentic_multi(where: _Agentic, space: Mapping[str, Any]) -> Iterator[RawRow]:
    config = where.build.config
    prefill, decode = _workers(space, where.build.fmt)
    mode = space.get("kv-offloading", "none")
    backend = space.get("kv-offload-backend")
    dram = _dram_gb(where, space)
    topology = f"{_topology_tag(prefill, 'p')}_{_topology_tag(decode, 'd')}"
    suffix = "" if mode == "none" else f"_{_kv_suffix(mode, backend)}"
    # One allocation per concurrency: each row carries a one-item list.
    for conc in concurrencies(space):
        row = {
            **_head(config),
            "spec-decoding": space.get("spec-decoding", "none"),
            "prefill": prefill,
            "decode": decode,
            "conc": [conc],
            **_recipes(space, where.build.fmt),
            "kv-offloading": mode,
            "total-cpu-dram-gb": dram,
            "duration": AGENTIC_DURATION,
            "exp-name": f"{config['model-prefix']}_{topology}_conc{conc}{suffix}",
            "disagg": config.get("disagg", False),
            "scenario-type": AGENTIC,
        }
        yield where.finish(row, space)
