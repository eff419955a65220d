"""Plan latency for one changed config key, in process.

Times `infx.matrix.pipeline.plan_sweep` (what `infx sweep plan` runs once it has read
the files): index the master configs, attribute the added entry, validate and expand
the selected config, schema-check the plan. Measured on a synthetic 2,000-config master
file and, when ../shared/inferencex is present, on the real InferenceX configs.
Target (issue #3): under 200 ms in process for the real configs; the whole process is
timed by benchmarks/bench_cli.py. Run: python benchmarks/bench_plan.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from infx import schemas
from infx.matrix.expand import Hardware, hardware_table
from infx.matrix.load import load_yaml, parse_masters
from infx.matrix.options import PlanOptions
from infx.matrix.pipeline import SweepInputs, plan_sweep
from infx.matrix.plan import Revision

SHARED = Path(__file__).resolve().parents[2] / "shared" / "inferencex"


def entry(key: str) -> bytes:
    return (
        f'\n- config-keys:\n    - {key}\n  description:\n    - "change"\n  pr-link: XXX\n'.encode()
    )


def plan_once(
    files: dict[str, bytes], history: bytes, key: str, hardware: dict[str, Hardware]
) -> dict:
    inputs = SweepInputs(
        changelog_base=history,
        changelog_head=history + entry(key),
        head=Revision(parse_masters(files), hardware),
        refs=("base", "head"),
    )
    return plan_sweep(inputs, PlanOptions()).plan.as_json()


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
        files = {
            f"configs/{name}": (SHARED / "configs" / name).read_bytes()
            for name in ("amd-master.yaml", "nvidia-master.yaml")
        }
        runners = load_yaml((SHARED / "configs/runners.yaml").read_bytes())
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
