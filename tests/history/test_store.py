"""The history database through its Python interface (`infx.history`), on SQLite and on a real
PostgreSQL server: what ingest stores, what main_runs gives back, and what never happens (a
point twice, half a run, a table of another commit under a run's id)."""

from __future__ import annotations

import copy
import json
import time
from datetime import datetime, timedelta

import pytest

from infx.errors import HistoryError, ResultsError
from infx.history import History, IngestReport, open_history
from infx.results.ingest.process import result_errors
from tests.history.tables import curve, identity, mixed, points, sql, table


def stored(url: str, **query) -> list[dict]:
    with open_history(url) as history:
        return history.main_runs(**query)


def test_a_run_comes_back_as_it_went_in(history_url: str) -> None:
    doc = table(5000, mixed(1000), minute=30)
    with open_history(history_url) as history:
        assert isinstance(history, History)
        report = history.ingest(doc)
    assert isinstance(report, IngestReport)
    assert (report.run_id, report.attempt, report.added, report.replaced) == (5000, 1, 9, 0)
    (back,) = stored(history_url)
    assert result_errors(back) == []
    assert back["format"] == "infx-results/1"
    assert back["run"] == doc["run"]
    assert points(back) == points(doc)


def test_the_same_run_twice_changes_nothing(history_url: str) -> None:
    doc = table(5000, mixed(1000))
    with open_history(history_url) as history:
        history.ingest(doc)
        again = history.ingest(copy.deepcopy(doc))
    assert (again.added, again.replaced, again.unchanged, again.kept) == (0, 0, 9, 0)
    assert not again.changed
    (back,) = stored(history_url)
    assert len(back["rows"]) == 9 and points(back) == points(doc)


def test_attempts_of_one_run_never_duplicate_a_point(history_url: str) -> None:
    first = table(5000, curve(1000, concs=(4, 8)), attempt=1)
    # A re-run: conc 8 measured again (faster), conc 16 added, conc 4 not in this table.
    second = table(5000, curve(1200, concs=(8, 16)), attempt=2)
    with open_history(history_url) as history:
        history.ingest(first)
        report = history.ingest(second)
        assert (report.added, report.replaced, report.unchanged) == (1, 1, 0)
        late = history.ingest(copy.deepcopy(first))  # attempt 1's table arrives last
        assert (late.added, late.replaced, late.unchanged, late.kept) == (0, 0, 1, 1)
        assert not late.changed
    (back,) = stored(history_url)
    tput = {r["identity"]["conc"]: r["metrics"]["tput_per_gpu"] for r in back["rows"]}
    assert tput == {4: 1000, 8: 1200, 16: 1200}
    assert back["run"]["attempt"] == 2


def test_main_runs_are_the_newest_oldest_first(history_url: str) -> None:
    with open_history(history_url) as history:
        # Ingested out of order; created_at decides, then the run id.
        for run_id, minute in ((5003, 30), (5001, 10), (5004, 40), (5002, 20), (5000, 0)):
            history.ingest(table(run_id, curve(1000 + run_id % 10), minute=minute))
        history.ingest(table(4999, curve(999), minute=40))
        newest = history.main_runs(limit=3)
        assert [d["run"]["id"] for d in newest] == [5003, 4999, 5004]
        assert [d["run"]["id"] for d in history.main_runs()] == [
            5000,
            5001,
            5002,
            5003,
            4999,
            5004,
        ]
        assert history.main_runs(limit=0) == []


def test_main_runs_of_some_configs(history_url: str) -> None:
    tp4, tp8 = curve(1000), curve(2000, tp=8)
    with open_history(history_url) as history:
        history.ingest(table(5000, tp4 + tp8, minute=0))
        history.ingest(table(5001, tp8, minute=10))
        history.ingest(table(5002, tp4, minute=20))
        history.ingest(table(5003, curve(500, tp=2), minute=30))
        wanted = [identity(tp4[0])]
        found = history.main_runs(configs=wanted)
        assert [d["run"]["id"] for d in found] == [5000, 5002]
        assert all(identity(r) == wanted[0] for d in found for r in d["rows"])
        assert [len(d["rows"]) for d in found] == [3, 3]
        # The limit counts runs holding the configs, not every run.
        assert [d["run"]["id"] for d in history.main_runs(limit=1, configs=wanted)] == [5002]
        with_conc = [{**identity(tp8[0]), "conc": 4}]
        assert [d["run"]["id"] for d in history.main_runs(configs=with_conc)] == [5000, 5001]
        assert history.main_runs(configs=[]) == []
        assert history.main_runs(configs=[{**wanted[0], "tp": 3}]) == []


