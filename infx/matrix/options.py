"""What a sweep's labels ask of the planner, apart from what the changelog entries ask."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlanOptions:
    trim_conc: bool = False  # label sweep-enabled: the lowest concurrency of each curve
    all_evals: bool = False  # label all-evals: widen eval selection, keep throughput rows
    evals_only: bool = False  # label evals-only: eval rows only
