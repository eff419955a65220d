"""`infx results collect`: every job's rows of a run -> results.json, results.csv, summary.md."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.results.ingest.collect import csv_columns
from infx.schemas import errors as schema_errors
from tests.results.formats import fixed_row, lm_eval_result, vllm_result, write


def job(root: Path, artifact: str, row: dict, doc: dict, name: str) -> None:
    """A benchmark job as the template leaves it: client output, then `results process`."""
    folder = root / artifact
    write(folder / name, doc)
    outcome = CliRunner().invoke(
        cli, ["results", "process", "--row", json.dumps(row), "--results-dir", str(folder)]
    )
    assert outcome.exit_code == 0, outcome.output


def sweep(tmp_path: Path) -> tuple[Path, Path]:
    bmk, evals = tmp_path / "results_bmk", tmp_path / "eval_results_all"
    for i, conc in enumerate((4, 8, 16)):
        job(
            bmk,
            f"bmk_single_llama70b_1k1k_{i}",
            fixed_row(conc=conc),
            vllm_result(
                conc=conc,
                total=1000 * conc,
                output=400 * conc,
                ttft_ms=50 + conc,
                tpot_ms=10 + conc,
                itl_ms=10 + conc,
                e2el_ms=2000,
            ),
            "llama70b_1k1k.json",
        )
    job(
        evals,
        "eval_llama70b_8k1k_0",
        fixed_row(conc=16, isl=8192, **{"exp-name": "llama70b_8k1k", "run-eval": True}),
        lm_eval_result(),
        "lm-eval/m/results_2026-12-03T00-00-00.json",
    )
    return bmk, evals


def collect(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, ["results", "collect", *args], env=env)


def test_collects_every_job_into_one_table(tmp_path: Path, monkeypatch) -> None:
    bmk, evals = sweep(tmp_path)
    summary = tmp_path / "step-summary.md"
    env = {
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_RUN_ID": "777",
        "GITHUB_RUN_ATTEMPT": "3",
        "GITHUB_SHA": "f" * 40,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_REPOSITORY": "acme/bench",
        "GITHUB_SERVER_URL": "https://github.com",
    }
    outcome = collect(str(bmk), str(evals), "--out-dir", str(bmk), env=env)
    assert outcome.exit_code == 0, outcome.output
    table = json.loads((bmk / "results.json").read_text())
    assert schema_errors("result", table) == []
    assert table["run"] == {
        "id": 777,
        "attempt": 3,
        "url": "https://github.com/acme/bench/actions/runs/777",
        "sha": "f" * 40,
        "ref": "refs/pull/7/merge",
    }
    kinds = [(r["kind"], r["identity"]["conc"]) for r in table["rows"]]
    assert kinds == [("accuracy", 16), ("throughput", 4), ("throughput", 8), ("throughput", 16)]

    with (bmk / "results.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == csv_columns()
        records = list(reader)
    for record in records:
        assert schema_errors("results-csv", record) == []
    throughput = [r for r in records if r["kind"] == "throughput"]
    for record, row in zip(throughput, table["rows"][1:], strict=True):
        assert int(record["conc"]) == row["identity"]["conc"]
        assert float(record["tput_per_gpu"]) == row["metrics"]["tput_per_gpu"]
        assert float(record["mean_ttft"]) == row["metrics"]["mean_ttft"]
    scores = [r for r in records if r["kind"] == "accuracy"]
    assert {(r["filter"], r["value"]) for r in scores} == {
        ("strict-match", "0.9719"),
        ("flexible-extract", repr(0.9719 - 0.002)),
    }

    markdown = (bmk / "summary.md").read_text()
    assert summary.read_text() == markdown
    assert "| 16 | 4,000 | 1,600 | 64.68 | 99 | 25.48 | 39 |" in markdown  # p50 and p99
    assert "| gsm8k | exact\\_match (strict-match) | 0.9719 ± 0.0045 |" in markdown


def test_csv_keeps_the_spread_columns_inferencex_compares(tmp_path: Path) -> None:
    """std, p90 and p99.9 of every latency, as `vllm bench serve` reports them."""
    folder = tmp_path / "bmk"
    doc = vllm_result(conc=4, total=400, output=100, ttft_ms=50, tpot_ms=10, itl_ms=10, e2el_ms=900)
    for name in ("ttft", "tpot", "itl", "e2el"):
        doc[f"p90_{name}_ms"] = 7.0
        doc[f"p99.9_{name}_ms"] = 9.0
    job(folder, "bmk_a", fixed_row(conc=4), doc, "llama70b_1k1k.json")
    assert collect(str(folder), "--out-dir", str(folder)).exit_code == 0
    with (folder / "results.csv").open(newline="") as fh:
        (record,) = list(csv.DictReader(fh))
    for name in ("ttft", "tpot", "itl", "e2el"):
        assert float(record[f"std_{name}"]) == pytest.approx(doc[f"std_{name}_ms"] / 1000)
        assert float(record[f"p90_{name}"]) == pytest.approx(0.007)
        assert float(record[f"p99.9_{name}"]) == pytest.approx(0.009)
    assert float(record["p90_intvty"]) == pytest.approx(1000 / 7)


def test_collect_twice_gives_the_same_table(tmp_path: Path) -> None:
    """The table lands inside results_bmk, which the next collect walks again."""
    bmk, evals = sweep(tmp_path)
    assert collect(str(bmk), str(evals), "--out-dir", str(bmk)).exit_code == 0
    first = (bmk / "results.json").read_text()
    assert collect(str(bmk), str(evals), "--out-dir", str(bmk)).exit_code == 0
    assert json.loads((bmk / "results.json").read_text())["rows"] == json.loads(first)["rows"]


def test_a_broken_job_file_fails_and_writes_nothing(tmp_path: Path) -> None:
    bmk, evals = sweep(tmp_path)
    bad = bmk / "bmk_single_llama70b_1k1k_1" / "infx-result.json"
    doc = json.loads(bad.read_text())
    doc["rows"][0]["metrics"]["tput_per_gpu"] = -1
    bad.write_text(json.dumps(doc))
    out = tmp_path / "out"
    outcome = collect(str(bmk), str(evals), "--out-dir", str(out))
    assert outcome.exit_code == 1
    assert str(bad) in outcome.output and "not an infx results file" in outcome.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--run-id", "\u00b2"),
        ("--run-id", "abc"),
        ("--run-id", str(2**63)),
        ("--run-attempt", "x"),
        ("--run-id", "1" + "0" * 4400),  # int() of it raised (exit 3)
    ],
)
def test_a_run_id_or_attempt_that_is_not_a_whole_number_writes_nothing(
    tmp_path: Path, flag: str, value: str
) -> None:
    """`²` passed isdigit() and crashed int() (exit 3); 2**63 made a table the schema refuses
    (exit 3); `abc` was dropped silently, leaving a table no history can place."""
    bmk, evals = sweep(tmp_path)
    out = tmp_path / "out"
    args = ["--run-id", "7", flag, value] if flag == "--run-attempt" else [flag, value]
    outcome = collect(str(bmk), str(evals), "--out-dir", str(out), *args)
    assert outcome.exit_code == 2, outcome.output
    assert f"must be a whole number, not {value!r}" in outcome.output
    assert not out.exists()


@pytest.mark.parametrize("given", [["typo"], ["bmk", "typo"], ["bmk", "evals"]])
def test_a_missing_root_is_refused_and_nothing_written(tmp_path: Path, given: list[str]) -> None:
    """A mistyped folder wrote an empty table (a warning and exit 0), as if the run had
    measured nothing; beside real folders, it was skipped without a word."""
    bmk, evals = sweep(tmp_path)
    where = {"bmk": bmk, "evals": evals}
    roots = [str(where.get(name, tmp_path / name)) for name in given]
    out = tmp_path / "out"
    outcome = collect(*roots, "--out-dir", str(out))
    if "typo" not in given:
        assert outcome.exit_code == 0, outcome.output
        return
    assert outcome.exit_code == 2, outcome.output
    assert outcome.output == f"infx: error: {tmp_path / 'typo'}: no such folder\n"
    assert not out.exists()


def test_no_results_is_an_empty_table_and_a_warning(tmp_path: Path) -> None:
    (tmp_path / "results_bmk").mkdir()
    outcome = collect(str(tmp_path / "results_bmk"), "--out-dir", str(tmp_path / "out"))
    assert outcome.exit_code == 0
    assert "warning: no infx-result.json" in outcome.output
    table = json.loads((tmp_path / "out/results.json").read_text())
    assert table["rows"] == []
    assert (tmp_path / "out/results.csv").read_text().count("\n") == 1


def _point(root: Path, artifact: str, conc: int, total: float) -> None:
    job(
        root,
        artifact,
        fixed_row(conc=conc),
        vllm_result(conc=conc, total=total, output=total / 2, ttft_ms=50, tpot_ms=10,
                    itl_ms=10, e2el_ms=2000),
        "llama70b_1k1k.json",
    )  # fmt: skip


def _throughput(table: dict) -> dict[int, float]:
    rows = [r for r in table["rows"] if r["kind"] == "throughput"]
    concs = [r["identity"]["conc"] for r in rows]
    assert len(concs) == len(set(concs)), f"a point appears twice: {sorted(concs)}"
    return {r["identity"]["conc"]: r["metrics"]["total_tput"] for r in rows}


def test_a_point_measured_by_two_jobs_appears_once(tmp_path: Path) -> None:
    """InferenceX #1966: a flaky eval rerun six times left duplicate rows that blocked reuse."""
    bmk = tmp_path / "results_bmk"
    _point(bmk, "bmk_single_llama70b_1k1k_0_0", 4, 1000)
    _point(bmk, "bmk_single_llama70b_1k1k_0_1", 4, 1100)
    outcome = collect(str(bmk), "--out-dir", str(tmp_path / "out"))
    assert outcome.exit_code == 0, outcome.output
    assert _throughput(json.loads((tmp_path / "out/results.json").read_text())) == {4: 1100}
    assert "measured by 2 job files" in outcome.stderr and "bmk_single_llama70b_1k1k_0_1" in (
        outcome.stderr
    )