def test_an_empty_history_has_no_runs(history_url: str) -> None:
    assert stored(history_url) == []


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda d: d.pop("run"), "names no run"),
        (lambda d: d["run"].pop("id"), "names no run"),
        (lambda d: d["run"].pop("sha"), "no commit"),
        (lambda d: d["rows"][3]["metrics"].__setitem__("tput_per_gpu", -1), "rows.3.metrics"),
        (lambda d: d["rows"][4]["metrics"].__setitem__("mean_ttft", float("nan")), "not finite"),
        (lambda d: d["rows"].append(copy.deepcopy(d["rows"][2])), "twice"),
        (lambda d: d.__setitem__("format", "infx-results/2"), "format"),
    ],
)
def test_bad_input_stores_nothing(history_url: str, spoil, message: str) -> None:
    with open_history(history_url) as history:
        history.ingest(table(4999, curve(900)))
        doc = table(5000, mixed(1000))
        spoil(doc)
        with pytest.raises(ResultsError, match=message):
            history.ingest(doc)
        assert [d["run"]["id"] for d in history.main_runs()] == [4999]


def test_a_run_id_keeps_its_commit(history_url: str) -> None:
    with open_history(history_url) as history:
        history.ingest(table(5000, curve(1000)))
        forged = table(5000, curve(5000, concs=(4, 8, 16, 32)), sha="f" * 40, attempt=2)
        with pytest.raises(ResultsError, match=r"run 5000 is stored with commit 0{36}1388"):
            history.ingest(forged)
        (back,) = history.main_runs()
    assert back["run"]["sha"] == f"{5000:040x}" and len(back["rows"]) == 3
    assert {r["metrics"]["tput_per_gpu"] for r in back["rows"]} == {1000}


