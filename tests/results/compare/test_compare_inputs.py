"""Inputs that made `compare` pass what it never judged: a history path that does not exist
(an empty database was created and every point read new), a relative `sqlite:///` URL read
from wherever the command ran, an empty table (no JSON document, exit 0), and a `$...$` in a
config name (matplotlib's mathtext crashed `--plots` with exit 3 before the comment and the
check run were written)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.results.verdict.words import REGRESSED
from infx.schemas import errors as schema_errors
from tests.conftest import GitRepo
from tests.results.simulate import Sweeps

JSON = ("--format", "json")


def _compare(tmp_path: Path, folder: Path) -> list[str]:
    return ["results", "compare", str(tmp_path / "pr.json"), "--history", str(folder)]


def _tables(tmp_path: Path, runs: int = 6) -> tuple[list[Path], Path]:
    sweeps = Sweeps(2, seed=4)
    paths = []
    for r, doc in enumerate(sweeps.history(runs)):
        doc["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
        path = tmp_path / f"main{r}.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    pr = sweeps.run(9000, lambda i, c: 0.6 if i == 0 else 1.0)
    pr["run"]["ref"] = "refs/pull/7/merge"
    (tmp_path / "pr.json").write_text(json.dumps(pr))
    return paths, tmp_path / "pr.json"


def test_a_history_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    _, pr = _tables(tmp_path)
    for where in (str(tmp_path / "nope" / "h.sqlite"), f"sqlite:///{tmp_path}/h.sqlite"):
        outcome = CliRunner().invoke(cli, ["results", "compare", str(pr), "--history", where])
        assert outcome.exit_code == 2, outcome.output
        assert "no SQLite file" in outcome.stderr and len(outcome.stderr.splitlines()) == 1
        assert not outcome.stdout
    assert not (tmp_path / "nope").exists() and not (tmp_path / "h.sqlite").exists()


def test_a_relative_sqlite_url_is_read_from_the_repository_root(
    repo: GitRepo, tmp_path: Path
) -> None:
    """`sqlite:///data/h.sqlite`, like the `history` setting, names a file under the
    repository's root wherever the command runs (it was read from the working directory:
    another folder found no history, made an empty one, and passed everything)."""
    mains, pr = _tables(tmp_path)
    for path in mains:
        stored = repo.infx("results", "ingest", str(path), "--history", "sqlite:///data/h.sqlite")
        assert stored.exit_code == 0, stored.output
    assert (repo.path / "data" / "h.sqlite").is_file()
    (repo.path / "sub").mkdir()
    old = Path.cwd()
    os.chdir(repo.path / "sub")
    try:
        outcome = CliRunner().invoke(
            cli,
            ["results", "compare", str(pr), "--history", "sqlite:///data/h.sqlite", *JSON],
        )
    finally:
        os.chdir(old)
    assert outcome.exit_code == 1, outcome.output
    verdict = json.loads(outcome.stdout)
    assert verdict["method"]["history_runs"] == 6 and verdict["verdict"] == REGRESSED
    assert not (repo.path / "sub" / "data").exists()


def test_an_empty_table_is_no_pass(tmp_path: Path) -> None:
    """Nothing measured is not a pass: a JSON document saying so, and exit 1."""
    empty = tmp_path / "pr.json"
    empty.write_text(json.dumps({"format": "infx-results/1", "rows": []}))
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "main.json").write_text(json.dumps(Sweeps(1).run(1000)))
    outcome = CliRunner().invoke(
        cli, ["results", "compare", str(empty), "--history", str(folder), "--format", "json"]
    )
    assert outcome.exit_code == 1, outcome.output
    doc = json.loads(outcome.stdout)
    assert schema_errors("results-verdict", doc) == []
    assert doc["gate"]["passed"] is False and "nothing was measured" in doc["notes"][0]
    text = CliRunner().invoke(cli, ["results", "compare", str(empty), "--history", str(folder)])
    assert text.exit_code == 1 and "nothing was measured" in text.stderr


def _renamed(doc: dict, prefix: str) -> dict:
    for row in doc["rows"]:
        if row["identity"]["tp"] == 1:
            row["identity"]["model-prefix"] = prefix
    return doc


def test_a_dollar_in_a_config_name_is_drawn_as_text(tmp_path: Path) -> None:
    """A config name matplotlib read as math (`$\\foo^$`) crashed --plots with exit 3
    before the comment and the check run were written."""
    name = r"m0$\foo^$"
    folder = tmp_path / "history"
    folder.mkdir()
    sweeps = Sweeps(2, seed=4)
    for doc in sweeps.history(6):
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(_renamed(doc, name)))
    pr = _renamed(sweeps.run(9000, lambda i, c: 0.6 if i == 0 else 1.0), name)
    (tmp_path / "pr.json").write_text(json.dumps(pr))
    comment = tmp_path / "comment.md"
    outcome = CliRunner().invoke(
        cli,
        [*_compare(tmp_path, folder), "--plots", str(tmp_path / "plots"), "--out", str(comment)],
    )
    assert outcome.exit_code == 1, outcome.output  # the regression, not a crash
    assert comment.is_file() and "2 PNG(s)" in comment.read_text()
    assert len(list((tmp_path / "plots").glob("*.png"))) == 2


def test_a_plot_that_cannot_be_drawn_stops_nothing(tmp_path: Path) -> None:
    """One config's numbers matplotlib cannot draw (a throughput near the largest float:
    its axis limit overflows): the others are drawn, the comment says one was not, and the
    verdict and exit are the gate's."""
    folder = tmp_path / "history"
    folder.mkdir()
    sweeps = Sweeps(2, seed=4)
    for doc in sweeps.history(6):
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    pr = sweeps.run(9000)
    for row in pr["rows"]:
        if row["identity"]["tp"] == 1:
            row["metrics"]["tput_per_gpu"] = 1.7e308
    (tmp_path / "pr.json").write_text(json.dumps(pr))
    comment = tmp_path / "comment.md"
    outcome = CliRunner().invoke(
        cli,
        [*_compare(tmp_path, folder), "--plots", str(tmp_path / "plots"), "--out", str(comment)],
    )
    assert outcome.exit_code in (0, 1), outcome.output
    assert "plot not drawn" in outcome.stderr
    assert "1 PNG(s)" in comment.read_text() and "1 could not be drawn" in comment.read_text()


