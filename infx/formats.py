"""The InferenceX formats infx speaks: which changelog keys, master-config schema and matrix
row shapes each era of InferenceX's planner had, as data.

InferenceX changes its schema and its planner's output now and then; a repository laid out
like it is on one of those eras, and its workflows read the rows that era printed. Each
`Format` below says, field by field, what its era accepts and prints, so following
InferenceX is an edit here (and a schema file in `schemas/`), not a hunt through the
planner. `infx.matrix.era` decides which one a repository is on.

Formats are listed oldest first; each newer one is written as the older one plus what
changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

_HEAD = ("image", "model", "model-prefix", "precision", "framework")
_PARALLEL = ("tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn")
_FIXED_HEAD = (*_HEAD, "spec-decoding", "runner", "isl", "osl")
_FIXED_POINT = ("conc", "max-model-len", "exp-name", "disagg", "run-eval", "eval-only")


def _inserted(fields: tuple[str, ...], after: str, *new: str) -> tuple[str, ...]:
    """`fields` with `new` placed right after `after`."""
    at = fields.index(after) + 1
    return (*fields[:at], *new, *fields[at:])


@dataclass(frozen=True)
class Shapes:
    """The printed field order of each kind of matrix row, and the defaults filled in where
    a row leaves a field out. A field absent from a row and from the defaults (or None) is
    not printed."""

    single_fixed: tuple[str, ...]
    multi_fixed: tuple[str, ...]
    single_agentic: tuple[str, ...]
    multi_agentic: tuple[str, ...]
    worker: tuple[str, ...]
    defaults: Mapping[str, Mapping[str, Any]]
    worker_defaults: Mapping[str, Any]


_PR2707_SHAPES = Shapes(
    single_fixed=(*_FIXED_HEAD, *_PARALLEL, *_FIXED_POINT, "router", "recipe-fingerprint"),
    multi_fixed=(
        *_FIXED_HEAD,
        "prefill",
        "decode",
        *_FIXED_POINT,
        "eval-conc",
        "eval-all-concs",
        "router",
        "kv-p2p-transfer",
        "recipe-fingerprint",
    ),
    single_agentic=(
        *_HEAD,
        "runner",
        *_PARALLEL,
        "spec-decoding",
        "conc",
        "kv-offloading",
        "kv-offload-backend",
        "router",
        "total-cpu-dram-gb",
        "duration",
        "exp-name",
        "scenario-type",
        "run-eval",
        "eval-only",
        "recipe-fingerprint",
    ),
    multi_agentic=(
        *_HEAD,
        "spec-decoding",
        "runner",
        "prefill",
        "decode",
        "conc",
        "kv-offloading",
        "kv-offload-backend",
        "router",
        "kv-p2p-transfer",
        "total-cpu-dram-gb",
        "duration",
        "exp-name",
        "disagg",
        "scenario-type",
        "run-eval",
        "eval-only",
        "eval-conc",
        "recipe-fingerprint",
    ),
    worker=(
        "num-worker",
        "tp",
        "pp",
        "dcp-size",
        "pcp-size",
        "ep",
        "dp-attn",
        "hardware",
        "additional-settings",
    ),
    defaults=MappingProxyType(
        {
            "single_fixed": {"eval-only": False},
            "multi_fixed": {"eval-only": False, "eval-all-concs": False},
            "single_agentic": {},
            "multi_agentic": {},
        }
    ),
    worker_defaults=MappingProxyType({"additional-settings": []}),
)

_EVAL_TAG = ("eval-framework", "eval-suite")

_PR3058_SHAPES = replace(
    _PR2707_SHAPES,
    single_fixed=_inserted(_PR2707_SHAPES.single_fixed, "eval-only", *_EVAL_TAG),
    multi_fixed=_inserted(
        _inserted(_PR2707_SHAPES.multi_fixed, "eval-all-concs", *_EVAL_TAG), "runner", "node-count"
    ),
    single_agentic=_inserted(_PR2707_SHAPES.single_agentic, "eval-only", *_EVAL_TAG),
    multi_agentic=_inserted(
        _inserted(_PR2707_SHAPES.multi_agentic, "eval-conc", *_EVAL_TAG), "runner", "node-count"
    ),
)

_RECIPE = ("srt-recipe", "eval-srt-recipe")

_E2E_SHAPES = replace(
    _PR3058_SHAPES,
    single_fixed=_inserted(
        _inserted(_PR3058_SHAPES.single_fixed, "osl", "require-power"), "image", *_RECIPE
    ),
    multi_fixed=(*_RECIPE, *_inserted(_PR3058_SHAPES.multi_fixed, "osl", "require-power")),
    single_agentic=_inserted(_PR3058_SHAPES.single_agentic, "image", *_RECIPE),
    multi_agentic=(*_RECIPE, *_PR3058_SHAPES.multi_agentic),
    defaults=MappingProxyType(
        {
            "single_fixed": {"eval-only": False, "require-power": False},
            "multi_fixed": {"eval-only": False, "eval-all-concs": False, "require-power": False},
            "single_agentic": {},
            "multi_agentic": {},
        }
    ),
)

_PR2707_ENTRY = (
    "config-keys",
    "description",
    "pr-link",
    "evals-only",
    "all-evals",
    "append-only",
    "eval-min-prefill-ep",
    "scenario-type",
)
_FLAGS = ("evals-only", "all-evals", "append-only")


@dataclass(frozen=True)
class Format:
    """One era of InferenceX's schema and planner.

    `entry_fields` is the order a plan's `changelog_metadata` prints an entry in, and also
    every key an entry may hold; `entry_flags` are the boolean keys printed as false when an
    entry leaves them out. `space_keys` are the keys a multi-node search-space entry may
    hold. `aggregate` is how a multi-node config that is not disaggregated names its one
    serving role: as a prefill/decode pair, or as one `worker` with `num-nodes`.
    `raw_worker_defaults` are filled into a row's worker blocks before its
    `recipe-fingerprint` is taken (the fingerprint keys historical results, so what it hashes
    is part of the format). `trim` is how `--trim-conc` groups throughput rows: per `curve`
    (rows equal but for concurrency and name; a multi-node row keeps its lowest
    concurrency) or per deployment `shape` (the same, and multi-node rows of one topology
    collapse to the one with the lowest concurrency). `vendor_evals` maps a model prefix to
    the (framework, suite) that evaluates every agentic point of it.

    `fixed_keys` are the keys a fixed-seq-len scenario may hold (`require-power` among them
    where the era knows it). `recipe` is where a row names its srt-slurm recipe: a worker's
    `CONFIG_FILE=` setting, or the search space's own `srt-recipe` (and `eval-srt-recipe`),
    printed on the row, with the old settings refused. `recipe_nodes` is how such a recipe
    counts the nodes a job takes (`infx.matrix.nodes`): its `resources`, or its schema-2
    `roles` and services. `runners` is the runners.yaml section holding each label's node
    facts (GPUs per node, CPU DRAM): `hardware`, or `clusters` keyed by `cluster:<id>`.
    """

    name: str
    title: str
    master_schema: str
    shapes: Shapes
    entry_fields: tuple[str, ...]
    entry_flags: tuple[str, ...]
    space_keys: frozenset[str]
    aggregate: Literal["prefill-decode", "worker"]
    raw_worker_defaults: Mapping[str, Any]
    trim: Literal["curve", "shape"]
    node_count: bool = False
    eval_framework: str | None = None
    vendor_evals: Mapping[str, tuple[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    fixed_keys: frozenset[str] = frozenset({"isl", "osl", "search-space"})
    recipe: Literal["setting", "field"] = "setting"
    recipe_nodes: Literal["resources", "roles"] = "resources"
    runners: Literal["hardware", "clusters"] = "hardware"

    @property
    def entry_keys(self) -> frozenset[str]:
        return frozenset(self.entry_fields)

    @property
    def require_power(self) -> bool:
        return "require-power" in self.fixed_keys

    def __str__(self) -> str:
        return f"{self.name} ({self.title})"


_SPACE_KEYS = frozenset(
    {
        "prefill",
        "decode",
        "spec-decoding",
        "router",
        "kv-p2p-transfer",
        "conc-start",
        "conc-end",
        "conc-list",
        "kv-offloading",
        "kv-offload-backend",
    }
)

PR2707 = Format(
    name="pr2707",
    title="InferenceX at PR #2707, August 2026",
    master_schema="master-config",
    shapes=_PR2707_SHAPES,
    entry_fields=_PR2707_ENTRY,
    entry_flags=_FLAGS,
    space_keys=_SPACE_KEYS,
    aggregate="prefill-decode",
    raw_worker_defaults=MappingProxyType({"pp": 1, "dcp-size": 1, "pcp-size": 1}),
    trim="curve",
)

PR3058 = replace(
    PR2707,
    name="pr3058",
    title="InferenceX at PR #3058, September 2026",
    master_schema="master-config-pr3058",
    shapes=_PR3058_SHAPES,
    entry_fields=_inserted(_PR2707_ENTRY, "all-evals", "no-evals"),
    entry_flags=(*_FLAGS, "no-evals"),
    space_keys=_SPACE_KEYS | {"worker", "num-nodes"},
    aggregate="worker",
    raw_worker_defaults=MappingProxyType({**PR2707.raw_worker_defaults, "additional-settings": []}),
    trim="shape",
    node_count=True,
    eval_framework="lm-eval",
    vendor_evals=MappingProxyType(
        {
            "kimik3": ("kimi-vendor", "kimi_tool_call_schema"),
            "minimaxm3": ("minimax-vendor", "minimax_m3_smoke"),
        }
    ),
)

E2E = replace(
    PR3058,
    name="e2e",
    title="InferenceX with its files under inferencex-e2e/, later than PR #3058",
    master_schema="master-config-e2e",
    shapes=_E2E_SHAPES,
    space_keys=PR3058.space_keys | set(_RECIPE),
    fixed_keys=PR3058.fixed_keys | {"require-power"},
    recipe="field",
    recipe_nodes="roles",
    runners="clusters",
    vendor_evals=MappingProxyType(
        {
            "kimik3": ("kimi-vendor", "kimi_tool_call_schema_full"),
            "minimaxm3": ("minimax-vendor", "minimax_m3_full"),
        }
    ),
)

# Oldest first.
FORMATS: tuple[Format, ...] = (PR2707, PR3058, E2E)
NAMES = tuple(f.name for f in FORMATS)


def by_name(name: str) -> Format:
    """The format called `name`; a KeyError names the known ones."""
    for known in FORMATS:
        if known.name == name:
            return known
    raise KeyError(f"unknown format {name!r}; known formats: {', '.join(NAMES)}")


E2E_FOLDER = "inferencex-e2e"


def layout_twin(path: str) -> str:
    """Where `path` is in InferenceX's other layout: under `inferencex-e2e/` when it is at
    the root, at the root when it is under that folder. Later InferenceX looks a file up at a
    ref in both places, so a diff across the move compares one file with itself."""
    inside = path.removeprefix(f"{E2E_FOLDER}/")
    return inside if inside != path else f"{E2E_FOLDER}/{path}"
