"""Expansion of hand-written configs into rows in the InferenceX row contract."""

from __future__ import annotations

import pytest

from infx.errors import ConfigError
from infx.matrix.contract import printed
from infx.matrix.expand import (
    Hardware,
    concurrencies,
    expand,
    fingerprint,
    is_agentic,
    total_cpu_dram_gb,
)
from infx.matrix.load import load_yaml as load_fast

HW = {"cluster:mi355x-amds": Hardware(3_095_781, 8), "cluster:small": Hardware(1_000_000, 4)}

SINGLE = load_fast("""
image: img:1
model: org/model
model-prefix: m1
runner: mi355x
precision: fp8
framework: vllm
multinode: false
router: { name: r, version: "1" }
scenarios:
  fixed-seq-len:
  - isl: 1024
    osl: 1024
    search-space:
    - { tp: 8, conc-start: 4, conc-end: 48 }
  - isl: 2048
    osl: 128
    search-space:
    - { tp: 4, ep: 4, dp-attn: true, spec-decoding: mtp, dcp-size: 2, conc-list: [64, 8, 8] }
""")

# The printed field order of a single-node fixed-seq-len row (InferenceX's row contract).
SINGLE_FIELDS = [
    "image",
    "model",
    "model-prefix",
    "precision",
    "framework",
    "spec-decoding",
    "runner",
    "isl",
    "osl",
    "tp",
    "pp",
    "dcp-size",
    "pcp-size",
    "ep",
    "dp-attn",
    "conc",
    "max-model-len",
    "exp-name",
    "disagg",
    "run-eval",
    "eval-only",
    "router",
]


def fixed(rows):
    return [r for r in rows if not is_agentic(r)]


def agentic(rows):
    return [r for r in rows if is_agentic(r)]


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        ({"conc-start": 4, "conc-end": 48}, [4, 8, 16, 32, 48]),
        ({"conc-start": 4, "conc-end": 64}, [4, 8, 16, 32, 64]),
        ({"conc-start": 5, "conc-end": 5}, [5]),
        ({"conc-start": 1, "conc-end": 3}, [1, 2, 3]),
        ({"conc-list": [32, 1, 1]}, [32, 1, 1]),
    ],
)
def test_concurrency_values(space, expected) -> None:
    assert concurrencies(space) == expected


def test_single_node_fixed_rows() -> None:
    rows = [printed(r) for r in expand("k", SINGLE, HW)]
    assert [r["conc"] for r in rows] == [4, 8, 16, 32, 48, 64, 8, 8]
    first = rows[0]
    assert list(first) == SINGLE_FIELDS
    assert first["eval-only"] is False
    assert first["max-model-len"] == 1024 + 1024 + 256
    assert first["exp-name"] == "m1_1k1k"
    assert (first["pp"], first["dcp-size"], first["ep"], first["dp-attn"]) == (1, 1, 1, False)
    assert first["spec-decoding"] == "none" and first["disagg"] is False
    odd = rows[5]
    assert odd["exp-name"] == "m1_2048_128"
    assert (odd["ep"], odd["dp-attn"], odd["spec-decoding"], odd["dcp-size"]) == (4, True, "mtp", 2)


def test_seq_len_name_8k1k() -> None:
    config = {
        **SINGLE,
        "scenarios": {
            "fixed-seq-len": [
                {"isl": 8192, "osl": 1024, "search-space": [{"tp": 8, "conc-list": [4]}]}
            ]
        },
    }
    assert expand("k", config, HW)[0]["exp-name"] == "m1_8k1k"


AGENTIC = load_fast("""
image: img:2
model: org/agent
model-prefix: ag
runner: cluster:mi355x-amds
precision: fp4
framework: vllm
multinode: false
scenarios:
  agentic-coding:
  - dram-utilization: 0.8
    search-space:
    - { tp: 8, kv-offloading: none, conc-list: [1, 4], spec-decoding: mtp }
    - { tp: 8, kv-offloading: dram, kv-offload-backend: { name: lmcache, version: "0.4" }, conc-list: [8] }
    - { tp: 4, pp: 1, kv-offloading: dram, kv-offload-backend: { name: lmcache }, conc-list: [2] }
""")


def test_agentic_single_node_rows() -> None:
    rows = [printed(r) for r in expand("k", AGENTIC, HW)]
    assert [r["exp-name"] for r in rows] == [
        "ag_tp8_conc1_kvnone_spec-mtp",
        "ag_tp8_conc4_kvnone_spec-mtp",
        "ag_tp8_conc8_kvdram-lmcache",
        "ag_tp4_conc2_kvdram-lmcache",
    ]
    assert list(rows[0]) == [
        "image",
        "model",
        "model-prefix",
        "precision",
        "framework",
        "runner",
        "tp",
        "pp",
        "dcp-size",
        "pcp-size",
        "ep",
        "dp-attn",
        "spec-decoding",
        "conc",
        "kv-offloading",
        "total-cpu-dram-gb",
        "duration",
        "exp-name",
        "scenario-type",
    ]
    assert list(rows[2])[14:17] == ["kv-offloading", "kv-offload-backend", "total-cpu-dram-gb"]
    assert rows[0]["total-cpu-dram-gb"] == 0 and rows[0]["duration"] == 3600
    assert rows[2]["total-cpu-dram-gb"] == 2399
    assert rows[3]["total-cpu-dram-gb"] == 1199
    assert rows[2]["kv-offload-backend"] == {"name": "lmcache", "version": "0.4"}


