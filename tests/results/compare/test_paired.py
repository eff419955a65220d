"""`compare --baseline-repeat`: this PR's runs judged against runs of main's image measured
beside them (same runner, same session), as paired differences: a slow session slows both
and cancels; a change of the PR does not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.results.simulate import Runs

CONFIGS = 6
SESSION = float(np.log(0.93))  # this session ran 7 % slow, for main's image and the PR alike


def _tables(tmp_path: Path, seed: int, change: float) -> tuple[Path, list[Path], list[Path]]:
    """(main's history folder, this PR's 3 tables, main's 3 tables beside them)."""
    runs = Runs(CONFIGS, noise=0.02, seed=seed)
    folder = tmp_path / "history"
    folder.mkdir()
    for doc in runs.history(20):
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    effect = np.zeros((CONFIGS, 8, 5))
    effect[0] = np.log(change) * np.array([1.0, -1.0, -1.0, -1.0, -1.0])
    mine, theirs = [], []
    for side, tables in (("pr", runs.pr(3, effect, SESSION)), ("main", runs.pr(3, None, SESSION))):
        for r, table in enumerate(tables):
            if side == "main":  # main's image, measured beside this PR's run r
                table["run"].update(id=9500 + r, sha="b" * 40)
            path = tmp_path / f"{side}{r}.json"
            path.write_text(json.dumps(table))
            (mine if side == "pr" else theirs).append(path)
    return folder, mine, theirs


def _compare(folder: Path, mine: list[Path], theirs: list[Path], *extra: str) -> tuple[int, dict]:
    args = ["results", "compare", str(mine[0])]
    args += [a for p in mine[1:] for a in ("--repeat", str(p))]
    args += [a for p in theirs for a in ("--baseline-repeat", str(p))]
    done = CliRunner().invoke(cli, [*args, "--history", str(folder), "--format", "json", *extra])
    assert done.exit_code in (0, 1), done.output
    doc, _ = json.JSONDecoder().raw_decode(done.output[done.output.index("{") :])
    return done.exit_code, doc


def test_a_slow_session_cancels_in_pairs_and_fails_unpaired(tmp_path: Path) -> None:
    folder, mine, theirs = _tables(tmp_path, seed=11, change=1.0)
    code, doc = _compare(folder, mine, [])
    assert code == 1, "unpaired, the session's 7 % reads as a regression"
    code, doc = _compare(folder, mine, theirs)
    assert code == 0, [(c["label"], c["verdict"]) for c in doc["configs"]]
    assert any("paired: this PR's 3 run(s) against 3 run(s)" in n for n in doc["notes"])
    check = doc["configs"][0]["points"][0]["checks"][0]
    assert abs(check["change_pct"]) < 5  # against main's image beside it, not its history


def test_a_change_of_the_pr_shows_in_pairs(tmp_path: Path) -> None:
    folder, mine, theirs = _tables(tmp_path, seed=12, change=0.92)
    code, doc = _compare(folder, mine, theirs)
    assert code == 1
    regressed = [c for c in doc["configs"] if c["verdict"] == "regressed"]
    assert [c["identity"]["tp"] for c in regressed] == [1]


def test_pairs_must_match_and_never_repeat_a_run(tmp_path: Path) -> None:
    folder, mine, theirs = _tables(tmp_path, seed=13, change=1.0)
    args = ["results", "compare", str(mine[0]), "--repeat", str(mine[1]), "--history", str(folder)]
    three = [a for p in theirs for a in ("--baseline-repeat", str(p))]
    done = CliRunner().invoke(cli, [*args, *three])
    assert done.exit_code == 2 and "3 table(s) for 2 run(s) of this PR" in done.output
    twice = ["--baseline-repeat", str(theirs[0])] * 2
    done = CliRunner().invoke(cli, [*args, *twice])
    assert done.exit_code == 2 and "are one run" in done.output


def _paired_repeat(tmp_path: Path, seed: int, change: float) -> tuple[Path, list[str]]:
    """A PR sweep measured in an ordinary session, then a paired repeat of 2 of its configs
    in a slow one: the repeat's halves share its run id (one workflow run, two images)."""
    runs = Runs(CONFIGS, noise=0.02, seed=seed)
    folder = tmp_path / "history"
    folder.mkdir()
    for doc in runs.history(20):
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    (sweep,) = runs.pr(1)
    effect = np.zeros((CONFIGS, 8, 5))
    effect[0] = np.log(change) * np.array([1.0, -1.0, -1.0, -1.0, -1.0])
    (mine,) = runs.pr(1, effect, SESSION)
    (theirs,) = runs.pr(1, None, SESSION)
    per_config = len(sweep["rows"]) // CONFIGS
    paths = []
    for name, table in (("sweep", sweep), ("pr-half", mine), ("main-half", theirs)):
        if name != "sweep":
            table["rows"] = table["rows"][: 2 * per_config]
            table["run"]["id"] = 9600
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(table))
        paths.append(str(path))
    return folder, paths


def _paired_compare(folder: Path, paths: list[str]) -> tuple[int, dict]:
    sweep, pr_half, main_half = paths
    args = ["results", "compare", sweep, "--repeat", pr_half, "--baseline-repeat", main_half]
    done = CliRunner().invoke(cli, [*args, "--history", str(folder), "--format", "json"])
    assert done.exit_code in (0, 1), done.output
    doc, _ = json.JSONDecoder().raw_decode(done.output[done.output.index("{") :])
    return done.exit_code, doc


def test_a_paired_repeat_judges_its_configs_on_pairs_and_leaves_the_rest_alone(
    tmp_path: Path,
) -> None:
    folder, paths = _paired_repeat(tmp_path, seed=21, change=1.0)
    code, doc = _paired_compare(folder, paths)
    assert code == 0, [(c["label"], c["verdict"]) for c in doc["configs"]]
    assert doc["configs_by_verdict"]["coverage-lost"] == 0
    assert len(doc["configs"]) == CONFIGS
    assert any("for 2 config(s)" in n for n in doc["notes"]), doc["notes"]
    assert doc["repeats"]["pairs"] == {"runs": 1, "configs": 2}
    done = CliRunner().invoke(
        cli,
        ["results", "compare", paths[0], "--repeat", paths[1], "--baseline-repeat", paths[2],
         "--history", str(folder), "--format", "text"],
    )  # fmt: skip
    assert "Paired: 2 config(s) judged on 1 pair(s) of runs" in done.output, done.output


def test_a_paired_repeat_catches_the_pr_s_own_change(tmp_path: Path) -> None:
    folder, paths = _paired_repeat(tmp_path, seed=22, change=0.9)
    code, doc = _paired_compare(folder, paths)
    assert code == 1
    regressed = [c["identity"]["tp"] for c in doc["configs"] if c["verdict"] == "regressed"]
    assert regressed == [1]


def test_paired_and_unpaired_configs_share_one_false_fail_rate(tmp_path: Path) -> None:
    """The paired configs and the others are judged in two passes: each at its share of the
    rate by configs, so the verdict as a whole runs at the rate the settings name (5 %),
    not at twice it."""
    folder, paths = _paired_repeat(tmp_path, seed=21, change=1.0)
    _, doc = _paired_compare(folder, paths)
    assert doc["repeats"]["pairs"]["configs"] == 2 and len(doc["configs"]) == CONFIGS
    assert doc["method"]["alpha_held"] == doc["method"]["alpha"] == 0.05
    # each config's own level: the rate over all six configs, as one pass would give it
    levels = [c["alpha"] for c in doc["configs"]]
    assert levels == pytest.approx([0.05 / CONFIGS] * CONFIGS), levels
