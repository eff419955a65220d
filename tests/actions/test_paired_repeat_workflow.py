"""A paired repeat through run-sweep.yml as GitHub runs it: with `paired-repeats` on the
default branch, the repeat measures main's image beside this PR's on one node; its collect
job cuts its own table in two (this PR's half, main's half) and its compare judges the
repeated config on the pairs. Here the PR's config runs image v0.11.0 and main's v0.10.0;
the repeat's session is 10 % slow for both. Main's history (a folder of its runs, given as
the INFX_HISTORY_URL secret) never saw that session."""

from __future__ import annotations

import json
import math
import random
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from infx.cli import cli
from infx.results.ingest.files import process_job, write_json
from infx.results.ingest.process import RESULT_FILE
from tests.actions import test_gpu_hours as forty
from tests.actions.gpu import Cluster, dispatch_repeat, moved_base, publish
from tests.actions.test_gpu_hours import A_ID, AMD, B_ID, POOLS, SourceRun, results, world_for
from tests.github.fake_api import FakeGitHub
from tests.results.formats import vllm_result, write

source_run = forty.source_run  # run A, the module fixture
PR_IMAGE = "vllm/vllm-openai-rocm:v0.11.0"
MAIN_IMAGE = "vllm/vllm-openai-rocm:v0.10.0"
SLOW = 0.9  # the repeat's session: both images alike


@dataclass
class SlowSession(Cluster):
    """The runners of a session that runs slow; the PR's image by `change` more."""

    change: float = 1.0

    def _measure(self, row: dict[str, Any], folder: Path) -> None:
        if row.get("run-eval"):
            super()._measure(row, folder)
            return
        speed = SLOW * (self.change if row["image"] == PR_IMAGE else 1.0)
        conc = row["conc"]
        write(folder / f"{row['exp-name']}.json", vllm_result(
            conc=conc, total=1000.0 * conc * speed, output=400.0 * conc * speed, ttft_ms=50,
            tpot_ms=10 / speed, itl_ms=10 / speed, e2el_ms=900 / speed))  # fmt: skip
        write_json(folder / RESULT_FILE, process_job(row, folder, runner_name=""))


def _scaled(value: Any, key: str, factor: float) -> Any:
    if not isinstance(value, float):
        return value
    faster = "tput" in key or "intvty" in key
    slower = any(word in key for word in ("ttft", "tpot", "itl", "e2el"))
    return value * factor if faster else value / factor if slower else value


def _history(rows: list[dict[str, Any]], folder: Path, runs: int = 12) -> Path:
    """Main's runs of run A's points, each run and point with its own scatter (1-2 %)."""
    rng = random.Random(5)
    folder.mkdir()
    for n in range(runs):
        shared = rng.gauss(0, 0.012)
        out = []
        for row in rows:
            if row["kind"] != "throughput":
                continue
            factor = math.exp(shared + rng.gauss(0, 0.01))
            metrics = {k: _scaled(v, k, factor) for k, v in row["metrics"].items()}
            out.append({**row, "metrics": metrics})
        run = {"id": 5000 + n, "sha": f"{5000 + n:040x}", "ref": "refs/heads/main",
               "url": f"https://github.com/acme/bench/actions/runs/{5000 + n}"}  # fmt: skip
        doc = {"format": "infx-results/1", "run": run, "rows": out}
        (folder / f"{5000 + n}.json").write_text(json.dumps(doc))
    return folder


def _paired_repeat(source_run: SourceRun, api: FakeGitHub, tmp_path: Path, change: float):
    # Main has since turned paired repeats on and runs its vLLM config on another image;
    # the PR keeps its own (the merge takes the PR's).
    settings = {"infx.toml": "[results]\npaired-repeats = true\n",
                "configs/amd-master.yaml": AMD.replace(PR_IMAGE, MAIN_IMAGE)}  # fmt: skip
    repo = moved_base(source_run.repo, tmp_path, settings, "Settings; vLLM v0.10.0",
                      merged={"configs/amd-master.yaml": AMD})  # fmt: skip
    world = world_for(repo, api, tmp_path)
    measured = results(source_run.run)
    world.secrets["INFX_HISTORY_URL"] = str(_history(measured, tmp_path / "history"))
    first = next(r for r in measured if r["recipe"]["image"] == PR_IMAGE)
    config = {k: v for k, v in first["identity"].items() if k not in ("conc", "hardware")}
    repeated = [
        r for r in measured
        if r["kind"] == "throughput"
        and {k: v for k, v in r["identity"].items() if k not in ("conc", "hardware")} == config
    ]  # fmt: skip
    folder = tmp_path / "a-verdict"
    folder.mkdir()
    wanted = [{"identity": r["identity"], "recipe": r["recipe"], "count": 1} for r in repeated]
    (folder / "verdict.json").write_text(json.dumps(
        {"repeats": {"rows": wanted, "count": len(wanted), "gpu_hours": 1.0}}))  # fmt: skip
    # Run A's pooled table, as if A had swept this merge commit (the repository is rebuilt
    # here after A ran: main moved before A, not since, or the repeat measures another
    # commit and its compare refuses to pool them).
    pool = tmp_path / "a-pool"
    shutil.copytree(source_run.run.artifacts["results-pool"], pool)
    for table in pool.rglob("results.json"):
        doc = json.loads(table.read_text())
        doc["run"]["sha"] = repo.merge
        table.write_text(json.dumps(doc))
    artifacts = {**source_run.run.artifacts, "results-verdict": folder, "results-pool": pool}
    run = replace(source_run.run, artifacts=artifacts)
    api.state.add_pull(17, head_sha=source_run.repo.head, commits=[source_run.repo.head],
                       labels=["full-sweep-enabled"])  # fmt: skip
    publish(api, world, run, A_ID, head_sha=source_run.repo.head, conclusion="failure",
            jobs=source_run.jobs, logs=source_run.logs)  # fmt: skip
    cluster = SlowSession(api, B_ID, POOLS, tmp_path / "gpu", change=change)
    return dispatch_repeat(world, cluster, A_ID), repeated


