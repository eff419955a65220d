"""`infx results process`: client output + matrix row -> one normalized, schema-valid result."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.cli import cli
from infx.matrix.rows import row_env
from infx.results.ingest.clients import ClientRun
from infx.results.ingest.process import metrics, row_from_env
from infx.schemas import errors as schema_errors
from tests.results.formats import (
    agentic_rows,
    fixed_row,
    lm_eval_result,
    multinode_row,
    vllm_result,
    worker,
    write,
)


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["results", "process", *args], env=env)


def result(path: Path) -> dict:
    doc = json.loads(path.read_text())
    assert schema_errors("result", doc) == []
    return doc


def test_vllm_single_node_in_inferencex_units(tmp_path: Path) -> None:
    row = fixed_row(tp=4, pp=2)
    write(
        tmp_path / "llama70b_1k1k.json",
        vllm_result(
            conc=16, total=8000, output=3000, ttft_ms=250, tpot_ms=20, itl_ms=19, e2el_ms=900
        ),
    )
    outcome = run("--row", json.dumps(row), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 0, outcome.output
    (point,) = result(tmp_path / "infx-result.json")["rows"]
    m = point["metrics"]
    assert point["gpus"] == {"total": 8}
    assert m["tput_per_gpu"] == pytest.approx(1000.0)
    assert m["output_tput_per_gpu"] == pytest.approx(375.0)
    assert m["input_tput_per_gpu"] == pytest.approx(625.0)
    assert m["mean_ttft"] == pytest.approx(0.25)
    assert m["p99_ttft"] == pytest.approx(0.375)
    assert m["median_e2el"] == pytest.approx(0.882)
    assert m["mean_itl"] == pytest.approx(0.019)
    assert m["mean_intvty"] == pytest.approx(50.0)
    assert m["p99_intvty"] == pytest.approx(1000 / 30)
    assert "std_intvty" not in m
    ident = point["identity"]
    assert ident["conc"] == 16 and ident["isl"] == 1024 and ident["tp"] == 4
    assert ident["hardware"] == "mi355x" and ident["scenario"] == "fixed-seq-len"
    assert point["recipe"]["image"] == row["image"]
    assert point["recipe"]["recipe-fingerprint"] == row["recipe-fingerprint"]
    assert "image" not in ident and "recipe-fingerprint" not in ident
    assert point["client"] == "vllm-bench-serve" and point["source"] == "llama70b_1k1k.json"


def test_multinode_row_one_result_per_concurrency(tmp_path: Path) -> None:
    row = multinode_row(prefill=worker(2, 4, 4), decode=worker(1, 8, 8))
    for conc in (64, 128):
        write(
            tmp_path / f"dsr1_8k1k_conc{conc}.json",
            vllm_result(
                conc=conc, total=32000, output=4000, ttft_ms=900, tpot_ms=40, itl_ms=40, e2el_ms=9e4
            ),
        )
    outcome = run("--row", json.dumps(row), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 0, outcome.output
    rows = result(tmp_path / "infx-result.json")["rows"]
    assert [r["identity"]["conc"] for r in rows] == [64, 128]
    m = rows[0]["metrics"]
    assert rows[0]["gpus"] == {"total": 16, "prefill": 8, "decode": 8}
    assert m["tput_per_gpu"] == pytest.approx(32000 / 16)
    assert m["output_tput_per_gpu"] == pytest.approx(4000 / 8)  # per decode GPU
    assert m["input_tput_per_gpu"] == pytest.approx(28000 / 8)  # per prefill GPU
    assert rows[0]["identity"]["prefill"]["ep"] == 4
    assert rows[0]["identity"]["multinode"] is True and "tp" not in rows[0]["identity"]


def test_row_from_the_environment_row_env_exported(tmp_path: Path, monkeypatch) -> None:
    """The benchmark template exports the row with `infx sweep row-env`; process reads it back."""
    row = agentic_rows()[-1]
    lines = CliRunner().invoke(cli, ["sweep", "row-env"], env={"ROW": json.dumps(row)}).output
    env = dict(line.split("=", 1) for line in lines.splitlines())
    assert env["KV_OFFLOAD_BACKEND"] == '{"name":"vllm-simple"}'
    for name in env:
        monkeypatch.delenv(name, raising=False)
    assert row_from_env(env) == row


def test_environment_and_row_option_give_the_same_result(tmp_path: Path, monkeypatch) -> None:
    row = fixed_row()
    write(
        tmp_path / "llama70b_1k1k.json",
        vllm_result(
            conc=16, total=5000, output=2500, ttft_ms=80, tpot_ms=12, itl_ms=12, e2el_ms=1e3
        ),
    )
    env = {**row_env(row), "RESULTS_DIR": str(tmp_path), "RUNNER_NAME": "mi355x-amds_03"}
    for name in env:
        monkeypatch.delenv(name, raising=False)
    assert run(env=env).exit_code == 0
    from_env = result(tmp_path / "infx-result.json")
    assert run("--row", json.dumps(row), "--results-dir", str(tmp_path)).exit_code == 0
    assert result(tmp_path / "infx-result.json") == from_env


def test_eval_row_becomes_an_accuracy_row(tmp_path: Path) -> None:
    row = {**agentic_rows()[0], "run-eval": True}
    write(
        tmp_path / "lm-eval/deepseek-ai__DeepSeek/results_2026-12-01T10-00-00.json",
        lm_eval_result(strict=0.5),
    )
    write(
        tmp_path / "lm-eval/deepseek-ai__DeepSeek/results_2026-12-03T10-00-00.json",
        lm_eval_result(),
    )
    outcome = run("--row", json.dumps(row), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 0, outcome.output
    (point,) = result(tmp_path / "infx-result.json")["rows"]
    assert point["kind"] == "accuracy" and "metrics" not in point
    strict = next(s for s in point["accuracy"] if s["filter"] == "strict-match")
    assert strict == {
        "task": "gsm8k",
        "metric": "exact_match",
        "filter": "strict-match",
        "value": 0.9719,
        "stderr": 0.0045,
        "samples": 1319,
    }
    assert point["source"].endswith("results_2026-12-03T10-00-00.json")


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (None, 2, "no such file"),
        ("{not json", 1, "not JSON"),
        ("", 1, "empty file, not JSON"),
        ("\udcff\udcfe{}", 1, "not JSON: not UTF-8 text"),
        ('{"completed": 3}', 1, "total_token_throughput is missing"),
        ('{"time_to_first_token": {"avg": 1}}', 1, "not a vLLM serving-benchmark result"),
        ("[1, 2]", 1, "not a JSON object"),
    ],
)
def test_bad_client_output_is_one_line_naming_the_file(
    tmp_path: Path, content: str | None, code: int, message: str
) -> None:
    target = tmp_path / "infx-result.json"
    target.write_text("previous")
    if content is not None:  # lone surrogates: bytes that are not UTF-8
        (tmp_path / "llama70b_1k1k.json").write_bytes(content.encode("utf-8", "surrogateescape"))
    outcome = run("--row", json.dumps(fixed_row()), "--results-dir", str(tmp_path))
    assert outcome.exit_code == code
    assert outcome.output.count("\n") == 1 and "Traceback" not in outcome.output
    assert str(tmp_path / "llama70b_1k1k.json") in outcome.output and message in outcome.output
    assert target.read_text() == "previous"


def test_one_bad_point_of_a_multinode_job_writes_nothing(tmp_path: Path) -> None:
    write(
        tmp_path / "dsr1_8k1k_conc64.json",
        vllm_result(conc=64, total=1, output=1, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1),
    )
    outcome = run("--row", json.dumps(multinode_row()), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 2 and "dsr1_8k1k_conc128.json: no such file" in outcome.output
    assert not (tmp_path / "infx-result.json").exists()


def test_client_run_at_another_concurrency_is_refused(tmp_path: Path) -> None:
    write(
        tmp_path / "llama70b_1k1k.json",
        vllm_result(conc=32, total=10, output=5, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1),
    )
    outcome = run("--row", json.dumps(fixed_row(conc=16)), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 1
    assert "ran at concurrency 32, the row asks for 16" in outcome.output


def test_non_finite_numbers_are_refused(tmp_path: Path) -> None:
    doc = vllm_result(conc=16, total=10, output=5, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1)
    doc["mean_ttft_ms"] = float("nan")
    write(tmp_path / "llama70b_1k1k.json", doc)
    outcome = run("--row", json.dumps(fixed_row()), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 1 and "mean_ttft_ms is nan" in outcome.output


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("completed", 0, "completed no request"),
        ("duration", 0, "duration is 0"),
        ("total_token_throughput", 0, "total_token_throughput is 0"),
    ],
)
def test_a_run_that_measured_nothing_is_refused(
    tmp_path: Path, field: str, value: float, message: str
) -> None:
    """All requests failed, or the clock did not run: not a point with throughput 0."""
    doc = vllm_result(conc=16, total=10, output=5, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1)
    doc[field] = value
    if field == "total_token_throughput":
        doc["output_throughput"] = 0
    write(tmp_path / "llama70b_1k1k.json", doc)
    outcome = run("--row", json.dumps(fixed_row()), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 1, outcome.output
    assert outcome.output.count("\n") == 1 and message in outcome.output
    assert str(tmp_path / "llama70b_1k1k.json") in outcome.output
    assert not (tmp_path / "infx-result.json").exists()


def test_an_aiperf_run_of_zero_duration_is_refused(tmp_path: Path) -> None:
    export = {
        "total_token_throughput": {"unit": "tokens/sec", "avg": 10.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 5.0},
        "request_count": {"unit": "requests", "avg": 4},
        "inter_token_latency": {"unit": "ms", "avg": 10.0, "p50": 10.0, "p99": 12.0},
        "benchmark_duration": {"unit": "sec", "avg": 0.0},
    }
    write(tmp_path / "aiperf/profile_export_aiperf.json", export)
    outcome = run("--row", json.dumps(agentic_rows()[0]), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 1 and "duration is 0" in outcome.output, outcome.output


def test_aiperf_row_reads_the_aiperf_export(tmp_path: Path) -> None:
    write(tmp_path / "aiperf/profile_export_aiperf.json", {"request_count": {"avg": 3}})
    outcome = run("--row", json.dumps(agentic_rows()[0]), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 1
    assert "profile_export_aiperf.json: not an aiperf profile export" in outcome.output


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('{"tp": 8}', "not a sweep matrix row"),
        ("nope", "--row nope: no such file"),
        ("{nope", "--row is not JSON"),
        (json.dumps({**fixed_row(), "tp": 0}), "tp"),
        (json.dumps({**fixed_row(), "tp": 10**400}), "--row: a number of 401 digits is out of"),
        (json.dumps({**fixed_row(), "exp-name": "a\x00b"}), "cannot read: embedded null byte"),
    ],
)
def test_bad_row_is_a_usage_error(tmp_path: Path, row: str, message: str) -> None:
    """A NUL in exp-name made a path open() refuses, 10**400 a number no float holds (both
    exit 3): the row's fault, said in one line."""
    outcome = run("--row", row, "--results-dir", str(tmp_path))
    assert outcome.exit_code == 2 and message in outcome.output


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"tp": 0}, "tp: 0 is less than the minimum of 1"),
        ({"tp": "eight"}, "tp: 'eight' is not of type 'integer'"),
        ({"model": None}, "row: 'model' is a required property"),
    ],
)
def test_a_bad_row_field_is_named_not_the_whole_row(
    tmp_path: Path, change: dict, said: str
) -> None:
    """The row matches none of the row shapes (anyOf): the message printed the whole row
    and named no field. It names the field and the row by its exp-name and conc."""
    row = {k: v for k, v in {**fixed_row(), **change}.items() if v is not None}
    outcome = run("--row", json.dumps(row), "--results-dir", str(tmp_path))
    assert outcome.exit_code == 2, outcome.output
    wanted = f"infx: error: not a sweep matrix row (exp-name llama70b_1k1k, conc 16): {said}\n"
    assert outcome.output == wanted


