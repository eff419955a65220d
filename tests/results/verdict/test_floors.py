"""`infx results floors`: an eval below its model's floor fails its job with the number and
the floor; floors come from infx.toml or a file in InferenceX's thresholds format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GitRepo, make_repo
from tests.results.formats import fixed_row, lm_eval_result, write

THRESHOLDS = """\
# InferenceX's layout: per-task defaults, per-model overrides keyed by model prefix.
default:
  gsm8k: 0.90
  gpqa_diamond_cot_n_shot: 0.30
models:
  llama70b:
    gsm8k: 0.93
"""


@pytest.fixture
def evaluated(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A repository and an eval job's results directory with a gsm8k score of 0.92."""
    repo = make_repo(tmp_path / "repo")
    results = tmp_path / "results"
    write(results / "lm-eval" / "m" / "results_2026.json", lm_eval_result(strict=0.92))
    row = fixed_row(
        **{"run-eval": True, "eval-only": True, "isl": 8192, "exp-name": "llama70b_8k1k"}
    )
    outcome = repo.infx(
        "results", "process", "--row", json.dumps(row), "--results-dir", str(results)
    )
    assert outcome.exit_code == 0, outcome.output
    return repo, results / "infx-result.json"


def test_a_model_floor_beats_the_default_and_fails_the_job(evaluated, tmp_path) -> None:
    repo, result = evaluated
    repo.write("utils/evals/thresholds.yaml", THRESHOLDS)
    repo.write("infx.toml", 'accuracy-floors = "utils/evals/thresholds.yaml"\n')
    summary = tmp_path / "summary.md"
    outcome = repo.infx("results", "floors", str(result), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert outcome.exit_code == 1
    assert (
        "llama70b gsm8k exact_match,strict-match 0.9200 is below its floor 0.93 (models.llama70b)"
        in outcome.stderr
    )
    assert "0.9180 is below its floor 0.93" in outcome.stderr  # flexible-extract, too
    assert "is below its floor 0.93" in summary.read_text()


def test_scores_at_or_above_the_floor_pass(evaluated) -> None:
    repo, result = evaluated
    repo.write("infx.toml", "[accuracy-floors.default]\ngsm8k = 0.918\n")
    outcome = repo.infx("results", "floors", str(result))
    assert outcome.exit_code == 0, outcome.output
    assert "exact_match,flexible-extract 0.9180 meets its floor 0.918 (default)" in outcome.output


def test_no_floor_for_the_task_or_no_floors_at_all_passes(evaluated) -> None:
    repo, result = evaluated
    assert repo.infx("results", "floors", str(result)).exit_code == 0
    repo.write("infx.toml", "[accuracy-floors.models.other]\ngsm8k = 0.99\n")
    outcome = repo.infx("results", "floors", str(result))
    assert outcome.exit_code == 0 and "no accuracy floor applies" in outcome.output


def test_a_throughput_result_has_nothing_to_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("infx.toml", "[accuracy-floors.default]\ngsm8k = 0.9\n")
    results = tmp_path / "results"
    from tests.results.formats import vllm_result

    write(
        results / "llama70b_1k1k.json",
        vllm_result(conc=16, total=1, output=1, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1),
    )
    row = json.dumps(fixed_row())
    assert (
        repo.infx("results", "process", "--row", row, "--results-dir", str(results)).exit_code == 0
    )
    assert repo.infx("results", "floors", str(results / "infx-result.json")).exit_code == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('accuracy-floors = "missing.yaml"\n', "cannot read missing.yaml"),
        ("[accuracy-floors.default]\ngsm8k = nan\n", "must be a finite number"),
        ("[accuracy-floors.default]\ngsm8k = 93\n", "93"),
        ('accuracy-floors = "t.yaml"\n', "not between 0 and 1"),
    ],
)
def test_bad_floors_are_one_line(evaluated, text: str, message: str) -> None:
    repo, result = evaluated
    repo.write("t.yaml", "default:\n  gsm8k: .nan\n")
    repo.write("infx.toml", text)
    outcome = repo.infx("results", "floors", str(result))
    assert outcome.exit_code == 2 and message in outcome.stderr
    assert "Traceback" not in outcome.output


def test_the_summary_shows_a_hostile_model_name_as_plain_text(evaluated, tmp_path) -> None:
    """The model prefix comes from the job's matrix row: in the step summary a mention, a tag
    or a table pipe in it stays text."""
    repo, result = evaluated
    doc = json.loads(result.read_text())
    for row in doc["rows"]:
        row["identity"]["model-prefix"] = "llama @ops <b>x</b> | **y**"
    result.write_text(json.dumps(doc))
    repo.write("infx.toml", "[accuracy-floors.default]\ngsm8k = 0.95\n")
    summary = tmp_path / "summary.md"
    outcome = repo.infx("results", "floors", str(result), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert outcome.exit_code == 1
    written = summary.read_text()
    assert "is below its floor 0.95" in written
    assert "@ops" not in written and "<b>" not in written and "**y**" not in written
    assert "\\|" in written
