"""The history window is per config: the newest N main runs that hold this config. It was
"the newest N main runs holding any of these configs": a config swept beside a more often
swept one got no history run, read "new", and a -30 % drop passed with exit 0 (broad pull
requests, image bumps, were judged least)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.history import open_history
from infx.history.windows import families_of, per_config
from infx.results.verdict.words import REGRESSED
from tests.history.tables import curve, identity, table
from tests.results.simulate import Sweeps

WINDOW = ("--history-runs", "10", "--format", "json")


def _main(runs: int = 20) -> list[dict]:
    """Config 0 swept by every main run, config 1 by runs 0, 5, 10 and 15 only (beside it)."""
    sweeps = Sweeps(2, seed=3)
    docs = []
    for r in range(runs):
        doc = sweeps.run(1000 + r, keep=lambda i, c, r=r: i == 0 or r % 5 == 0)
        doc["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
        docs.append(doc)
    return docs


def _pr(sweeps_seed: int = 11) -> dict:
    """Both configs; config 1 30 % slower."""
    pr = Sweeps(2, seed=sweeps_seed).run(9000, lambda i, c: 0.7 if i == 1 else 1.0)
    pr["run"]["ref"] = "refs/pull/7/merge"
    return pr


def test_each_config_gets_its_own_window(history_url: str) -> None:
    docs = _main()
    with open_history(history_url) as history:
        for doc in docs:
            history.ingest(doc)
        wanted = [identity(r) for r in _pr()["rows"]]
        found = history.main_runs(limit=10, configs=wanted)
    held = {
        tp: [d["run"]["id"] for d in found if any(r["identity"]["tp"] == tp for r in d["rows"])]
        for tp in (1, 2)
    }
    assert held[1] == list(range(1010, 1020))
    assert held[2] == [1000, 1005, 1010, 1015]
    # Run 1000 holds only config 1's rows: config 0's window does not reach it.
    oldest = found[0]
    assert oldest["run"]["id"] == 1000 and {r["identity"]["tp"] for r in oldest["rows"]} == {2}


def test_the_window_is_read_in_one_query(history_url: str) -> None:
    """One window function over all configs, not a query per config."""
    from sqlalchemy import event

    with open_history(history_url) as history:
        for doc in _main(6):
            history.ingest(doc)
        statements: list[str] = []
        event.listen(
            history._engine,  # counting the statements the read sends
            "before_cursor_execute",
            lambda *args: statements.append(args[2]),
        )
        history.main_runs(limit=3, configs=[identity(r) for r in _pr()["rows"]])
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert sum("row_number" in s.lower() for s in selects) == 1
    assert len(selects) <= 3, selects  # configs, the windows, their runs


def test_a_config_swept_less_often_is_judged_through_the_database(tmp_path: Path) -> None:
    database = tmp_path / "history.sqlite"
    for r, doc in enumerate(_main()):
        path = tmp_path / f"main{r}.json"
        path.write_text(json.dumps(doc))
        stored = CliRunner().invoke(
            cli, ["results", "ingest", str(path), "--history", str(database)]
        )
        assert stored.exit_code == 0, stored.output
    (tmp_path / "pr.json").write_text(json.dumps(_pr()))
    outcome = CliRunner().invoke(
        cli,
        ["results", "compare", str(tmp_path / "pr.json"), "--history", str(database), *WINDOW],
    )
    assert outcome.exit_code == 1, outcome.output
    verdicts = {c["identity"]["tp"]: c for c in json.loads(outcome.stdout)["configs"]}
    assert verdicts[2]["verdict"] == REGRESSED and verdicts[2]["history_runs"] == 4
    assert verdicts[1]["history_runs"] == 10


def test_the_same_rule_for_a_folder_of_tables(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    for doc in _main():
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    (tmp_path / "pr.json").write_text(json.dumps(_pr()))
    outcome = CliRunner().invoke(
        cli,
        ["results", "compare", str(tmp_path / "pr.json"), "--history", str(folder), *WINDOW],
    )
    assert outcome.exit_code == 1, outcome.output
    verdicts = {c["identity"]["tp"]: c for c in json.loads(outcome.stdout)["configs"]}
    assert verdicts[2]["verdict"] == REGRESSED and verdicts[2]["history_runs"] == 4
    assert verdicts[1]["history_runs"] == 10


def test_per_config_keeps_family_siblings_and_drops_other_configs() -> None:
    mine, sibling, other = curve(1000), curve(1000, tp=8), curve(1000, concs=(4,))
    for row in other:
        row["identity"]["model"] = "another/model"
    docs = [table(5000 + i, mine + sibling + other, minute=i) for i in range(4)]
    cut = per_config(docs, families_of(mine), 2)
    assert [d["run"]["id"] for d in cut] == [5002, 5003]
    assert all(
        {r["identity"]["model"] for r in d["rows"]} == {mine[0]["identity"]["model"]} for d in cut
    )
    assert all(len(d["rows"]) == 6 for d in cut)
