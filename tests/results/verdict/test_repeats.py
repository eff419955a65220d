"""Which tables may be pooled as repeats of one run."""

from __future__ import annotations

import pytest

from infx.errors import UsageError
from infx.results.verdict.repeats import distinct


def _table(run_id: int, tput: float, score: float) -> dict:
    identity = {"model": "m", "hw": "mi355x", "framework": "vllm", "conc": 8}
    return {
        "run": {"id": run_id},
        "rows": [
            {"kind": "throughput", "identity": identity, "metrics": {"tput_per_gpu": tput}},
            {"kind": "accuracy", "identity": identity, "accuracy": {"gsm8k": score}},
        ],
    }


def test_a_greedy_eval_scoring_the_same_twice_does_not_make_two_runs_one() -> None:
    """A repeat's eval may score to the digit what its source scored; only a throughput
    point read twice to every digit says one run was given twice."""
    distinct([_table(1, 1000.0, 0.95), _table(2, 1003.5, 0.95)], ["a.json", "b.json"])


def test_a_throughput_read_twice_to_every_digit_is_refused() -> None:
    with pytest.raises(UsageError, match=r"a\.json and b\.json hold the same measurement"):
        distinct([_table(1, 1000.0, 0.95), _table(2, 1000.0, 0.91)], ["a.json", "b.json"])