@pytest.mark.parametrize(
    ("runner", "name", "message"),
    [
        ("", "", "runner label '' names no GPU type"),
        ("h200", "-foo", "runner name '-foo' names no GPU type"),
        ("h200", "_01", "runner name '_01' names no GPU type"),
    ],
)
def test_a_runner_without_a_gpu_type_is_a_usage_error(
    tmp_path: Path, runner: str, name: str, message: str
) -> None:
    """The GPU type is the runner name (else label) before its first dash: an empty one made
    a result the schema refuses, reported as an internal error (exit 3)."""
    made = vllm_result(conc=16, total=1, output=1, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1)
    write(tmp_path / f"{fixed_row()['exp-name']}.json", made)
    row = json.dumps({**fixed_row(), "runner": runner})
    outcome = run("--row", row, "--results-dir", str(tmp_path), f"--runner-name={name}")
    assert outcome.exit_code == 2, outcome.output
    assert message in outcome.output


def test_no_row_anywhere_says_how_to_give_one(tmp_path: Path, monkeypatch) -> None:
    for name in ("IMAGE", "MODEL", "TP", "CONC", "RUNNER", "EXP_NAME"):
        monkeypatch.delenv(name, raising=False)
    outcome = run("--results-dir", str(tmp_path))
    assert outcome.exit_code == 2 and "infx sweep row-env" in outcome.output


