"""Plan latency for one changed config key.

Target (issue #3): under 200 ms in process for the real InferenceX configs.
Also measured on a synthetic 2,000-config master file. The timed path is what
`infx sweep plan` does after reading the files: parse every master config, gate
the changelog diff, select, validate the selected config, expand, schema-check
the plan. Run: python benchmarks/bench_plan.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from infx import schemas
from infx.changelog.check import check
from infx.matrix.expand import Hardware, hardware_table
from infx.matrix.load import parse_masters
from infx.matrix.plan import PlanOptions, build_plan, select_configs
from infx.matrix.validate import validate_configs

SHARED = Path(__file__).resolve().parents[2] / "shared" / "inferencex"


def entry(key: str) -> bytes:
    return (
        f'\n- config-keys:\n    - {key}\n  description:\n    - "change"\n  pr-link: XXX\n'.encode()
    )


def plan_once(
    files: dict[str, bytes], history: bytes, key: str, hardware: dict[str, Hardware]
) -> dict:
    masters = parse_masters(files)
    result = check(history, history + entry(key), None, masters.keys())
    assert result.ok, result.violations
    selections = select_configs([e.data for e in result.entries], masters.keys())
    assert not validate_configs(masters, selections)
    payload = build_plan(selections, masters, hardware, PlanOptions()).as_json()
    assert not schemas.errors("sweep-matrix", payload)
    return payload


def measure(
    files: dict[str, bytes],
    history: bytes,
    key: str,
    hardware: dict[str, Hardware],
    repeat: int = 15,
) -> tuple[float, int]:
    payload = plan_once(files, history, key, hardware)
    rows = sum(len(v) for bucket in ("single_node", "multi_node") for v in payload[bucket].values())
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        plan_once(files, history, key, hardware)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, rows


def synthetic(count: int) -> bytes:
    parts = []
    for i in range(count):
        parts.append(
            f"model{i}-fp8-mi355x-vllm:\n  image: vllm/vllm-openai-rocm:v0.{i % 20}.0\n"
            f"  model: org/model-{i}\n  model-prefix: m{i}\n  runner: mi355x\n  precision: fp8\n"
            f"  framework: vllm\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n"
            f"    - isl: 1024\n      osl: 1024\n      search-space:\n"
            f"      - {{ tp: 8, conc-start: 4, conc-end: 64 }}\n      - {{ tp: 4, ep: 4, conc-start: 4, conc-end: 64 }}\n"
            f"    - isl: 8192\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-list: [4, 16, 64] }}\n"
        )
    return "\n".join(parts).encode()


def main() -> int:
    for name in ("master-config", "sweep-matrix", "perf-changelog"):
        schemas.validator(name)
    history = b'- config-keys:\n    - seed\n  description:\n    - "seed"\n  pr-link: https://github.com/a/b/pull/1\n'
    ms, rows = measure(
        {"configs/synthetic-master.yaml": synthetic(2000)}, history, "model1234-fp8-mi355x-vllm", {}
    )
    print(f"synthetic 2,000 configs     median {ms:7.1f} ms  ({rows} rows)")
    ok = True
    if (SHARED / "configs").is_dir():
        from infx.yamlio import load_fast

        files = {
            f"configs/{p.name}": p.read_bytes()
            for p in sorted((SHARED / "configs").glob("*-master.yaml"))
        }
        runners = load_fast((SHARED / "configs/runners.yaml").read_bytes())
        hardware = hardware_table(runners["hardware"])
        real_history = (SHARED / "perf-changelog.yaml").read_bytes()
        for key in ("dsr1-fp4-mi355x-sglang", "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"):
            ms, rows = measure(files, real_history, key, hardware)
            print(f"real configs, {key:<52} median {ms:7.1f} ms  ({rows} rows)")
            ok = ok and ms < 200
        print("target: real configs under 200 ms in process")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