def test_a_failure_half_way_leaves_no_trace(history_url: str) -> None:
    """The database itself refuses one point of a new run (a trigger): the run, its new
    configs and the points written before it are all rolled back."""
    with open_history(history_url) as history:
        history.ingest(table(4999, curve(900)))
    dialect = history_url.split(":", 1)[0]
    statements = {
        "sqlite": [
            "CREATE TRIGGER refuse BEFORE INSERT ON points WHEN NEW.conc = 64 "
            "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        ],
        "postgresql": [
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
            "IF NEW.conc = 64 THEN RAISE EXCEPTION 'disk on fire'; END IF; "
            "RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse BEFORE INSERT ON points FOR EACH ROW EXECUTE FUNCTION refuse()",
        ],
    }
    with open_history(history_url) as history:
        history.ingest(table(4999, curve(900)))
    for statement in statements[dialect]:
        sql(history_url, statement)
    with open_history(history_url) as history:
        with pytest.raises(HistoryError, match="disk on fire"):
            history.ingest(table(5000, mixed(1000)))
        assert [d["run"]["id"] for d in history.main_runs()] == [4999]
        assert history.main_runs(configs=[identity(mixed(1)[3])]) == []
    assert sql(history_url, "SELECT count(*) FROM configs") == [(1,)]
    assert sql(history_url, "SELECT count(*) FROM points") == [(3,)]


def test_each_stored_table_is_valid_and_sorted(history_url: str) -> None:
    with open_history(history_url) as history:
        history.ingest(table(5000, list(reversed(mixed(1000)))))
        (back,) = history.main_runs()
    keys = [
        (r["kind"], json.dumps(identity(r), sort_keys=True), r["identity"]["conc"])
        for r in back["rows"]
    ]
    assert keys == sorted(keys) and result_errors(back) == []


def test_a_table_without_its_creation_time_keeps_its_place(history_url: str) -> None:
    """`collect` writes no created_at; an ingest without the API stamps the run when it is
    first stored. Storing it again (the same table, or a later attempt of the run, after a
    newer run) must neither change anything nor make it main's newest run."""
    first = table(5000, curve(1000))
    first["run"].pop("created_at")
    with open_history(history_url) as history:
        history.ingest(copy.deepcopy(first))
        (stamped,) = history.main_runs()
        when = datetime.fromisoformat(stamped["run"]["created_at"].replace("Z", "+00:00"))
        newer = table(5001, curve(1000))
        newer["run"]["created_at"] = (when + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        history.ingest(newer)
        time.sleep(2.2)  # the clock passes the newer run's creation
        again = history.ingest(copy.deepcopy(first))
        assert not again.changed
        later = copy.deepcopy(first)
        later["run"]["attempt"] = 2
        history.ingest(later)
        runs = history.main_runs()
    assert [d["run"]["id"] for d in runs] == [5000, 5001]
    assert runs[0]["run"]["attempt"] == 2


def _twins(tput: float, images: tuple[str, str] = ("vllm:a", "vllm:b"), keyed: bool = True):
    """Config tp4 measured twice in one run: by two master configs (another image each)."""
    rows = []
    for name, image in zip(("llama-a", "llama-b"), images, strict=True):
        for row in copy.deepcopy(curve(tput)):
            row["recipe"]["image"] = image
            if keyed:
                row["recipe"]["config-key"] = name
            rows.append(row)
            tput += 1
    return rows


@pytest.mark.parametrize("keyed", [True, False])
def test_two_configs_measuring_one_identity_are_both_stored(history_url: str, keyed: bool) -> None:
    """InferenceX's master configs hold 39 points two configs measure (image and config
    name are not part of the identity): the whole table was refused, and main's run never
    entered the history. Rows naming their master config are told apart by it, rows from
    before that by image."""
    doc = table(5000, _twins(1000, keyed=keyed))
    with open_history(history_url) as history:
        report = history.ingest(doc)
        assert (report.added, report.replaced) == (6, 0)
        again = history.ingest(copy.deepcopy(doc))
        assert (again.added, again.unchanged) == (0, 6)
        (back,) = history.main_runs(configs=[identity(doc["rows"][0])])
    assert sorted(
        (r["recipe"]["image"], r["identity"]["conc"], r["metrics"]["tput_per_gpu"])
        for r in back["rows"]
    ) == sorted(
        (r["recipe"]["image"], r["identity"]["conc"], r["metrics"]["tput_per_gpu"])
        for r in doc["rows"]
    )


def test_the_same_point_twice_with_the_same_config_and_image_is_still_refused(
    history_url: str,
) -> None:
    doc = table(5000, _twins(1000, images=("vllm:a", "vllm:a"), keyed=False))
    for row in doc["rows"]:
        row["recipe"].pop("recipe-fingerprint", None)
    with open_history(history_url) as history, pytest.raises(ResultsError, match="twice"):
        history.ingest(doc)


def test_a_corrected_table_of_the_same_attempt_removes_what_it_no_longer_holds(
    history_url: str,
) -> None:
    """A bogus point stored with a run could not be removed by storing the corrected table
    of the same run and attempt, and nothing said so: every later pull request of that
    config read coverage lost. The attempt's points are replaced, what went is named, and
    an older attempt's points stay."""
    first = table(5000, curve(1000, concs=(4, 8)), attempt=1)
    bogus = table(5000, curve(1200, concs=(8, 16, 64)), attempt=2)
    corrected = table(5000, curve(1200, concs=(8, 16)), attempt=2)
    with open_history(history_url) as history:
        history.ingest(first)
        history.ingest(bogus)
        report = history.ingest(corrected)
        assert report.changed and len(report.removed) == 1
        assert "conc 64" in report.removed[0] and "1 removed" in report.describe()
        (back,) = history.main_runs()
    assert sorted(r["identity"]["conc"] for r in back["rows"]) == [4, 8, 16]
