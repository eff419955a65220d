"""A benchmark repository with single-node, agentic and multi-node configs and runners."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import GitRepo, make_repo

AMD = """\
llama-fp8-mi355x-vllm:
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 32 }
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
      - { tp: 4, conc-start: 16, conc-end: 64 }

dsv41flash-fp4-mi355x-vllm-agentic:
  image: vllm/vllm-openai-rocm:nightly-1
  model: deepseek-ai/DeepSeek-V4.1-Flash
  model-prefix: dsv41flash
  runner: cluster:mi355x-amds
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - { tp: 8, spec-decoding: mtp, kv-offloading: none, conc-list: [1, 4, 16] }
      - { tp: 8, spec-decoding: mtp, kv-offloading: dram, kv-offload-backend: { name: vllm-simple }, conc-list: [32] }

dsr1-fp4-mi355x-sglang-disagg:
  image: lmsysorg/sglang-rocm:v0.5.12
  model: amd/DeepSeek-R1
  model-prefix: dsr1
  runner: mi355x-disagg
  precision: fp4
  framework: sglang-disagg
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [1, 8, 32]
        prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
"""

RUNNERS = """\
labels:
  mi355x: [mi355x-amds_00, mi355x-amds_01]
  mi355x-disagg: [mi355x-amds_06, mi355x-amds_07]
  cluster:mi355x-amds: [mi355x-amds_00, mi355x-amds_01]
hardware:
  cluster:mi355x-amds:
    available-cpu-dram-mib: 3_095_781
    gpus-per-node: 8
"""


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    for name in ("GITHUB_REPOSITORY", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    repo = make_repo(tmp_path / "bench", history="", master=AMD)
    repo.commit("runners", **{"configs__runners.yaml": RUNNERS})
    repo.git("tag", "-f", "base")
    return repo
