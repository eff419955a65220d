"""What is measured and judged per point: the metrics a comparison checks (their units,
display scale and direction) and a point's interactivity, the x axis of its Pareto curve."""

from __future__ import annotations

from dataclasses import dataclass

from infx.results.table.rows import Metrics


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    scale: float = 1.0  # stored value * scale = displayed value (seconds -> ms)


# What is judged per point. TPOT, ITL and interactivity are one measurement (aiperf reports
# one per-request figure; interactivity is 1000 / TPOT), so only TPOT is judged.
CHECKS = (
    Metric("tput_per_gpu", "Throughput/GPU", "tok/s", True),
    Metric("median_ttft", "TTFT p50", "ms", False, 1000.0),
    Metric("p99_ttft", "TTFT p99", "ms", False, 1000.0),
    Metric("median_tpot", "TPOT p50", "ms", False, 1000.0),
    Metric("p99_tpot", "TPOT p99", "ms", False, 1000.0),
)
# Interactivity of a point: the x axis of the Pareto curve (median, else mean).
INTERACTIVITY = ("median_intvty", "mean_intvty")
INTERACTIVITY_METRIC = Metric("median_intvty", "Interactivity", "tok/s/user", True)


def interactivity(metrics: Metrics) -> float | None:
    for key in INTERACTIVITY:
        if metrics.get(key) is not None:
            found: float = metrics[key]  # a number: the schema checked the row
            return found
    return None
