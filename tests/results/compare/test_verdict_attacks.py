"""Tables that made `results compare` pass a PR that really regressed, through the real CLI
on real GPU runs (tests/data/gpu-noise-h200-stepcost: main's runs ingested into an SQLite
history, an unchanged run of it made slower by hand): each table reads regressed as it
is, and the attack on it must not turn the gate green."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.results.compare.test_compare import accuracy, doc
from tests.results.verdict.test_real_noise import SETS, build

SLOW, FAST = ("tput", "_intvty"), ("_ttft", "_tpot", "_itl", "_e2el")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    return build(SETS["stepcost"], tmp_path_factory.mktemp("stepcost"))


def slowed(table: Path, factor: float = 0.85) -> dict[str, Any]:
    """The run `factor` as fast at every point: throughput down, latencies up."""
    doc = json.loads(table.read_text())
    for row in doc["rows"]:
        m = row["metrics"]
        for key in list(m):
            if any(s in key for s in SLOW):
                m[key] *= factor
            elif key.endswith(FAST):
                m[key] /= factor
    return doc


def judge(history: Path, doc: dict[str, Any], *extra: str) -> tuple[int, str]:
    table = history.parent / f"pr{abs(hash(json.dumps(doc)))}.json"
    table.write_text(json.dumps(doc))
    args = ["results", "compare", str(table), "--history", str(history), *extra]
    done = CliRunner().invoke(cli, args, catch_exceptions=False)
    return done.exit_code, done.output


def test_the_slowed_run_regresses(real: tuple[Path, dict[str, Path]]) -> None:
    history, tables = real
    code, output = judge(history, slowed(tables["haa00"]))
    assert code == 1 and "regressed" in output


def test_a_table_that_measured_one_point_twice_is_refused(
    real: tuple[Path, dict[str, Path]],
) -> None:
    """A point measured twice kept its first row: an unchanged copy of the rows put before
    the slow ones turned a 15 % regression into within noise."""
    history, tables = real
    doc = slowed(tables["haa00"])
    unchanged = json.loads(tables["haa00"].read_text())["rows"]
    doc["rows"] = unchanged + doc["rows"]
    code, output = judge(history, doc)
    assert code == 2 and "measure one point twice" in output
    respelled = slowed(tables["haa00"])  # the copy under another spelling of the model
    for row in unchanged:
        row["identity"]["framework"] = " VLLM"
    respelled["rows"] = unchanged + respelled["rows"]
    code, output = judge(history, respelled)
    assert code == 2 and "measure one point twice" in output
    alone = history.parent / "dup.json"
    alone.write_text(json.dumps(doc))
    code, output = judge(history, slowed(tables["haa01"]), "--repeat", str(alone))
    assert code == 2 and "dup.json: rows 0 and 8 measure one point twice" in output


def test_mains_run_beside_that_is_a_copy_of_the_prs_is_refused(
    real: tuple[Path, dict[str, Path]],
) -> None:
    """`--baseline-repeat` with the PR's own numbers: every pair's difference is 0, and a
    15 % regression read within noise."""
    history, tables = real
    doc = slowed(tables["haa00"])
    beside = copy.deepcopy(doc)
    beside["run"] |= {"id": 99_999, "sha": "0" * 40}
    twin = history.parent / "beside.json"
    twin.write_text(json.dumps(beside))
    code, output = judge(history, doc, "--baseline-repeat", str(twin))
    assert code == 2 and "hold the same measurement" in output
    own = slowed(tables["haa01"], 0.97)  # a run of main's image beside it: judged
    own["run"]["sha"] = "0" * 40
    twin.write_text(json.dumps(own))
    code, output = judge(history, doc, "--baseline-repeat", str(twin))
    assert code == 1 and "Paired: 2 config(s) judged on 1 pair(s)" in output


@pytest.mark.parametrize("how", ["left out", "zero"])
def test_a_gated_metric_the_pr_did_not_report_is_coverage_lost(
    real: tuple[Path, dict[str, Path]], how: str
) -> None:
    """TPOT p50 15 % worse, throughput as main's: a table without its TPOT (or with 0 for
    it) had every point judged on throughput alone, within noise, and the gate passed."""
    history, tables = real
    doc = slowed(tables["haa00"])
    fast = json.loads(tables["haa00"].read_text())["rows"]
    for row, own in zip(doc["rows"], fast, strict=True):
        row["metrics"]["tput_per_gpu"] = own["metrics"]["tput_per_gpu"]
    code, output = judge(history, doc)
    assert code == 1 and "regressed" in output
    for row in doc["rows"]:
        for key in [k for k in row["metrics"] if k.endswith(("_tpot", "_intvty"))]:
            if how == "left out":
                del row["metrics"][key]
            else:
                row["metrics"][key] = 0
    code, output = judge(history, doc)
    assert code == 1, output
    assert "coverage lost in 2 config(s) (8 point(s) missing)" in output


@pytest.mark.parametrize("hidden", ["\u200b", "\u00ad", "\ufeff"])
def test_an_invisible_character_in_a_name_is_no_new_config(
    real: tuple[Path, dict[str, Path]], hidden: str
) -> None:
    """A zero-width space in the model prefix: the slowed config read `new` (never gated)
    and main's config, of another family then, was not missed."""
    history, tables = real
    doc = slowed(tables["haa00"])
    for row in doc["rows"]:
        row["identity"]["model-prefix"] += hidden
    code, output = judge(history, doc, "--format", "json")
    verdict, _ = json.JSONDecoder().raw_decode(output[output.index("{") :])
    assert code == 1 and verdict["verdict"] == "regressed"
    assert verdict["points"]["new"] == 0


