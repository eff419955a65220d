"""Read what the benchmark clients write, as plain numbers in the clients' own units.

Three formats: vLLM's serving benchmark (`vllm bench serve --save-result`), aiperf's
profile export (`profile_export_aiperf.json`) and lm-evaluation-harness results. Each
reader takes parsed JSON and the file's name (for messages) and raises ResultsError
naming the file and the field when the document is not what the format promises.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from infx.errors import ResultsError

VLLM = "vllm-bench-serve"
AIPERF = "aiperf"
LM_EVAL = "lm-eval"

_LATENCY_KEY = re.compile(r"^(mean|median|std|p[0-9]+(?:\.[0-9]+)?)_(ttft|tpot|itl|e2el)_ms$")
# aiperf names its statistics avg/p50/...; the InferenceX convention says mean/median/...
_AIPERF_STATS = {"avg": "mean", "p50": "median", "std": "std", "p90": "p90", "p99": "p99"}
# aiperf's inter_token_latency is per request (latency - TTFT) / (tokens - 1), which is
# what vLLM calls TPOT; InferenceX files it as both TPOT and ITL for aiperf runs.
_AIPERF_LATENCIES = {
    "time_to_first_token": ("ttft",),
    "inter_token_latency": ("tpot", "itl"),
    "request_latency": ("e2el",),
}


@dataclass(frozen=True)
class ClientRun:
    """One benchmark point as a client measured it: token/s totals and latencies in ms."""

    client: str
    total_tput: float
    output_tput: float
    completed: int
    latencies_ms: dict[str, float] = field(default_factory=dict)  # "mean_ttft" -> ms
    request_throughput: float | None = None
    duration: float | None = None
    concurrency: int | None = None


def _measured(run: ClientRun, name: str) -> ClientRun:
    """A run whose requests all failed, or whose clock did not run, measured nothing: it is
    refused rather than becoming a point with throughput 0."""
    if run.completed == 0:
        raise ResultsError(f"{name}: the client completed no request")
    if run.duration is not None and run.duration == 0:
        raise ResultsError(f"{name}: the benchmark duration is 0")
    if run.total_tput == 0:
        raise ResultsError(f"{name}: total_token_throughput is 0 (no token was generated)")
    return run


@dataclass(frozen=True)
class Score:
    task: str
    metric: str
    filter: str
    value: float
    stderr: float | None
    samples: int | None


def _number(doc: dict[str, Any], key: str, name: str, what: str) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        found = "missing" if value is None else f"not a number ({value!r:.40})"
        raise ResultsError(f"{name}: not {what}: {key} is {found}")
    if not math.isfinite(value) or value < 0:
        raise ResultsError(f"{name}: {key} is {value}, expected a finite number >= 0")
    return float(value)


def _object(doc: Any, name: str, what: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise ResultsError(f"{name}: not {what}: the document is not a JSON object")
    return doc


def read_vllm(doc: Any, name: str) -> ClientRun:
    """vLLM serving benchmark JSON: `*_ms` latencies, token/s throughputs, max_concurrency."""
    what = "a vLLM serving-benchmark result"
    doc = _object(doc, name, what)
    total = _number(doc, "total_token_throughput", name, what)
    output = _number(doc, "output_throughput", name, what)
    completed = int(_number(doc, "completed", name, what))
    if output > total:
        raise ResultsError(f"{name}: output_throughput {output} exceeds total_token_throughput")
    latencies = {}
    for key in doc:
        match = _LATENCY_KEY.match(key)
        if match:
            latencies[f"{match[1]}_{match[2]}"] = _number(doc, key, name, what)
    if not latencies:
        raise ResultsError(f"{name}: not {what}: no *_ms latency fields")
    conc = doc.get("max_concurrency")
    run = ClientRun(
        client=VLLM,
        total_tput=total,
        output_tput=output,
        completed=completed,
        latencies_ms=latencies,
        request_throughput=_optional(doc, "request_throughput", name, what),
        duration=_optional(doc, "duration", name, what),
        concurrency=conc if isinstance(conc, int) and not isinstance(conc, bool) else None,
    )
    return _measured(run, name)


def _optional(doc: dict[str, Any], key: str, name: str, what: str) -> float | None:
    return _number(doc, key, name, what) if doc.get(key) is not None else None


def _metric(doc: dict[str, Any], key: str, name: str, unit: str | None = None) -> dict[str, Any]:
    metric = doc.get(key)
    if not isinstance(metric, dict):
        raise ResultsError(f"{name}: not an aiperf profile export: {key} is missing")
    if unit is not None and metric.get("unit") != unit:
        raise ResultsError(f"{name}: {key} is in {metric.get('unit')!r}, expected {unit!r}")
    return metric


def _aiperf_concurrency(doc: dict[str, Any]) -> int | None:
    phases = (doc.get("input_config") or {}).get("phases")
    if not isinstance(phases, list):
        return None
    for phase in phases:
        if isinstance(phase, dict) and phase.get("kind") == "profiling":
            conc = phase.get("concurrency")
            if isinstance(conc, int) and not isinstance(conc, bool):
                return conc
    return None


def read_aiperf(doc: Any, name: str) -> ClientRun:
    """aiperf `profile_export_aiperf.json`: per-metric {unit, avg, p50, p99, ...} objects."""
    what = "an aiperf profile export"
    doc = _object(doc, name, what)
    if doc.get("was_cancelled") is True:
        raise ResultsError(f"{name}: the aiperf run was cancelled")
    total = _number(_metric(doc, "total_token_throughput", name, "tokens/sec"), "avg", name, what)
    output = _number(_metric(doc, "output_token_throughput", name, "tokens/sec"), "avg", name, what)
    count = _metric(doc, "request_count", name)
    completed = int(_number(count, "avg", name, what))
    if completed == 0:
        raise ResultsError(f"{name}: aiperf completed no request")
    latencies = {}
    for key, names in _AIPERF_LATENCIES.items():
        if key not in doc:
            continue
        metric = _metric(doc, key, name, "ms")
        for stat, ours in _AIPERF_STATS.items():
            if metric.get(stat) is not None:
                value = _number(metric, stat, name, what)
                for short in names:
                    latencies[f"{ours}_{short}"] = value
    if "mean_tpot" not in latencies:
        raise ResultsError(
            f"{name}: not {what}: no inter_token_latency (run aiperf with --streaming)"
        )
    duration = doc.get("benchmark_duration")
    throughput = doc.get("request_throughput")
    run = ClientRun(
        client=AIPERF,
        total_tput=total,
        output_tput=min(output, total),
        completed=completed,
        latencies_ms=latencies,
        request_throughput=_number(throughput, "avg", name, what)
        if isinstance(throughput, dict)
        else None,
        duration=_number(duration, "avg", name, what) if isinstance(duration, dict) else None,
        concurrency=_aiperf_concurrency(doc),
    )
    return _measured(run, name)


def read_lm_eval(doc: Any, name: str) -> list[Score]:
    """lm-eval results: `results[task]["<metric>,<filter>"]` with `"<metric>_stderr,<filter>"`."""
    what = "an lm-eval results file"
    doc = _object(doc, name, what)
    results = doc.get("results")
    if not isinstance(results, dict) or not results:
        raise ResultsError(f"{name}: not {what}: no results")
    samples = doc.get("n-samples") if isinstance(doc.get("n-samples"), dict) else {}
    scores = []
    for task, values in sorted(results.items()):
        if not isinstance(values, dict):
            raise ResultsError(f"{name}: results.{task} is not an object")
        count = (samples.get(task) or {}).get("effective")
        for key, value in sorted(values.items()):
            metric, _, filter_name = key.partition(",")
            if not filter_name or metric.endswith("_stderr"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if not math.isfinite(value):
                raise ResultsError(f"{name}: results.{task}.{key} is {value}")
            stderr = values.get(f"{metric}_stderr,{filter_name}")
            scores.append(
                Score(
                    task=task,
                    metric=metric,
                    filter=filter_name,
                    value=float(value),
                    stderr=float(stderr)
                    if isinstance(stderr, int | float)
                    and not isinstance(stderr, bool)
                    and math.isfinite(stderr)
                    and stderr >= 0
                    else None,
                    samples=count
                    if isinstance(count, int) and not isinstance(count, bool)
                    else None,
                )
            )
    if not scores:
        raise ResultsError(f"{name}: not {what}: no '<metric>,<filter>' score in results")
    return scores