def test_a_rerun_merges_with_its_source_run_newest_result_winning(tmp_path: Path) -> None:
    """The source run measured 4, 8 and 16 but 16 failed; the rerun measured 16 again and,
    with a changed recipe, its canary at 4. Each point appears once, the rerun's winning."""
    source = tmp_path / "source"
    _point(source / "results_bmk", "bmk_single_llama70b_1k1k_0_0", 4, 1000)
    _point(source / "results_bmk", "bmk_single_llama70b_1k1k_0_1", 8, 2000)
    first = collect(str(source / "results_bmk"), "--out-dir", str(source / "table"))
    assert first.exit_code == 0, first.output
    rerun = tmp_path / "rerun"
    _point(rerun, "bmk_canary_llama70b_1k1k_0_0", 4, 1050)
    _point(rerun, "bmk_single_llama70b_1k1k_0_0", 16, 4000)
    (rerun / "bmk_single_llama70b_1k1k_0_1").mkdir()  # a job that failed again: no result
    outcome = collect(
        str(rerun), "--previous", str(source / "table"), "--out-dir", str(tmp_path / "out")
    )
    assert outcome.exit_code == 0, outcome.output
    table = json.loads((tmp_path / "out/results.json").read_text())
    assert _throughput(table) == {4: 1050, 8: 2000, 16: 4000}
    assert "3 point(s): 1 from earlier runs, 2 from this run (1 replacing earlier)" in (
        outcome.output
    )
    records = list(csv.DictReader((tmp_path / "out/results.csv").open()))
    assert sorted(int(r["conc"]) for r in records) == [4, 8, 16]