def test_process_runs_as_a_real_process(tmp_path: Path) -> None:
    """The console script itself, as the workflow calls it: exit code and stderr."""
    outcome = subprocess.run(
        [
            sys.executable,
            "-m",
            "infx",
            "results",
            "process",
            "--row",
            json.dumps(fixed_row()),
            "--results-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert outcome.returncode == 2
    assert outcome.stderr.startswith("infx: error: ") and outcome.stderr.count("\n") == 1


positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    total=positive,
    share=st.floats(min_value=0, max_value=1),
    tpot=positive,
    tp=st.integers(1, 16),
    pp=st.integers(1, 4),
    pcp=st.integers(1, 4),
)
def test_metrics_keep_the_convention(
    total: float, share: float, tpot: float, tp: int, pp: int, pcp: int
) -> None:
    run_ = ClientRun(
        "vllm-bench-serve", total, total * share, 1, {"mean_tpot": tpot, "p99_ttft": tpot}
    )
    gpus = {"total": tp * pp * pcp}
    m = metrics(run_, gpus)
    assert math.isclose(m["tput_per_gpu"] * gpus["total"], total, rel_tol=1e-9)
    assert math.isclose(
        m["input_tput_per_gpu"] + m["output_tput_per_gpu"], m["tput_per_gpu"], rel_tol=1e-9
    )
    assert math.isclose(m["mean_intvty"] * m["mean_tpot"], 1.0, rel_tol=1e-9)
    assert m["p99_ttft"] == tpot / 1000


def test_the_rows_master_config_goes_into_its_recipe(tmp_path: Path) -> None:
    """`sweep row-env` exports INFX_CONFIG_KEY (the plan's config for the job); each result
    row names it, outside the identity, so two configs measuring one identity stay two."""
    row = fixed_row()
    write(
        tmp_path / "llama70b_1k1k.json",
        vllm_result(
            conc=16, total=5000, output=2500, ttft_ms=80, tpot_ms=12, itl_ms=12, e2el_ms=1e3
        ),
    )
    exported = CliRunner().invoke(
        cli, ["sweep", "row-env"], env={"ROW": json.dumps(row), "CONFIG_KEY": "llama-fp8-next"}
    )
    env = dict(line.split("=", 1) for line in exported.output.splitlines())
    assert env["INFX_CONFIG_KEY"] == "llama-fp8-next"
    outcome = run("--row", json.dumps(row), "--results-dir", str(tmp_path), env=env)
    assert outcome.exit_code == 0, outcome.output
    (point,) = result(tmp_path / "infx-result.json")["rows"]
    assert list(point["recipe"])[:3] == ["image", "exp-name", "config-key"]
    assert point["recipe"]["config-key"] == "llama-fp8-next"
    assert "config-key" not in point["identity"]
    bad = run("--row", json.dumps(row), "--results-dir", str(tmp_path), "--config-key", "a b")
    assert bad.exit_code == 2 and "not a master config key" in bad.output


def test_the_row_may_be_a_file_as_the_provenance_notes_say(tmp_path: Path) -> None:
    """`--row row.json` used to be read as JSON text and refused."""
    row = fixed_row(tp=4, pp=2)
    write(
        tmp_path / "llama70b_1k1k.json",
        vllm_result(
            conc=16, total=8000, output=3000, ttft_ms=250, tpot_ms=20, itl_ms=19, e2el_ms=900
        ),
    )
    (tmp_path / "row.json").write_text(json.dumps(row))
    from_file = run("--row", str(tmp_path / "row.json"), "--results-dir", str(tmp_path))
    assert from_file.exit_code == 0, from_file.output
    by_file = (tmp_path / "infx-result.json").read_bytes()
    as_text = run("--row", json.dumps(row), "--results-dir", str(tmp_path))
    assert as_text.exit_code == 0 and (tmp_path / "infx-result.json").read_bytes() == by_file
    missing = run("--row", str(tmp_path / "nope.json"), "--results-dir", str(tmp_path))
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    assert "--row" in missing.output and "no such file" in missing.output