def test_a_pr_table_naming_mains_run_ids_leaves_mains_history_whole(
    real: tuple[Path, dict[str, Path]],
) -> None:
    """Main's own run is left out of its baseline; a PR's run and repeat that named two of
    main's 4 run ids took them out, and a 20 % regression read unconfirmed on the rest."""
    _, tables = real
    history = tables["hmain08"].parent.parent / "four.sqlite"
    for name in ("hmain08", "hmain09", "hmain10", "hmain11"):
        done = CliRunner().invoke(cli, ["results", "ingest", str(tables[name]), "--history",
                                        f"sqlite:///{history}"])  # fmt: skip
        assert done.exit_code == 0, done.output
    runs = [slowed(tables[name], 0.8) for name in ("haa00", "haa01")]
    for one, main in zip(runs, ("hmain08", "hmain09"), strict=True):
        one["run"]["id"] = json.loads(tables[main].read_text())["run"]["id"]
    repeat = history.parent / "repeat.json"
    repeat.write_text(json.dumps(runs[1]))
    code, output = judge(history, runs[0], "--repeat", str(repeat))
    assert code == 1 and "own table" not in output
    assert "Main's history: 4 main run(s)" in output
    own = json.loads(tables["hmain11"].read_text())  # main's newest, judged on the others
    code, output = judge(history, own)
    assert "this run's own table (7011) left out" in output


@pytest.mark.parametrize(
    ("value", "stderr", "samples", "verdict"),
    [
        (0.9714, 0.0046, 1319, "within-noise"),  # unchanged: judged on both errors
        (0.60, 0.3, 1319, "regressed"),  # a stderr no 1,319 samples give
        (0.60, None, 4, "regressed"),  # an eval cut to 4 samples
        (0.95, 0.006, 1319, "regressed"),  # its own error a little larger, as a drop's is
    ],
)
def test_a_pr_scores_own_error_never_widens_its_band(
    tmp_path: Path, value: float, stderr: float | None, samples: int, verdict: str
) -> None:
    """gsm8k 0.97 on main (stderr 0.0045): a PR table that claimed a stderr of 0.3, or ran
    4 samples (binomial error 0.24), read 0.60 as within stderr and the gate passed."""
    history = tmp_path / "history.sqlite"
    for run in range(1, 4):
        main = doc([accuracy(16, 0.9719, 0.0045)], run)
        main["run"] |= {"ref": "refs/heads/main", "created_at": f"2026-03-0{run}T00:00:00Z"}
        (tmp_path / f"main{run}.json").write_text(json.dumps(main))
        done = CliRunner().invoke(cli, ["results", "ingest", str(tmp_path / f"main{run}.json"),
                                        "--history", f"sqlite:///{history}"])  # fmt: skip
        assert done.exit_code == 0, done.output
    pr = doc([accuracy(16, value, stderr)], 99)
    pr["run"] |= {"sha": "a" * 40, "ref": "refs/pull/1/merge"}
    score = pr["rows"][0]["accuracy"][0]
    score["samples"] = samples
    if stderr is None:
        score.pop("stderr", None)
    code, output = judge(history, pr, "--format", "json")
    found, _ = json.JSONDecoder().raw_decode(output[output.index("{") :])
    assert found["verdict"] == verdict and code == (verdict == "regressed")