def test_previous_results_that_break_the_schema_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "old" / "results.json"
    bad.parent.mkdir()
    bad.write_text('{"format": "infx-results/1", "rows": [{"kind": "nope"}]}')
    outcome = collect(
        str(tmp_path), "--previous", str(bad.parent), "--out-dir", str(tmp_path / "o")
    )
    assert outcome.exit_code == 1 and "not an infx results file" in outcome.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_the_same_point_measured_with_two_recipes_keeps_both(tmp_path: Path) -> None:
    bmk = tmp_path / "results_bmk"
    _point(bmk, "bmk_single_llama70b_1k1k_0_0", 4, 1000)
    job(bmk, "bmk_single_llama70b_1k1k_0_1", fixed_row(conc=4, image="vllm:next"),
        vllm_result(conc=4, total=1200, output=600, ttft_ms=50, tpot_ms=10, itl_ms=10,
                    e2el_ms=2000), "llama70b_1k1k.json")  # fmt: skip
    outcome = collect(str(bmk), "--out-dir", str(tmp_path / "out"))
    assert outcome.exit_code == 0 and "measured by" not in outcome.stderr
    rows = json.loads((tmp_path / "out/results.json").read_text())["rows"]
    assert sorted(r["recipe"]["image"] for r in rows) == [
        "vllm/vllm-openai-rocm:v0.11.0",
        "vllm:next",
    ]


def test_a_warning_quoting_a_folder_name_prints_its_invisible_characters_escaped(
    tmp_path: Path,
) -> None:
    """The warning that no job file was found quoted the folder raw: a right-to-left
    override in its name (U+202E) reversed the rest of the line in the terminal and the job
    log, an ESC could rewrite the screen. It is printed as errors are, escaped."""
    folder = tmp_path / "e\u202emoc.\x1b[2Jexe-é"
    folder.mkdir()
    args = ["results", "collect", str(folder), "--out-dir", str(tmp_path / "out")]
    outcome = CliRunner().invoke(cli, args, env={"GITHUB_RUN_ID": ""})
    assert outcome.exit_code == 0, outcome.output
    assert (
        outcome.stderr
        == f"infx: warning: no infx-result.json below {tmp_path}/e\\u202emoc.\\x1b[2Jexe-é\n"
    )
