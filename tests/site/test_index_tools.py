"""The overview's tools, in a browser: facet filters kept in the URL, stale configs marked,
and a CSV link on every table whose download holds the rows the table shows."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.site.shape import data_file
from tests.site.conftest import CHROMIUM, Browser

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

HEAD = '(window.INFX_DATA=window.INFX_DATA||{})["index"]='


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, changed_history: Path) -> Path:
    built = tmp_path_factory.mktemp("tools") / "site"
    outcome = CliRunner().invoke(
        cli, ["site", "build", "--history", str(changed_history), "--out", str(built)]
    )
    assert outcome.exit_code == 0, outcome.output
    return built


def edited(site: Path, to: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the site whose index document `change` edited."""
    copy = to / "site"
    shutil.copytree(site, copy)
    path = copy / "data" / "index.js"
    text = path.read_text()
    assert text.startswith(HEAD)
    doc = json.loads(text[len(HEAD) :].rstrip().rstrip(";"))
    change(doc)
    path.write_bytes(data_file("index", doc))
    return copy


def _two_hardwares(doc: dict[str, Any]) -> None:
    doc["facets"]["hardware"] = ["h200", "mi355x"]
    doc["configs"][1]["f"][0] = 1


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_a_filter_hides_the_configs_it_does_not_match_and_the_link_keeps_it(
    who: str, request: pytest.FixtureRequest, site: Path, tmp_path: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    copy = edited(site, tmp_path, _two_hardwares)
    page = reader.open(copy, "")
    rows = "#configs tbody tr:visible"
    assert page.locator(rows).count() == 2
    page.select_option("#f-hw", "mi355x")
    assert page.locator(rows).count() == 1
    second = page.evaluate("window.INFX_DATA.index.configs[1].label")
    assert page.locator(rows).first.inner_text().startswith(second)
    assert page.evaluate("location.hash") == "#/?hw=mi355x"
    assert page.locator("#shown-count").inner_text() == "1 of 2 config(s) shown."
    page.close()
    # The link opens the overview filtered.
    page = reader.open(copy, "#/?hw=h200&fw=vllm")
    assert page.locator("#f-hw").input_value() == "h200"
    assert page.locator("#f-fw").input_value() == "vllm"
    assert page.locator(rows).count() == 1
    page.select_option("#f-prec", "bf16")
    assert page.locator(rows).count() == 1
    page.select_option("#f-hw", "")
    assert page.locator(rows).count() == 2
    page.close()
    assert reader.errors == []


def _first_is_old(doc: dict[str, Any]) -> None:
    doc["configs"][0]["last"] = len(doc["runs"]) - 1 - doc["stale_after"]


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_a_config_none_of_the_newest_runs_measured_is_stale(
    who: str, request: pytest.FixtureRequest, site: Path, tmp_path: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    copy = edited(site, tmp_path, _first_is_old)
    page = reader.open(copy, "")
    index = page.evaluate("window.INFX_DATA.index")
    assert index["stale_after"] == 10
    old = index["runs"][index["configs"][0]["last"]][2][:10]  # [id, sha, date, url, reused]
    first, second = page.locator("#configs tbody tr").all()
    assert "stale" in (first.get_attribute("class") or "")
    assert f"last measured 10 run(s) ago, {old}" in first.inner_text()
    assert "stale" not in second.inner_text()
    page.close()
    # The built site itself: every config measured by the newest run, none stale.
    page = reader.open(site, "")
    assert page.locator("#configs tbody tr.stale").count() == 0
    page.close()
    assert reader.errors == []


def test_the_built_index_holds_each_configs_facets_and_last_run(site: Path) -> None:
    text = (site / "data" / "index.js").read_text()
    doc = json.loads(text[len(HEAD) :].rstrip().rstrip(";"))
    newest = len(doc["runs"]) - 1
    assert all(c["last"] == newest for c in doc["configs"])  # how far behind: from "last"
    assert all(c["f"] == [0, 0, 0] for c in doc["configs"])
    assert doc["facets"] == {"hardware": ["h200"], "framework": ["vllm"], "precision": ["bf16"]}


def test_every_table_has_a_csv_link_with_its_shown_rows(browser: Browser, site: Path) -> None:
    page = browser.open(site, "")
    assert page.locator("table.data").count() == page.locator("table.data caption a.csv").count()
    page.fill("#config-filter", "l05b")
    with page.expect_download() as download:
        page.locator("#configs caption a.csv").click()
    name = download.value.suggested_filename
    text = Path(download.value.path()).read_bytes().decode()
    assert name == "every-config-in-main-s-history.csv"
    lines = text.split("\r\n")
    assert lines[0] == "Config,Kind,Last measured,Steps"
    assert len(lines) == 3 and lines[2] == ""  # the header, the one row shown, the end
    label = page.evaluate("window.INFX_DATA.index.configs[0].label")
    assert lines[1].startswith(label.replace('"', '""')) or lines[1].startswith(f'"{label}')
    assert lines[1].split(",")[-1].isdigit()
    page.close()
    assert browser.errors == []


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_the_history_charts_zoom_to_the_newest_runs_and_back(
    who: str, request: pytest.FixtureRequest, site: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    page = reader.open(site, "")
    slug = page.evaluate("window.INFX_DATA.index.configs[0].slug")
    page.evaluate(f"location.hash = '#/config/{slug}'")
    page.wait_for_function(
        "document.getElementById('view').getAttribute('data-ready') === 'config'"
    )
    first = "#metric-charts figure:first-of-type table.data tbody tr"
    every = page.locator(first).count()
    assert every > 20  # the changed history's runs
    assert page.locator("button.zoom[data-runs='50']").count() == 0  # longer than the history
    dates = page.evaluate(
        "[...document.querySelectorAll('#metric-charts svg.chart text')].map((t) => t.textContent)"
    )
    assert any(len(d) == 10 and d[4] == "-" for d in dates)  # the time axis shows run dates
    page.click("button.zoom[data-runs='20']")
    assert page.locator(first).count() == 20
    assert page.get_attribute("button.zoom[data-runs='20']", "aria-pressed") == "true"
    newest = page.evaluate(
        "Math.min(...[...document.querySelectorAll('#metric-charts .hpt')]"
        ".map((m) => Number(m.getAttribute('data-run'))))"
    )
    assert newest >= page.evaluate("window.INFX_DATA.index.runs.length") - 20
    page.click("button.zoom[data-runs='all']")
    assert page.locator(first).count() == every
    page.close()
    assert reader.errors == []
