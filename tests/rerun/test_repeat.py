"""Repeats that settle an unconfirmed verdict (issue #24 item 4): which rows of the source
run a `repeat` rerun measures again, and when a sweep's compare may dispatch one. Each
refusal is an input that would otherwise spend GPU time wrongly: the setting off, a fork,
an unchanged PR asking again and again, nothing unconfirmed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.errors import UsageError
from infx.matrix.options import PlanOptions
from infx.rerun.decide import checked_dispatch
from infx.rerun.repeat import repeat_dispatch, repeat_points, repeat_positions
from infx.rerun.rules import jobs_of, refusal, whole_plan
from infx.results.ingest.process import identity, recipe
from infx.settings import parse
from infx.sweep.record import RunRecord
from tests.rerun.test_rules import plan_of, run

REPO = "o/r"


def record(scope: str | None = None, depth: int = 0, repeats: int = 0) -> RunRecord:
    return RunRecord(5, "pull_request", "a" * 40, 17, "full-sweep-enabled", PlanOptions(),
                     True, False, False, 5, None, scope, depth, repeats)  # fmt: skip


def verdict_for(rows: list[dict]) -> dict:
    """A verdict document whose repeats name these matrix rows' points."""
    wanted = [{"identity": identity(dict(r), r["conc"]), "recipe": recipe(dict(r)), "count": 1}
              for r in rows]  # fmt: skip
    return {"repeats": {"rows": wanted, "count": len(wanted), "gpu_hours": 1.5}}


def test_the_repeat_scope_takes_the_rows_of_the_unconfirmed_points_only() -> None:
    plan = plan_of(concs=(4, 8, 16, 32))
    jobs = jobs_of(whole_plan(plan))
    rows = [row for row, _ in jobs]
    points = repeat_points(verdict_for([rows[1], rows[3]]))
    assert [jobs[i][0]["conc"] for i in repeat_positions(jobs, points)] == [8, 32]
    assert repeat_positions(jobs, repeat_points({"repeats": {"rows": []}})) == []
    assert repeat_positions(jobs, repeat_points({})) == []  # a verdict written before repeats


def test_a_repeat_record_counts_the_repeats_of_its_lineage() -> None:
    child = record().rerun(7, "b" * 40, "repeat")
    assert (child.scope, child.repeats, child.depth) == ("repeat", 1, 1)
    assert child.rerun(8, "b" * 40, "missing").repeats == 1
    again = RunRecord.from_json(json.loads(json.dumps(child.as_json())), "rerun.json")
    assert again == child
    old = {k: v for k, v in record().as_json().items() if k != "repeats"}
    assert RunRecord.from_json(old, "rerun.json").repeats == 0  # records written before


def _dispatch(**kw: object) -> dict | None:
    plan = plan_of(concs=(4, 8))
    rows = [row for row, _ in jobs_of(whole_plan(plan))]
    args: dict = {
        "verdict": verdict_for(rows[:1]), "record": record(), "confirm": 2,
        "run_id": 5, "pr": 17, "head_repo": REPO, "repo": REPO,
    }  # fmt: skip
    args.update(kw)
    return repeat_dispatch(**args)


def test_a_sweep_with_unconfirmed_configs_dispatches_one_repeat() -> None:
    found = _dispatch()
    assert found == {"rerun-of": "5", "scope": "repeat", "pr-number": "17"}
    assert checked_dispatch(json.dumps({"workflow": "run-sweep.yml", "ref": "f", "inputs": found}),
                            "run-sweep.yml")["inputs"]["scope"] == "repeat"  # fmt: skip


@pytest.mark.parametrize(
    "kw",
    [
        {"confirm": 0},  # the setting off changes nothing
        {"head_repo": "fork/r"},  # a fork's PR never dispatches
        {"head_repo": ""},
        {"pr": None},  # main's sweeps are not repeated
        {"verdict": {"repeats": {"rows": [], "count": 0, "gpu_hours": 0}}},
        {"verdict": {}},
        {"record": record("repeat", 2, repeats=2)},  # the limit: no endless repeats
        {"record": record("repeat", 9, repeats=1), "confirm": 5},  # near MAX_DEPTH
        {"record": None},
    ],
)
def test_no_repeat_is_dispatched_when(kw: dict) -> None:
    assert _dispatch(**kw) is None


def test_an_unchanged_pr_stops_after_the_setting_s_repeats() -> None:
    """Every repeat's compare may ask again (the verdict may stay unconfirmed): the lineage
    stops after `confirm` repeats, however often it is asked."""
    rec, dispatched = record(), 0
    for attempt in range(10):
        if _dispatch(record=rec, confirm=3) is None:
            break
        dispatched += 1
        rec = rec.rerun(100 + attempt, "b" * 40, "repeat")
    assert dispatched == 3


def test_a_repeat_rerun_is_refused_past_the_hard_cap_whoever_dispatches_it() -> None:
    why = refusal(run(), "run-sweep.yml", record("repeat", 5, repeats=5), [], [], scope="repeat")
    assert why is not None and "repeats" in why
    assert refusal(run(), "run-sweep.yml", record(), [], [], scope="repeat") is None


@pytest.mark.parametrize("value", [-1, 6, 1.5, True, "2"])
def test_confirm_repeats_is_bounded(value: object) -> None:
    with pytest.raises(UsageError):
        parse({"results": {"confirm-repeats": value}}, "infx.toml")


def test_confirm_repeats_is_off_by_default() -> None:
    assert parse({}, "infx.toml").results.confirm_repeats == 0
    assert parse({"results": {"confirm-repeats": 3}}, "infx.toml").results.confirm_repeats == 3


