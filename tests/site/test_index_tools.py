"""The overview's data and the history charts' zoom, on the site built from the changed
history. Filters, stale marks and CSV downloads are read in test_deep_site, at depth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.site.conftest import CHROMIUM, Browser

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

HEAD = '(window.INFX_DATA=window.INFX_DATA||{})["index"]='


def test_the_built_index_holds_each_configs_facets_and_last_run(site: Path) -> None:
    text = (site / "data" / "index.js").read_text()
    doc = json.loads(text[len(HEAD) :].rstrip().rstrip(";"))
    newest = len(doc["runs"]) - 1
    assert all(c["last"] == newest for c in doc["configs"])  # how far behind: from "last"
    assert all(c["f"] == [0, 0, 0] for c in doc["configs"])
    assert doc["facets"] == {"hardware": ["h200"], "framework": ["vllm"], "precision": ["bf16"]}


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_the_history_charts_zoom_to_the_newest_runs_and_back(
    who: str, request: pytest.FixtureRequest, site: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    page = reader.open_config(site)
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
