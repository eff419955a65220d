"""Simulated sweeps: configs whose curves are known, measured with seeded noise.

Each config has 8 concurrencies on a smooth curve (throughput per GPU rises with
concurrency, TPOT and TTFT grow); every run multiplies each metric of each point by its
own log-normal factor of `noise` relative standard deviation (independent per metric,
except interactivity, which is 1000 / TPOT: one measurement). `factor` scales a config's
throughput (and divides its latencies) to play a step or a regression.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from infx.results.clients import ClientRun
from infx.results.process import throughput_row
from tests.results.formats import fixed_row

CONCS = (4, 8, 16, 32, 64, 128, 256, 512)


def config_row(i: int) -> dict[str, Any]:
    """Config i: another model prefix and tensor parallelism for each i."""
    return fixed_row(tp=1 + i % 8, **{"model-prefix": f"m{i // 8}"})


def _templates(configs: int, concs: tuple[int, ...]) -> list[list[dict[str, Any]]]:
    out = []
    for i in range(configs):
        base = config_row(i)
        rows = []
        for conc in concs:
            run = ClientRun(
                "vllm-bench-serve",
                total_tput=1000.0,
                output_tput=400.0,
                completed=64,
                latencies_ms={"median_tpot": 10.0},
            )
            rows.append(throughput_row({**base, "conc": conc}, run, conc, f"{conc}.json"))
        out.append(rows)
    return out


def truth(conc: int) -> dict[str, float]:
    """A point's true metrics (stored units: tok/s per GPU, seconds)."""
    tpot = 0.008 + 0.0006 * math.sqrt(conc)
    return {
        "tput_per_gpu": 120.0 * conc**0.8,
        "median_ttft": 0.05 + 0.002 * conc,
        "p99_ttft": 0.12 + 0.004 * conc,
        "median_tpot": tpot,
        "p99_tpot": tpot * 1.6,
    }


class Sweeps:
    """Runs of `configs` configs; `factor(config, conc, run)` scales throughput that run."""

    def __init__(
        self, configs: int, *, noise: float = 0.02, seed: int = 0, concs: tuple = CONCS
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.noise = noise
        self.concs = concs
        self.templates = _templates(configs, concs)

    def run(
        self,
        run_id: int,
        factor: Callable[[int, int], float] = lambda i, c: 1.0,
        latency: Callable[[int, int, str], float] = lambda i, c, m: 1.0,
        keep: Callable[[int, int], bool] = lambda i, c: True,
    ) -> dict[str, Any]:
        rows = []
        for i, template in enumerate(self.templates):
            for row in template:
                conc = row["identity"]["conc"]
                if not keep(i, conc):
                    continue
                true = truth(conc)
                f = factor(i, conc)
                shocks = np.exp(self.noise * self.rng.standard_normal(5))
                tput = true["tput_per_gpu"] * f * shocks[0]
                m: dict[str, Any] = {
                    "tput_per_gpu": tput,
                    "output_tput_per_gpu": tput * 0.4,
                    "input_tput_per_gpu": tput * 0.6,
                    "total_tput": tput * row["gpus"]["total"],
                    "output_tput": tput * 0.4 * row["gpus"]["total"],
                    "completed": 64,
                }
                for j, key in enumerate(("median_ttft", "p99_ttft", "median_tpot", "p99_tpot")):
                    m[key] = true[key] / f * shocks[j + 1] * latency(i, conc, key)
                m["median_intvty"] = 1.0 / m["median_tpot"]
                m["p99_intvty"] = 1.0 / m["p99_tpot"]
                out = copy.copy(row)
                out["metrics"] = m
                rows.append(out)
        return {
            "format": "infx-results/1",
            "run": {
                "id": run_id,
                "sha": f"{run_id:040x}",
                "ref": "refs/heads/main",
                "url": f"https://github.com/acme/bench/actions/runs/{run_id}",
            },
            "rows": rows,
        }

    def history(self, runs: int, factor: Callable[[int, int, int], float] | None = None):
        """`runs` main runs, oldest first; factor(config, conc, run index) plays steps."""
        out = []
        for r in range(runs):
            f = (lambda i, c, r=r: factor(i, c, r)) if factor else (lambda i, c: 1.0)
            out.append(self.run(1000 + r, f))
        return out
