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
from infx.workflows.rows import recipe_path, row_env

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


def test_dry_run_prints_the_server_command() -> None:
    row = rows()[0]
    result = dry_run(row, "--dry-run")
    assert result.returncode == 0, result.stderr
    argv = shlex.split(result.stdout)
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
        argv = shlex.split(dry_run(row, "--dry-run").stdout)
        assert argv[argv.index("--max-num-seqs") + 1] == "128"


def test_dram_row_sizes_the_offload_buffer() -> None:
    row = next(r for r in rows() if r["kv-offloading"] == "dram")
    argv = shlex.split(dry_run(row, "--dry-run").stdout)
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
