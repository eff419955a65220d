"""Verdicts on pull requests nobody wrote the model for: shifted concurrencies, mixed
changes, broken numbers."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from infx.cli import cli
from infx.results.verdict.judge import compare
from infx.results.verdict.words import COVERAGE_LOST, NOISE, REGRESSED
from tests.results.simulate import Sweeps

SHIFTED = (6, 12, 24, 48, 96, 192, 384)  # between main's 4, 8, ..., 512


def test_a_curve_measured_at_other_concurrencies_is_compared_at_matched_interactivity() -> None:
    """The PR measured none of main's concurrencies: its points are judged against main's
    whole curve, so a 20 % slower config is regressed (not only coverage lost), and an
    unchanged one is not."""
    history = Sweeps(2, seed=1).history(20)
    shifted = Sweeps(2, seed=2, concs=SHIFTED)
    report = compare(shifted.run(9000, lambda i, c: 0.8 if i == 0 else 1.0)["rows"], history)
    slow, same = sorted(report.configs, key=lambda c: c.identity["tp"])
    assert slow.curve is not None and slow.curve.matched >= 4
    assert slow.curve.verdict == REGRESSED and slow.verdict == REGRESSED
    assert same.curve is not None and same.curve.verdict == NOISE
    assert same.verdict == COVERAGE_LOST


def _cli_compare(pr: Path, history: Path) -> Result:
    return CliRunner().invoke(
        cli, ["results", "compare", str(pr), "--history", str(history), "--format", "json"]
    )


@pytest.mark.parametrize("side", ["pr", "main"])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_number_that_is_not_finite_is_refused(tmp_path: Path, side: str, value: str) -> None:
    """Python reads NaN and Infinity in JSON; a NaN throughput was 'n/a' and the gate
    passed, an infinite one 'improved'. Either side's table is refused in one line."""
    sweeps = Sweeps(1, seed=3)
    folder = tmp_path / "history"
    folder.mkdir()
    docs = sweeps.history(6)
    pr = sweeps.run(9000)
    spoiled = pr if side == "pr" else docs[-1]
    for row in spoiled["rows"]:
        row["metrics"]["tput_per_gpu"] = "@@"
    for d in docs:
        (folder / f"{d['run']['id']}.json").write_text(json.dumps(d).replace('"@@"', value))
    (tmp_path / "pr.json").write_text(json.dumps(pr).replace('"@@"', value))
    outcome = _cli_compare(tmp_path / "pr.json", folder)
    assert outcome.exit_code not in (0, 3), outcome.output
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    assert "tput_per_gpu" in outcome.stderr
    assert "finite" in outcome.stderr or value == "-Infinity"  # that one is below 0
    assert len(outcome.stderr.strip().splitlines()) == 1


def test_a_throughput_of_zero_is_a_regression_not_n_a() -> None:
    """A table may say 0 tok/s (the schema allows it): that is the worst regression, and
    the gate must not pass it as 'within noise'."""
    sweeps = Sweeps(1, seed=3)
    history = sweeps.history(6)
    pr = sweeps.run(9000)
    for row in pr["rows"][:2]:
        row["metrics"]["tput_per_gpu"] = 0.0
    report = compare(pr["rows"], history)
    assert report.verdict == REGRESSED and report.failing
    dead = [p for c in report.configs for p in c.points if p.conc in (4, 8)]
    assert {p.verdict for p in dead} == {REGRESSED}
    assert {p.checks[0].change_pct for p in dead} == {-100.0}


def test_an_identity_differing_only_by_case_or_spacing_is_the_same_config() -> None:
    """The PR spelled the framework 'vLLM ' where main has 'vllm': its points are not all
    new (the gate would pass a 20 % slower config unseen) and main's curve is not lost."""
    sweeps = Sweeps(1, seed=4)
    history = sweeps.history(8)
    pr = sweeps.run(9000, lambda i, c: 0.8)
    for row in pr["rows"]:
        ident = row["identity"]
        row["identity"] = {
            **ident,
            "framework": " vLLM ",
            "model-prefix": ident["model-prefix"].upper(),
        }
    report = compare(pr["rows"], history)
    (config,) = report.configs
    assert config.verdict == REGRESSED and config.runs == 8
    assert any("case" in note for note in report.notes), report.notes
    # The matching belongs to that comparison: the next one, spelled alike on both sides
    # (the respelled identity first this time), compares the same and notes no respelling.
    again = compare(pr["rows"], [dict(t, rows=pr["rows"]) for t in history])
    assert again.configs[0].key == config.key
    assert not any("case" in note for note in again.notes), again.notes
    plain = compare(sweeps.run(9000)["rows"], history)
    assert not any("case" in note for note in plain.notes), plain.notes