def _config_verdicts(rerun: Any, repeated: list[dict[str, Any]]) -> tuple[dict, list[str]]:
    verdict = json.loads((rerun.artifacts["results-verdict"] / "verdict.json").read_text())
    return verdict, _config_verdicts_of(verdict, repeated)


def _config_verdicts_of(verdict: dict, repeated: list[dict[str, Any]]) -> list[str]:
    """The verdicts of the repeated config's throughput (its accuracy aside)."""
    ident = {k: v for k, v in repeated[0]["identity"].items() if k not in ("conc", "hardware")}
    found = [
        c["verdict"] for c in verdict["configs"]
        if c["kind"] == "throughput"
        and {k: v for k, v in c["identity"].items() if k != "hardware"} == ident
    ]  # fmt: skip
    return found


def test_a_paired_repeat_on_a_slow_node_reads_within_noise(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    # 0.999: two measurements never agree to every digit (a copy is refused as a pair).
    rerun, repeated = _paired_repeat(source_run, api, tmp_path, change=0.999)
    assert rerun.ran("setup"), rerun.log("setup")
    plan = rerun.artifacts["sweep-plan"]
    found = json.loads((plan / "pairs.json").read_text())
    assert len(found) == len(repeated) and all(p["base"]["image"] == MAIN_IMAGE for p in found)
    # The repeat's own table, cut in two: main's rows are never the PR's.
    own = rerun.artifacts["results-repeat"]
    mine = json.loads((own / "results.json").read_text())["rows"]
    theirs = json.loads((own / "base.json").read_text())["rows"]
    assert {r["recipe"]["image"] for r in theirs} == {MAIN_IMAGE}
    assert len(theirs) == len(repeated) and MAIN_IMAGE not in {r["recipe"]["image"] for r in mine}
    table = json.loads((rerun.artifacts["results_bmk"] / "results.json").read_text())["rows"]
    assert MAIN_IMAGE not in {r["recipe"]["image"] for r in table}
    assert f"of main's beside them ({len(repeated)} pair(s))" in rerun.log("collect")
    # The compare judged the config on its pairs: the slow session cancels.
    assert rerun.ran("compare"), rerun.log("compare")
    verdict, config = _config_verdicts(rerun, repeated)
    assert verdict["repeats"]["pairs"] == {"runs": 1, "configs": 1}, verdict["notes"]
    assert config == ["within-noise"], (config, verdict["notes"])
    assert verdict["configs_by_verdict"]["coverage-lost"] == 0
    assert verdict["gate"]["passed"], [(c["label"], c["verdict"]) for c in verdict["configs"]]
    # Unpaired, the same tables read the session's 10 % as the PR's own.
    pool = rerun.artifacts["results-pool"]
    args = ["results", "compare", str(pool / f"run-{A_ID}" / "results.json"), "--repeat",
            str(pool / f"run-{B_ID}" / "results.json"), "--history", str(tmp_path / "history"),
            "--format", "json"]  # fmt: skip
    done = CliRunner().invoke(cli, args)
    alone, _ = json.JSONDecoder().raw_decode(done.output[done.output.index("{") :])
    assert _config_verdicts_of(alone, repeated) != ["within-noise"], alone["notes"]


def test_a_paired_repeat_catches_the_pr_s_own_regression(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    rerun, repeated = _paired_repeat(source_run, api, tmp_path, change=0.85)
    assert rerun.jobs["compare"] == "failure", rerun.log("compare")  # the gate fails
    assert "results gate fails: regressed" in rerun.log("compare")
    verdict, config = _config_verdicts(rerun, repeated)
    assert verdict["repeats"]["pairs"] == {"runs": 1, "configs": 1}, verdict["notes"]
    assert config == ["regressed"], (config, verdict["notes"])
    assert not verdict["gate"]["passed"]
