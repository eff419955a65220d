"""A recorded aiperf run, compared: the direction and magnitude of a change, on numbers that
do not move with how busy the machine is.

tests/results/compare/test_end_to_end.py ran this repository's agentic rows at concurrency 1 and 4
with the real recipe and aiperf against a local server, 20 ms per token for "main" and
10 ms for the PR, and kept aiperf's exports (tests/results/compare/data/aiperf-run, recorded again
with `INFX_UPDATE_README=1 pytest tests/results/compare/test_end_to_end.py`). Here they go through
`results process`, `collect` and `compare` as a sweep's jobs would. The comment must say
that the PR halved TPOT and raised throughput, and docs/results.md shows that comment
(`INFX_UPDATE_README=1 pytest tests/results/compare/test_recorded_run.py` writes it there).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.results.compare.aiperf_run import (
    EXPORT,
    MAIN_DELAY,
    PLOT,
    PR_DELAY,
    RECORDED,
    cells,
    change,
    collect,
    compare,
    job_folder,
    process,
    rows,
    shape,
    show_example,
    shown_example,
)

UPDATE = os.environ.get("INFX_UPDATE_README") == "1"  # read before the suite clears INFX_*


def replayed(side: str, into: Path) -> Path:
    """The recorded sweep's jobs processed and collected as its jobs and collect job would."""
    bmk = into / side / "results_bmk"
    for index, row in enumerate(rows()):
        folder = job_folder(bmk, index, row)
        recorded = RECORDED / side / folder.name / EXPORT
        (folder / EXPORT).parent.mkdir(parents=True)
        shutil.copyfile(recorded, folder / EXPORT)
        process(row, folder)
    return collect(bmk)


def exported(side: str, key: str, stat: str) -> list[float]:
    """A statistic of the recorded exports, job by job, as aiperf wrote it (ms)."""
    return [
        json.loads((job_folder(RECORDED / side, i, row) / EXPORT).read_text())[key][stat]
        for i, row in enumerate(rows())
    ]


def test_the_recorded_run_measured_the_server_s_delays() -> None:
    """What the comparison below stands on: per token, about 20 ms on main, 10 on the PR."""
    for side, delay in (("main", MAIN_DELAY), ("pr", PR_DELAY)):
        for itl in exported(side, "inter_token_latency", "avg"):
            assert delay * 1000 <= itl < delay * 1000 * 1.6


def test_halved_token_latency_is_reported_as_an_improvement(api, tmp_path: Path) -> None:
    main, pr = replayed("main", tmp_path), replayed("pr", tmp_path)
    done = compare(api.state, main, pr, tmp_path)
    assert done.exit_code == 0, done.output
    assert done.check == "success"
    body = done.body
    assert "newest [5150](https://github.com/acme/bench/actions/runs/5150)" in body
    assert body.splitlines()[3].startswith("**🟢 improved**")
    assert "Points: 2 improved · 0 regressed · 0 within noise · 0 new · 0 missing." in body
    for conc, main_tpot, pr_tpot in zip((1, 4), *(exported(s, "inter_token_latency", "p50")
                                                   for s in ("main", "pr")), strict=True):  # fmt: skip
        row = cells(body, conc)
        assert row[1] == "🟢 improved"
        tput, ttft50, _, tpot50, _ = (change(c) for c in row[2:7])
        assert tpot50[1] == pytest.approx(pr_tpot, rel=5e-4)  # ms, as aiperf measured
        assert -60 < tpot50[2] < -35 and tpot50[3] == "🟢", tpot50
        assert 30 < tput[2] < 150 and tput[3] == "🟢", tput
        assert ttft50[2] < 0, ttft50
        assert 18 < main_tpot < 32 and 9 < pr_tpot < 16
    (png,) = done.plots
    assert png.read_bytes().startswith(b"\x89PNG")
    if UPDATE:
        show_example(body, png.read_bytes())
    assert shape(shown_example()) == shape(body), "docs/results.md's example is stale: see above"
    assert PLOT.read_bytes().startswith(b"\x89PNG"), "run with INFX_UPDATE_README=1"