def test_a_respelled_config_is_compared_through_the_results_database(tmp_path: Path) -> None:
    sweeps = Sweeps(1, seed=4)
    database = tmp_path / "history.sqlite"
    for r, table in enumerate(sweeps.history(6)):
        table["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
        (tmp_path / "main.json").write_text(json.dumps(table))
        stored = CliRunner().invoke(
            cli, ["results", "ingest", str(tmp_path / "main.json"), "--history", str(database)]
        )
        assert stored.exit_code == 0, stored.output
    pr = sweeps.run(9000, lambda i, c: 0.8)
    for row in pr["rows"]:
        row["identity"] = {**row["identity"], "framework": "VLLM"}
    (tmp_path / "pr.json").write_text(json.dumps(pr))
    outcome = _cli_compare(tmp_path / "pr.json", database)
    assert outcome.exit_code == 1, outcome.output
    (config,) = json.loads(outcome.stdout)["configs"]
    assert config["verdict"] == REGRESSED and config["history_runs"] == 6


def test_a_run_twice_in_the_history_folder_counts_once(tmp_path: Path) -> None:
    """The same main run's table downloaded into two folders: counted twice, its values
    looked like runs agreeing exactly, the scatter shrank and every config regressed."""
    sweeps = Sweeps(6, seed=2)
    folder = tmp_path / "history"
    for doc in sweeps.history(6):
        for where in ("a", "b"):
            (folder / where).mkdir(parents=True, exist_ok=True)
            (folder / where / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    later = copy.deepcopy(doc)
    later["run"]["attempt"] = 2
    later["rows"] = later["rows"][:3]  # attempt 2's table: a re-run of failed jobs, merged
    (folder / "b" / "attempt2.json").write_text(json.dumps(later))
    (tmp_path / "pr.json").write_text(json.dumps(sweeps.run(9000)))
    outcome = _cli_compare(tmp_path / "pr.json", folder)
    verdict = json.loads(outcome.stdout)
    assert verdict["method"]["history_runs"] == 6
    assert verdict["configs_by_verdict"][REGRESSED] <= 1, outcome.output


def test_two_different_tables_of_one_run_attempt_are_refused(tmp_path: Path) -> None:
    sweeps = Sweeps(1, seed=2)
    folder = tmp_path / "history"
    folder.mkdir()
    docs = sweeps.history(3)
    for doc in docs:
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    other = copy.deepcopy(docs[-1])
    other["rows"] = other["rows"][:2]
    (folder / "other.json").write_text(json.dumps(other))
    (tmp_path / "pr.json").write_text(json.dumps(sweeps.run(9000)))
    outcome = _cli_compare(tmp_path / "pr.json", folder)
    assert outcome.exit_code not in (0, 3), outcome.output
    assert outcome.stderr.startswith("infx: error:") and not outcome.stdout
    assert f"run {docs[-1]['run']['id']}" in outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1


def test_this_runs_own_table_is_never_its_baseline(tmp_path: Path) -> None:
    """--history . with the PR's table inside: the run judged against itself read within
    noise however slow it was."""
    sweeps = Sweeps(2, seed=5)
    for doc in sweeps.history(6):
        (tmp_path / f"main-{doc['run']['id']}.json").write_text(json.dumps(doc))
    pr = sweeps.run(9000, lambda i, c: 0.8 if i == 0 else 1.0)
    pr["run"]["created_at"] = "2099-01-01T00:00:00Z"  # newer than every main run
    (tmp_path / "pr.json").write_text(json.dumps(pr))
    outcome = _cli_compare(tmp_path / "pr.json", tmp_path)
    assert outcome.exit_code == 1, outcome.output
    verdict = json.loads(outcome.stdout)
    assert verdict["method"]["history_runs"] == 6
    assert verdict["configs_by_verdict"][REGRESSED] == 1


def test_an_accuracy_drop_without_stderr_is_judged_on_its_samples() -> None:
    """lm-eval reports no stderr for some metrics ("N/A"): gsm8k falling from 0.97 to 0.50
    was 'n/a' and passed as within noise. Its 1,319 samples bound the binomial error."""
    from tests.results.compare.test_compare import accuracy, doc

    def judged(before: float, after: float) -> str:
        report = compare([accuracy(16, after, None)], [doc([accuracy(16, before, None)])])
        (config,) = report.configs
        return config.verdict

    assert judged(0.97, 0.50) == REGRESSED
    assert judged(0.970, 0.965) == NOISE  # 0.5 points: within 1.96 binomial errors
    assert judged(0.90, 0.95) == "improved"