def test_dram_formula_caps_available_memory() -> None:
    assert total_cpu_dram_gb(Hardware(10**9, 8), 0.8, 8) == 2399
    assert total_cpu_dram_gb(Hardware(1_000_000, 4), 0.5, 2) == 262
    # 0.7 is not exact in binary: decimal arithmetic keeps 1,000,000 MiB x 0.7 at 734.003 GB.
    assert total_cpu_dram_gb(Hardware(1_000_000, 1), 0.7, 1) == 734


def test_dram_without_hardware_is_config_error() -> None:
    with pytest.raises(ConfigError, match="hardware entry for runner 'cluster:mi355x-amds'"):
        expand("k", AGENTIC, {})


MULTI = load_fast("""
image: img:3
model: org/big
model-prefix: big
runner: mi355x-disagg
precision: fp4
framework: sglang-disagg
kv-p2p-transfer: mori
multinode: true
disagg: true
scenarios:
  fixed-seq-len:
  - isl: 8192
    osl: 1024
    search-space:
    - spec-decoding: mtp
      conc-start: 4
      conc-end: 32
      prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false, additional-settings: ["P=1"] }
      decode: { num-worker: 2, tp: 8, ep: 8, dp-attn: true }
  agentic-coding:
  - dram-utilization: 0.5
    search-space:
    - conc-list: [2, 4]
      kv-offloading: dram
      kv-offload-backend: { name: hicache }
      prefill: { num-worker: 1, tp: 8, ep: 8, dp-attn: true }
      decode: { num-worker: 1, tp: 4, ep: 1, dp-attn: false }
""")


def test_multi_node_fixed_row_carries_the_list() -> None:
    raw = fixed(expand("k", MULTI, {"mi355x-disagg": Hardware(2_000_000, 8)}))
    (row,) = [printed(r) for r in raw]
    assert row["conc"] == [4, 8, 16, 32]
    assert row["prefill"] == {
        "num-worker": 1,
        "tp": 8,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "additional-settings": ["P=1"],
    }
    assert row["decode"]["additional-settings"] == []
    assert "additional-settings" not in raw[0]["decode"]
    assert (row["eval-only"], row["eval-all-concs"]) == (False, False)
    assert row["exp-name"] == "big_8k1k" and row["kv-p2p-transfer"] == "mori"
    assert row["max-model-len"] == 8192 + 1024 + 256


def test_multi_node_agentic_one_row_per_conc() -> None:
    rows = agentic(expand("k", MULTI, {"mi355x-disagg": Hardware(2_000_000, 8)}))
    assert [r["conc"] for r in rows] == [[2], [4]]
    assert rows[0]["exp-name"] == "big_p1x8ep8dpa_d1x4_conc2_kvdram-hicache"
    # The budget follows the prefill worker's 8 GPUs on an 8-GPU node: the whole node.
    assert rows[0]["total-cpu-dram-gb"] == 1048


def _disagg_agentic(prefill_tp: int) -> dict:
    return load_fast(
        f"""
image: i
model: m
model-prefix: p
runner: cluster:x
precision: fp4
framework: f
multinode: true
scenarios:
  agentic-coding:
  - dram-utilization: 0.5
    search-space:
    - conc-list: [2]
      kv-offloading: dram
      kv-offload-backend: {{ name: hicache }}
      prefill: {{ num-worker: 1, tp: {prefill_tp}, ep: 1, dp-attn: false }}
      decode: {{ num-worker: 1, tp: 8, ep: 1, dp-attn: false }}
"""
    )


def test_multi_node_agentic_budget_follows_the_prefill_worker() -> None:
    hardware = {"cluster:x": Hardware(2_000_000, 8)}
    (row,) = expand("k", _disagg_agentic(2), hardware)
    assert row["total-cpu-dram-gb"] == 262  # 2 of 8 GPUs: a quarter of half the node's DRAM
    (row,) = expand("k", _disagg_agentic(16), hardware)
    assert row["total-cpu-dram-gb"] == 1048  # a worker spanning two nodes fills each node
    with pytest.raises(ConfigError, match="does not divide gpus-per-node 8"):
        expand("k", _disagg_agentic(3), hardware)


def test_scenario_filter() -> None:
    rows = expand("k", MULTI, {"mi355x-disagg": Hardware(1, 8)}, ("agentic-coding",))
    assert fixed(rows) == [] and len(agentic(rows)) == 2


def test_fingerprint_follows_the_recipe_not_the_point() -> None:
    rows = expand("k", SINGLE, HW)
    assert fingerprint(rows[0]) == fingerprint(rows[1])
    assert fingerprint(rows[0]) != fingerprint({**rows[0], "image": "img:2"})
    assert fingerprint(rows[0]) == fingerprint({**rows[0], "recipe-fingerprint": "x" * 64})


def test_fingerprint_hashes_worker_blocks_as_the_config_writes_them() -> None:
    hardware = {"mi355x-disagg": Hardware(2_000_000, 8)}
    implicit = fixed(expand("k", MULTI, hardware))[0]
    # The same config with the decode block's default `additional-settings: []` written out.
    explicit_config = {
        **MULTI,
        "scenarios": {"fixed-seq-len": [dict(MULTI["scenarios"]["fixed-seq-len"][0])]},
    }
    seq = explicit_config["scenarios"]["fixed-seq-len"][0]
    space = dict(seq["search-space"][0])
    space["decode"] = {**space["decode"], "additional-settings": []}
    seq["search-space"] = [space]
    explicit = fixed(expand("k", explicit_config, hardware))[0]
    assert printed(implicit)["decode"] == printed(explicit)["decode"]
    assert fingerprint(implicit) != fingerprint(explicit)
