"""Reading a results table: a NaN or an infinity anywhere in it is refused, wherever the
schema leaves numbers free, since a verdict on them is meaningless; a table that spells
none is taken as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.errors import ResultsError
from infx.results.ingest.files import load_results
from tests.history.tables import mixed, table


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "results.json"
    path.write_text(text)
    return path


def test_a_finite_table_loads_as_written(tmp_path: Path) -> None:
    doc = table(5000, mixed(1000))
    assert load_results(_written(tmp_path, json.dumps(doc))) == doc


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("metric", ["p99_ttft", "mean_itl"])
def test_a_table_spelling_nan_or_infinity_is_refused_naming_where(
    tmp_path: Path, constant: str, metric: str
) -> None:
    """The schema takes any number as a metric (a NaN compares false to every bound), so
    the reader must see these itself."""
    doc = table(5000, mixed(1000))
    doc["rows"][1]["metrics"][metric] = "@"
    text = json.dumps(doc).replace('"@"', constant)
    wanted = rf"results\.json: not an infx results file: rows\.1\.metrics\.{metric}: "
    with pytest.raises(ResultsError, match=wanted):
        load_results(_written(tmp_path, text))


@pytest.mark.parametrize("digits", [309, 401, 5001])
@pytest.mark.parametrize("where", ["metrics", "identity"])
def test_an_integer_no_float_holds_is_refused(tmp_path: Path, digits: int, where: str) -> None:
    """JSON integers have no bound: 10**400 as a metric or a concurrency crashed compare,
    ingest, collect and site build with an OverflowError (exit 3), and 5,000 digits with
    int()'s digit limit; both are refused, naming the file."""
    doc = table(5000, mixed(1000))
    key = "p99_ttft" if where == "metrics" else "conc"
    doc["rows"][1][where][key] = "@"
    text = json.dumps(doc).replace('"@"', "9" * digits)
    wanted = rf"results\.json: a number of {digits} digits is out of range"
    with pytest.raises(ResultsError, match=wanted):
        load_results(_written(tmp_path, text))


def test_the_largest_integers_a_float_holds_still_load(tmp_path: Path) -> None:
    doc = table(5000, mixed(1000))
    doc["rows"][1]["metrics"]["p99_ttft"] = int(1.7e308)
    doc["rows"][1]["metrics"]["mean_itl"] = -(10**307)  # refused by the schema, not the reader
    path = _written(tmp_path, json.dumps(doc))
    with pytest.raises(ResultsError, match=r"mean_itl: .* is less than the minimum of 0"):
        load_results(path)
    del doc["rows"][1]["metrics"]["mean_itl"]
    assert load_results(_written(tmp_path, json.dumps(doc))) == doc


@pytest.mark.parametrize(
    ("where", "key"),
    [("run", "id"), ("run", "attempt"), ("identity", "conc"), ("metrics", "completed")],
)
def test_an_integer_past_sqlites_is_refused_by_the_schema(
    tmp_path: Path, where: str, key: str
) -> None:
    """A run id, attempt or concurrency of 2**63 passed the schema and crashed `ingest`
    (SQLite's INTEGER: OverflowError, exit 3) and a history folder's `compare` (C long)."""
    doc = table(5000, mixed(1000))
    place = doc["run"] if where == "run" else doc["rows"][1][where]
    place[key] = 2**63 - 1
    assert load_results(_written(tmp_path, json.dumps(doc))) == doc
    place[key] = 2**63
    with pytest.raises(ResultsError, match=rf"{key}: {2**63} is greater than the maximum"):
        load_results(_written(tmp_path, json.dumps(doc)))


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "empty file, not JSON"),
        (b" \n", "empty file, not JSON"),
        (b"\x89PNG\r\n\x1a\n\xac\x00\xff", "not JSON: not UTF-8 text (byte 0)"),
        (b'{"format": ', "not JSON: Expecting value at line 1"),
    ],
)
@pytest.mark.parametrize("command", ["collect", "compare", "ingest", "previous"])
def test_a_results_file_that_is_not_json_is_bad_input(
    tmp_path: Path, content: bytes, said: str, command: str
) -> None:
    """An empty table exited 1 ("not JSON", a broken rule) while binary junk exited 2:
    both are a file that is no results table, exit 2, one line naming it."""
    from click.testing import CliRunner

    from infx.cli import cli

    bad = tmp_path / "results.json"
    bad.write_bytes(content)
    out = tmp_path / "out"
    extend = ["--previous", str(bad), "--out-dir", str(out)]
    args = {
        "collect": ["results", "collect", str(bad), "--out-dir", str(out)],
        "compare": ["results", "compare", str(bad), "--baseline", str(bad), "--out", str(out)],
        "ingest": ["results", "ingest", str(bad), "--history", str(out)],
        "previous": ["results", "collect", str(tmp_path), *extend],
    }[command]
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 2, outcome.output
    assert outcome.output == f"infx: error: {bad}: {said}\n"
    assert not out.exists()


def test_a_long_value_in_a_table_is_cut_short_in_the_message(tmp_path: Path) -> None:
    """A message quoting a 5,000-character value buries the field it names."""
    doc = table(5000, mixed(1000))
    doc["rows"][1]["identity"]["conc"] = "x" * 5000
    wanted = r"rows\.1\.identity\.conc: 'x{56}\.\.\. is not of type 'integer'$"
    with pytest.raises(ResultsError, match=wanted):
        load_results(_written(tmp_path, json.dumps(doc)))
