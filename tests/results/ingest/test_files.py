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