def test_a_copy_of_mains_run_is_no_run_of_the_pr(real: tuple[Path, dict[str, Path]]) -> None:
    """Main's two newest tables, relabelled as this PR's runs and given as repeats, pooled
    a 15 % regression into within noise; main's table as the PR's read within noise."""
    history, tables = real
    doc = slowed(tables["haa00"])
    given = []
    for n, main in enumerate(("hmain11", "hmain10")):
        copied = json.loads(tables[main].read_text())
        copied["run"] = doc["run"] | {"id": 90_000 + n}
        given += ["--repeat", str(history.parent / f"copy{n}.json")]
        (history.parent / f"copy{n}.json").write_text(json.dumps(copied))
    code, output = judge(history, doc, *given)
    assert code == 2 and "the very same numbers as main's run 7011" in output
    code, output = judge(history, copied)
    assert code == 2 and "a copy of main's run, not a run of this PR" in output


def test_a_pair_of_one_concurrency_does_not_hide_the_runs_other_points(
    real: tuple[Path, dict[str, Path]],
) -> None:
    """The sweep's run 30 % slower at concurrency 64; a paired repeat of concurrency 2 alone
    (this PR's half and main's, both unchanged) had the config judged on that pair, the
    other points missing but not coverage lost, and the gate passed."""
    history, tables = real
    doc = slowed(tables["haa00"], 0.7)
    doc["rows"] = [
        row if row["identity"]["conc"] == 64 else fresh
        for row, fresh in zip(
            doc["rows"], json.loads(tables["haa00"].read_text())["rows"], strict=True
        )
    ]
    code, output = judge(history, doc)
    assert code == 1, output
    halves = []
    for name, sha in (("haa01", doc["run"]["sha"]), ("haa02", "0" * 40)):
        half = json.loads(tables[name].read_text())
        half["run"] |= {"id": 9_300, "sha": sha}
        half["rows"] = [r for r in half["rows"] if r["identity"]["conc"] == 2]
        (history.parent / f"{name}-half.json").write_text(json.dumps(half))
        halves.append(str(history.parent / f"{name}-half.json"))
    code, output = judge(history, doc, "--repeat", halves[0], "--baseline-repeat", halves[1])
    assert code == 1 and "regressed" in output, output


def test_pairs_do_not_excuse_a_point_no_run_of_the_pr_measured(
    real: tuple[Path, dict[str, Path]],
) -> None:
    """The sweep left out concurrency 64, which main measured (coverage lost); with a paired
    repeat that left it out too, the point read missing but never coverage lost."""
    history, tables = real
    given = []
    for n, (name, sha) in enumerate(
        (("haa00", "a" * 40), ("haa01", "a" * 40), ("haa02", "0" * 40))
    ):
        run = json.loads(tables[name].read_text())
        run["run"] |= {"id": 9_400 + min(n, 1), "sha": sha}
        run["rows"] = [r for r in run["rows"] if r["identity"]["conc"] != 64]
        (history.parent / f"no64-{n}.json").write_text(json.dumps(run))
        given.append(run)
    code, output = judge(history, given[0])
    assert code == 1 and "coverage lost" in output
    paired = ["--repeat", str(history.parent / "no64-1.json"),
              "--baseline-repeat", str(history.parent / "no64-2.json")]  # fmt: skip
    code, output = judge(history, given[0], *paired)
    assert code == 1 and "coverage lost in 2 config(s) (2 point(s) missing)" in output, output