def test_the_plan_reads_the_verdict_beside_the_source_results(tmp_path: Path) -> None:
    from infx.rerun.repeat import read_verdict

    assert read_verdict(tmp_path) == {}
    (tmp_path / "verdict").mkdir()
    (tmp_path / "verdict" / "verdict.json").write_text('{"repeats": {"rows": []}}')
    assert read_verdict(tmp_path) == {"repeats": {"rows": []}}
    (tmp_path / "verdict" / "verdict.json").write_text("[")
    with pytest.raises(UsageError):
        read_verdict(tmp_path)


# --- end to end: compare writes the verdict, `infx sweep repeat` dispatches from it --------------

RUN = 4300
REPO_SLUG = "acme/bench"
ON = "[results]\nconfirm-repeats = 2\n"


def _verdict_file(tmp_path: Path) -> Path:
    """A real compare's verdict: one config 3 % down on 5 % noise, unconfirmed."""
    from click.testing import CliRunner

    from infx.cli import cli
    from tests.results.simulate import Sweeps

    sweeps = Sweeps(1, noise=0.05, seed=3)
    folder = tmp_path / "history"
    folder.mkdir()
    for d in sweeps.history(10):
        (folder / f"{d['run']['id']}.json").write_text(json.dumps(d))
    (tmp_path / "pr.json").write_text(json.dumps(sweeps.run(9000, lambda i, c: 0.97)))
    out = tmp_path / "verdict" / "verdict.json"
    done = CliRunner().invoke(cli, ["results", "compare", str(tmp_path / "pr.json"),
                                    "--history", str(folder), "--verdict-out", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    return out


def _repeat(api, tmp_path: Path, toml: str, rec: RunRecord | None, *extra: str,
            head_repo: str = REPO_SLUG):  # fmt: skip
    import os

    from click.testing import CliRunner

    from infx.cli import cli
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / f"checkout-{len(list(tmp_path.iterdir()))}")
    repo.commit("settings", **{"infx.toml": toml})
    record_file = tmp_path / "rerun.json"
    if rec is not None:
        record_file.write_text(json.dumps({**rec.as_json(), "run_id": RUN}))
    api.state.add_run(RUN, head_sha="a" * 40, minute=60, head_repo=head_repo)
    old = Path.cwd()
    os.chdir(repo.path)
    try:
        return CliRunner().invoke(cli, [
            "sweep", "repeat", "--verdict", str(tmp_path / "verdict" / "verdict.json"),
            "--record", str(record_file), "--pr", "17", "--ref", "feature",
            "--head-repo", REPO_SLUG, "--run-id", str(RUN), *extra,
        ], env={"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": REPO_SLUG})  # fmt: skip
    finally:
        os.chdir(old)


def test_compare_writes_a_verdict_from_which_a_repeat_is_dispatched(api, tmp_path: Path) -> None:
    from infx.schemas import errors as schema_errors

    verdict = json.loads(_verdict_file(tmp_path).read_text())
    assert schema_errors("results-verdict", verdict) == []
    assert verdict["repeats"]["rows"] and verdict["repeats"]["gpu_hours"] > 0
    done = _repeat(api, tmp_path, ON, record())
    assert done.exit_code == 0, done.output
    assert "repeat 1 of 2" in done.output and "GPU-hours" in done.output
    (sent,) = api.state.workflow_dispatches
    assert sent["ref"] == "feature"
    assert sent["inputs"] == {"rerun-of": str(RUN), "scope": "repeat", "pr-number": "17"}


def test_a_paired_repeat_names_both_halves_and_their_price(api, tmp_path: Path) -> None:
    """With `paired-repeats` on, the request names the pairs and prices main's half too."""
    verdict = json.loads(_verdict_file(tmp_path).read_text())
    hours, rows = verdict["repeats"]["gpu_hours"], len(verdict["repeats"]["rows"])
    done = _repeat(api, tmp_path, ON + "paired-repeats = true\n", record())
    assert done.exit_code == 0, done.output
    assert "repeat 1 of 2, paired" in done.output
    assert f"{2 * rows} jobs at most" in done.output
    assert f"about {round(2 * hours, 3)} GPU-hours per repeat with both halves" in done.output
    assert len(api.state.workflow_dispatches) == 1


@pytest.mark.parametrize(
    ("toml", "rec", "says"),
    [
        ("", record(), "confirm-repeats is off"),  # the setting off changes nothing
        (ON, record("repeat", 2, repeats=2), "already ran 2 of 2 repeats"),
        (ON, None, "no rerun record"),
    ],
)
def test_no_dispatch_when_the_setting_is_off_or_the_limit_is_reached(
    api, tmp_path: Path, toml: str, rec: RunRecord | None, says: str
) -> None:
    _verdict_file(tmp_path)
    done = _repeat(api, tmp_path, toml, rec)
    assert done.exit_code == 0 and says in done.output, done.output
    assert api.state.workflow_dispatches == []


def test_a_fork_s_run_is_never_repeated_whatever_it_claims(api, tmp_path: Path) -> None:
    """The run's own head repository, as the API has it, decides: a fork's run claiming
    this repository as its head is refused by the dispatch's own check."""
    _verdict_file(tmp_path)
    done = _repeat(api, tmp_path, ON, record(), head_repo="mallory/bench")
    assert done.exit_code == 2 and "mallory/bench" in done.output, done.output
    assert api.state.workflow_dispatches == []


def test_no_verdict_means_no_repeat(api, tmp_path: Path) -> None:
    done = _repeat(api, tmp_path, ON, record())
    assert done.exit_code == 0 and "no config is unconfirmed" in done.output, done.output
    assert api.state.workflow_dispatches == []
