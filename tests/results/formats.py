"""Client output files in the clients' real formats, written from chosen numbers.

vLLM's serving benchmark (`--save-result`) and lm-evaluation-harness write these
shapes; the field names are theirs. aiperf output comes from running aiperf itself
(see test_end_to_end.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infx.matrix.contract import printed
from infx.matrix.expand import expand, hardware_table, is_agentic
from infx.matrix.load import load_yaml as load_fast

ROOT = Path(__file__).resolve().parents[2]
KEY = "dsv41flash-fp4-mi355x-vllm-agentic-dspark"


def agentic_rows() -> list[dict[str, Any]]:
    """The real agentic rows this repository's config plans."""
    config = load_fast((ROOT / "configs/amd-master.yaml").read_bytes())[KEY]
    runners = load_fast((ROOT / "configs/runners.yaml").read_bytes())
    rows = expand(KEY, config, hardware_table(runners["hardware"]))
    return [printed(r) for r in rows if is_agentic(r)]


def fixed_row(**overrides: Any) -> dict[str, Any]:
    """A single-node fixed-seq-len row in the shape `infx sweep plan` emits."""
    row = {
        "image": "vllm/vllm-openai-rocm:v0.11.0",
        "model": "meta-llama/Llama-3.3-70B-Instruct",
        "model-prefix": "llama70b",
        "precision": "fp8",
        "framework": "vllm",
        "runner": "mi355x",
        "isl": 1024,
        "osl": 1024,
        "tp": 4,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "conc": 16,
        "max-model-len": 2304,
        "ep": 1,
        "dp-attn": False,
        "spec-decoding": "none",
        "exp-name": "llama70b_1k1k",
        "disagg": False,
        "run-eval": False,
        "recipe-fingerprint": "ab" * 32,
    }
    row.update(overrides)
    return printed(row)


def worker(num: int, tp: int, ep: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "num-worker": num,
        "tp": tp,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": ep,
        "dp-attn": False,
        "additional-settings": [],
        **extra,
    }


def multinode_row(**overrides: Any) -> dict[str, Any]:
    row = {
        "image": "lmsysorg/sglang:v0.5.5",
        "model": "deepseek-ai/DeepSeek-R1",
        "model-prefix": "dsr1",
        "precision": "fp4",
        "framework": "sglang",
        "runner": "gb200",
        "isl": 8192,
        "osl": 1024,
        "spec-decoding": "none",
        "prefill": worker(2, 4, 4),
        "decode": worker(1, 8, 8),
        "conc": [64, 128],
        "max-model-len": 9472,
        "exp-name": "dsr1_8k1k",
        "disagg": True,
        "run-eval": False,
    }
    row.update(overrides)
    return printed(row)


def vllm_result(
    *,
    conc: int,
    total: float,
    output: float,
    ttft_ms: float,
    tpot_ms: float,
    itl_ms: float,
    e2el_ms: float,
    completed: int = 64,
    model: str = "meta-llama/Llama-3.3-70B-Instruct",
) -> dict[str, Any]:
    """What `vllm bench serve --save-result --percentile-metrics ttft,tpot,itl,e2el` writes."""
    doc: dict[str, Any] = {
        "date": "20261203-101010",
        "backend": "vllm",
        "model_id": model,
        "tokenizer_id": model,
        "num_prompts": completed,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": conc,
        "duration": 120.5,
        "completed": completed,
        "total_input_tokens": 65536,
        "total_output_tokens": 65536,
        "request_throughput": completed / 120.5,
        "request_goodput:": None,
        "output_throughput": output,
        "total_token_throughput": total,
    }
    for name, value in (("ttft", ttft_ms), ("tpot", tpot_ms), ("itl", itl_ms), ("e2el", e2el_ms)):
        doc[f"mean_{name}_ms"] = value
        doc[f"median_{name}_ms"] = value * 0.98
        doc[f"std_{name}_ms"] = value * 0.1
        doc[f"p99_{name}_ms"] = value * 1.5
    return doc


def lm_eval_result(task: str = "gsm8k", strict: float = 0.9719, stderr: float = 0.0045) -> dict:
    """lm-evaluation-harness `results_<timestamp>.json`, trimmed to the fields it always has."""
    return {
        "results": {
            task: {
                "alias": task,
                "exact_match,strict-match": strict,
                "exact_match_stderr,strict-match": stderr,
                "exact_match,flexible-extract": strict - 0.002,
                "exact_match_stderr,flexible-extract": stderr,
            }
        },
        "group_subtasks": {task: []},
        "configs": {
            task: {
                "task": task,
                "metric_list": [{"metric": "exact_match", "aggregation": "mean"}],
                "filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}],
            }
        },
        "versions": {task: 3.0},
        "n-shot": {task: 5},
        "n-samples": {task: {"original": 1319, "effective": 1319}},
        "config": {"model": "local-completions", "batch_size": 1},
        "lm_eval_version": "0.4.9",
        "model_name": "deepseek-ai/DeepSeek-V4.1-Flash",
    }


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
