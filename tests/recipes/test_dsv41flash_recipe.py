"""The MI355X DeepSeek-V4.1-Flash recipe serves with the settings the changelog records."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from infx.matrix.contract import printed
from infx.matrix.expand import expand, hardware_table, is_agentic
from infx.matrix.load import load_yaml as load_fast
from infx.matrix.rows import recipe_path, row_env
from infx.results.ingest.process import AIPERF_EXPORT, LM_EVAL_DIR

ROOT = Path(__file__).resolve().parents[2]
KEY = "dsv41flash-fp4-mi355x-vllm-agentic-dspark"


def rows() -> list[dict]:
    config = load_fast((ROOT / "configs/amd-master.yaml").read_bytes())[KEY]
    runners = load_fast((ROOT / "configs/runners.yaml").read_bytes())
    hardware = hardware_table(runners["hardware"])
    return [printed(r) for r in expand(KEY, config, hardware) if is_agentic(r)]


def dry_run(row: dict, *args: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    script = ROOT / recipe_path(row, "mi355x-amds_03")
    env = {"PATH": os.environ["PATH"], "HOME": "/tmp", **row_env(row), **(extra_env or {})}
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True)


def test_runner_picks_this_recipe() -> None:
    path = recipe_path(rows()[0], "mi355x-amds_03")
    assert path == "recipes/dsv41flash_fp4_mi355x_vllm_agentic.sh"
    assert (ROOT / path).is_file()


def commands(result: subprocess.CompletedProcess) -> list[list[str]]:
    assert result.returncode == 0, result.stderr
    return [shlex.split(line) for line in result.stdout.splitlines()]


def test_dry_run_prints_the_server_command() -> None:
    row = rows()[0]
    argv, _ = commands(dry_run(row, "--dry-run"))
    image = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
    assert argv[:2] == ["docker", "run"]
    assert argv[argv.index(image) + 1 : argv.index(image) + 3] == ["vllm", "serve"]
    assert "AITER_TRITON_LOG_LEVEL=ERROR" in argv
    assert argv[argv.index("--moe-backend") + 1] == "aiter"
    assert argv[argv.index("--max-num-seqs") + 1] == "128"
    assert argv[argv.index("--tensor-parallel-size") + 1] == "8"
    assert '{"method":"mtp","num_speculative_tokens":2}' in argv
    assert "--kv-offloading-backend" not in argv


def test_max_num_seqs_does_not_follow_concurrency() -> None:
    for row in rows():
        argv, _ = commands(dry_run(row, "--dry-run"))
        assert argv[argv.index("--max-num-seqs") + 1] == "128"


def test_dram_row_sizes_the_offload_buffer() -> None:
    row = next(r for r in rows() if r["kv-offloading"] == "dram")
    argv, _ = commands(dry_run(row, "--dry-run"))
    assert argv[argv.index("--kv-offloading-backend") + 1] == "native"
    assert argv[argv.index("--kv-offloading-size") + 1] == str(row["total-cpu-dram-gb"]) == "2399"


def test_moe_backend_comment_explains_ck_a8w4() -> None:
    text = (ROOT / "recipes/dsv41flash_fp4_mi355x_vllm_agentic.sh").read_text()
    before = text[: text.index("--moe-backend aiter")]
    assert "CK a8w4" in before[-600:]


@pytest.mark.parametrize("missing", ["IMAGE", "MODEL", "TP", "CONC"])
def test_missing_row_field_is_a_clear_error(missing: str) -> None:
    row = rows()[0]
    script = ROOT / recipe_path(row, "")
    env = {"PATH": os.environ["PATH"], **{k: v for k, v in row_env(row).items() if k != missing}}
    result = subprocess.run(
        ["bash", str(script), "--dry-run"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert f"{missing} is not set" in result.stderr


def test_unknown_argument_rejected() -> None:
    result = dry_run(rows()[0], "--fast")
    assert result.returncode == 2 and "unknown argument '--fast'" in result.stderr


def test_dry_run_shows_the_aiperf_command_the_row_asks_for(tmp_path) -> None:
    row = rows()[1]
    _, client = commands(dry_run(row, "--dry-run", extra_env={"RESULTS_DIR": str(tmp_path)}))
    assert client[:2] == ["aiperf", "profile"]
    assert client[client.index("--concurrency") + 1] == str(row["conc"]) == "4"
    assert client[client.index("--benchmark-duration") + 1] == str(row["duration"])
    assert client[client.index("--url") + 1] == "http://127.0.0.1:8000"
    assert client[client.index("--model") + 1] == row["model"]
    assert "--streaming" in client and "--use-server-token-count" in client
    # Where the client writes is where `infx results process` reads.
    out = Path(client[client.index("--output-artifact-dir") + 1])
    assert out / Path(AIPERF_EXPORT).name == tmp_path / AIPERF_EXPORT


def test_agentx_fast_warms_each_lane_and_profiles_twenty_minutes(tmp_path) -> None:
    row = rows()[1]
    env = {"RESULTS_DIR": str(tmp_path), "AGENTX_FAST": "1"}
    _, client = commands(dry_run(row, "--dry-run", extra_env=env))
    assert client[client.index("--warmup-request-count") + 1] == str(row["conc"])
    assert client.count("--benchmark-duration") == 1
    assert client[client.index("--benchmark-duration") + 1] == "1200"
    _, normal = commands(dry_run(row, "--dry-run", extra_env={"RESULTS_DIR": str(tmp_path)}))
    assert "--warmup-request-count" not in normal


def test_eval_row_runs_lm_eval_where_process_reads(tmp_path) -> None:
    row = {**rows()[0], "run-eval": True}
    _, client = commands(dry_run(row, "--dry-run", extra_env={"RESULTS_DIR": str(tmp_path)}))
    assert client[0] == "lm_eval" and client[client.index("--tasks") + 1] == "gsm8k"
    assert client[client.index("--output_path") + 1] == str(tmp_path / LM_EVAL_DIR)
    assert f"num_concurrent={row['conc']}" in client[client.index("--model_args") + 1]


def test_external_server_and_workload(tmp_path) -> None:
    env = {
        "SERVER_URL": "http://127.0.0.1:9",
        "BENCH_WORKLOAD": "--request-count 8 --no-server-metrics",
    }
    (client,) = commands(dry_run(rows()[0], "--dry-run", extra_env=env))
    assert client[client.index("--url") + 1] == "http://127.0.0.1:9"
    assert client[-3:] == ["--request-count", "8", "--no-server-metrics"]
    assert "--benchmark-duration" not in client


def test_missing_client_stops_before_the_server_starts(tmp_path) -> None:
    env = {"BENCH_AIPERF": str(tmp_path / "no-aiperf"), "RESULTS_DIR": str(tmp_path / "r")}
    result = dry_run(rows()[0], extra_env=env)
    assert result.returncode == 2 and "is not installed" in result.stderr
    assert not (tmp_path / "r").exists()
