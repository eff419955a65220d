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

from infx.results.ingest.clients import ClientRun
from infx.results.ingest.process import throughput_row
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


class Runs:
    """Sweeps measured the way GPU runs behave: each run's points move together.

    Per run, every metric of every point gets log-normal noise of `noise` relative
    standard deviation, a share `rho` of its variance a run effect: shared by every config
    of the run (`shared`, an image or a machine's day) or one per config (a job's node).
    The effect is oriented: a fast run has more throughput and lower latencies (and so
    higher interactivity, which is 1 / TPOT). `drift` moves main's level by that fraction
    per run (throughput; latencies the inverse). Arrays all the way, then rows, so a
    250-config history of 20 runs takes a fraction of a second.
    """

    def __init__(
        self,
        configs: int,
        *,
        noise: float = 0.02,
        rho: float = 0.4,
        shared: bool = True,
        seed: int = 0,
        concs: tuple[int, ...] = CONCS,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.noise, self.rho, self.shared = noise, rho, shared
        self.concs = concs
        self.templates = _templates(configs, concs)
        keys = ("tput_per_gpu", "median_ttft", "p99_ttft", "median_tpot", "p99_tpot")
        self.truth = np.array([[truth(c)[k] for k in keys] for c in concs])  # (J, 5)

    def _logs(self, runs: int) -> np.ndarray:
        """(runs, configs, concs, 5) log factors: noise, run effect, orientation."""
        c, j = len(self.templates), len(self.concs)
        own = self.noise * math.sqrt(1 - self.rho) * self.rng.standard_normal((runs, c, j, 5))
        width = 1 if self.shared else c
        effect = self.noise * math.sqrt(self.rho) * self.rng.standard_normal((runs, width, 1, 1))
        orient = np.array([1.0, -1.0, -1.0, -1.0, -1.0])
        out: np.ndarray = own + effect * orient
        return out

    def table(self, run_id: int, logs: np.ndarray, ref: str = "refs/heads/main") -> dict[str, Any]:
        """One run's results table from its (configs, concs, 5) log factors."""
        values = self.truth[None, :, :] * np.exp(logs)
        rows = []
        for i, template in enumerate(self.templates):
            numbers = values[i].tolist()
            for row, (tput, ttft, p99_ttft, tpot, p99_tpot) in zip(template, numbers, strict=True):
                gpus = row["gpus"]["total"]
                out = copy.copy(row)
                out["metrics"] = {
                    "tput_per_gpu": tput,
                    "output_tput_per_gpu": tput * 0.4,
                    "input_tput_per_gpu": tput * 0.6,
                    "total_tput": tput * gpus,
                    "output_tput": tput * 0.4 * gpus,
                    "completed": 64,
                    "median_ttft": ttft,
                    "p99_ttft": p99_ttft,
                    "median_tpot": tpot,
                    "p99_tpot": p99_tpot,
                    "median_intvty": 1.0 / tpot,
                    "p99_intvty": 1.0 / p99_tpot,
                }
                rows.append(out)
        run = {
            "id": run_id,
            "sha": f"{run_id:040x}",
            "ref": ref,
            "url": f"https://github.com/acme/bench/actions/runs/{run_id}",
        }
        return {"format": "infx-results/1", "run": run, "rows": rows}

    def history(self, runs: int, drift: float = 0.0) -> list[dict[str, Any]]:
        """`runs` main runs, oldest first; the level drifts by `drift` per run."""
        logs = self._logs(runs)
        orient = np.array([1.0, -1.0, -1.0, -1.0, -1.0])
        trend = math.log1p(drift) * np.arange(runs)[:, None, None, None] * orient
        return [self.table(1000 + r, logs[r] + trend[r]) for r in range(runs)]

    def pr(
        self, repeats: int = 1, effect: np.ndarray | None = None, level: float = 0.0
    ) -> list[dict[str, Any]]:
        """`repeats` runs of one PR head; `effect` (configs, concs, 5) log changes (higher is
        better for throughput: a drop is negative there, positive for latencies); `level`
        where main's drift has taken it (log, throughput)."""
        logs = self._logs(repeats)
        orient = np.array([1.0, -1.0, -1.0, -1.0, -1.0])
        base = logs + level * orient
        if effect is not None:
            base = base + effect
        sha = 9000
        tables = [self.table(9000 + r, base[r], "refs/pull/7/merge") for r in range(repeats)]
        for t in tables:
            t["run"]["sha"] = f"{sha:040x}"
        return tables
