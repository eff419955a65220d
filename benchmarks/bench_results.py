"""`infx results compare`: time for a 2,000-row run against a 2,000-row baseline, and GitHub
API requests per baseline lookup in a repository with 100 successful main sweeps.

Targets (issues #11, #18): compare under 1 s through the CLI; at most 6 API requests per
newest-baseline lookup (a history of N runs costs N + 2 more; see bench_verdicts.py). The time is measured in process (match, judge, render) and through the
console script (start-up, reading and validating both tables included), plots left out and
then drawn for every config. Requests are counted at a local GitHub API stand-in for the
cases that decide the cost: the newest main run holds the configs; the configs sit in
older runs; they are spread over two runs; no run holds them; newer pull-request runs push
main's artifacts off the first artifact page.
Run: python benchmarks/bench_results.py [--plots]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infx.github.client import GitHub
from infx.results.compare.baseline import find
from infx.results.ingest.clients import ClientRun
from infx.results.ingest.process import document, throughput_row
from infx.results.render.comment import Context, comment
from infx.results.verdict.judge import compare
from tests.github.fake_api import FakeGitHub
from tests.results.compare.test_compare_api import main_runs
from tests.results.formats import fixed_row

CONCS = (1, 2, 4, 8, 16, 32, 64, 128)


def rows(configs: int, scale: float, tp_offset: int = 0) -> list[dict]:
    """`configs` configs x 8 concurrencies of throughput rows."""
    out = []
    for i in range(configs):
        for conc in CONCS:
            run = ClientRun(
                "vllm-bench-serve",
                total_tput=scale * 900 * conc**0.7,
                output_tput=scale * 400 * conc**0.7,
                completed=64,
                latencies_ms={
                    "mean_ttft": 80 + conc / scale,
                    "median_ttft": 78 + conc / scale,
                    "p99_ttft": 150 + conc / scale,
                    "mean_tpot": (8 + conc**0.5) / scale,
                    "median_tpot": (8 + conc**0.5) / scale,
                    "p99_tpot": (12 + conc**0.5) / scale,
                    "mean_itl": (8 + conc**0.5) / scale,
                    "mean_e2el": 9000 / scale,
                },
            )
            row = fixed_row(
                conc=conc,
                tp=1 + (i + tp_offset) % 8,
                **{"model-prefix": f"m{(i + tp_offset) // 8}"},
            )
            out.append(throughput_row(row, run, conc, f"{i}-{conc}.json"))
    return out


def time_compare(folder: Path, plots: bool) -> None:
    current, baseline = rows(250, 1.05), rows(250, 1.0)
    assert len(current) == len(baseline) == 2000
    times = []
    for _ in range(5):
        start = time.perf_counter()
        body = comment(compare(current, [document(baseline, {"id": 1})]), Context())
        times.append(time.perf_counter() - start)
    print(
        f"compare + render, in process, 2,000 vs 2,000 rows: median {statistics.median(times) * 1000:.0f} ms"
        f" (comment {len(body):,} chars)"
    )
    pr, main = folder / "pr.json", folder / "main.json"
    pr.write_text(json.dumps(document(current)))
    main.write_text(json.dumps(document(baseline)))
    command = [sys.executable, "-m", "infx", "results", "compare", str(pr), "--baseline", str(main)]
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    wall = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        wall.append(time.perf_counter() - start)
    print(
        f"infx results compare (CLI, no plots):              median {statistics.median(wall):.2f} s"
    )
    if plots:
        start = time.perf_counter()
        subprocess.run(
            [*command, "--plots", str(folder / "plots")], check=True, capture_output=True, env=env
        )
        count = len(list((folder / "plots").glob("*.png")))
        print(
            f"infx results compare --plots ({count} PNGs):       {time.perf_counter() - start:.1f} s"
        )


def lookup(tables: list, pr_runs: int = 0) -> tuple[int, int, str]:
    """API requests (storage downloads counted apart) for one baseline lookup."""
    with FakeGitHub() as api:
        os.environ["GITHUB_API_URL"] = api.url
        os.environ["GITHUB_TOKEN"] = "bench"
        main_runs(api.state, tables)
        for i in range(pr_runs):
            api.state.add_run(9000 + i, head_sha=f"{i:040x}", minute=50_000 + i, branch="feature")
        mine = rows(4, 1.0)
        search = find(GitHub("acme/bench"), mine, workflow="run-sweep.yml")
        downloads = sum(1 for _, p in api.state.requests if p.startswith("/_blobs/"))
        found = ", ".join(str(b.run.id) for b in search.baselines) or "none"
        assert api.state.api_requests() == search.requests
        return api.state.api_requests(), downloads, f"baseline run(s): {found}; {search.describe()}"


def main() -> int:
    plots = "--plots" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        time_compare(Path(tmp), plots)
    ours, half_a, half_b = rows(4, 1.0), rows(2, 1.0), rows(2, 1.0, tp_offset=2)
    other = rows(4, 1.0, tp_offset=100)
    cases = {
        "newest main run holds the configs": ([ours] + [other] * 99, 0),
        "third-newest run holds them": ([other, other, ours] + [other] * 97, 0),
        "configs spread over runs 1 and 3": ([half_a, other, half_b] + [other] * 97, 0),
        "no run holds them (budget spent)": ([other] * 100, 0),
        "150 newer PR runs fill the artifact page": ([ours] + [other] * 99, 150),
    }
    worst = 0
    for name, (tables, pr_runs) in cases.items():
        count, downloads, detail = lookup(tables, pr_runs)
        worst = max(worst, count)
        print(f"{name:<42} {count} API requests ({downloads} storage downloads); {detail}")
    print(f"target: <= 6 API requests per lookup with 100 main runs; worst case here: {worst}")
    return 0 if worst <= 6 else 1


if __name__ == "__main__":
    sys.exit(main())