def test_a_nan_threshold_or_false_fail_rate_is_refused(repo: GitRepo, tmp_path: Path) -> None:
    """NaN compares false with every bound, so click's FloatRange took `--threshold nan`, and
    TOML's `false-fail = nan` passed the schema: either one passed a 40% regression."""
    mains, _ = _tables(tmp_path)
    folder = mains[0].parent
    for option in (("--threshold", "nan"), ("--false-fail", "NaN")):
        outcome = repo.infx(*_compare(tmp_path, folder), *option)
        assert outcome.exit_code == 2, outcome.output
        assert "is not a number" in outcome.stderr and "Traceback" not in outcome.output
    repo.write("infx.toml", 'repository = "o/r"\n[results]\nfalse-fail = nan\n')
    outcome = repo.infx(*_compare(tmp_path, folder))
    assert outcome.exit_code == 2, outcome.output
    assert "results.false-fail must be a finite number, not nan" in outcome.stderr
    repo.write("infx.toml", 'repository = "o/r"\n')
    assert repo.infx(*_compare(tmp_path, folder)).exit_code == 1


def test_a_run_id_env_that_is_not_a_number_is_no_run(repo: GitRepo, tmp_path: Path) -> None:
    """GITHUB_RUN_ID=² passed isdigit() and crashed int() (exit 3): it names no run."""
    mains, _ = _tables(tmp_path)
    outcome = repo.infx(*_compare(tmp_path, mains[0].parent), env={"GITHUB_RUN_ID": "\u00b2"})
    assert outcome.exit_code == 1, outcome.output


def test_a_run_id_env_in_another_script_s_digits_names_no_run(
    repo: GitRepo, tmp_path: Path
) -> None:
    """isdecimal() took GITHUB_RUN_ID=٣ (Arabic-Indic three) for run 3, which the comment
    then named; ASCII digits alone name a run."""
    mains, _ = _tables(tmp_path)
    (tmp_path / "mains").mkdir()
    for path in mains:
        path.rename(tmp_path / "mains" / path.name)
    comment = tmp_path / "comment.md"
    for run, named in (("3", True), ("\u0663", False)):
        args = [*_compare(tmp_path, tmp_path / "mains"), "--out", str(comment)]
        outcome = repo.infx(*args, env={"GITHUB_RUN_ID": run})
        assert outcome.exit_code == 1, outcome.output
        assert comment.exists(), outcome.output
        assert ("<!-- infx:run 3 -->" in comment.read_text()) is named, comment.read_text()[:300]
