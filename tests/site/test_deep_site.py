"""The site at InferenceX's depth, in chromium: a 200-run history of three configs (one of
them stale), built by the pure builder and opened over file://. A config page's tab stops
(one per chart, not one per point), stale configs marked, the overview's filters kept in
the address, and every table's CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infx.site.build import STALE_AFTER, SiteFacts, build_site
from infx.site.model import HistoryFacts
from infx.site.steps import analyse_all
from infx.site.write import write_site
from tests.site.conftest import CHROMIUM, Browser
from tests.site.test_views import IDENTITY, config, runs

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

RUNS = 200
FOCUSABLE = """() => [...document.querySelectorAll(
  "a[href], button, input, select, textarea, [tabindex]")]
  .filter((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length).length"""


@pytest.fixture(scope="module")
def deep_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """h200/vllm/bf16 at 8 concurrencies over every run; mi355x/sglang/fp8 last measured 50
    runs ago (stale); b200/trt/fp4 over the newest runs."""
    made = (
        config(IDENTITY, {c: list(range(RUNS)) for c in (1, 2, 4, 8, 16, 32, 64, 128)}, slug="a"),
        config(
            IDENTITY
            | {"hardware": "mi355x", "runner": "mi355x", "framework": "sglang", "precision": "fp8"},
            {4: list(range(150))},
            slug="b",
        ),
        config(
            IDENTITY
            | {"hardware": "b200", "runner": "b200", "framework": "trt", "precision": "fp4"},
            {4: list(range(150, RUNS))},
            slug="c",
        ),
    )
    history = HistoryFacts(runs(RUNS), made, "SQLite")
    facts = SiteFacts(history, analyse_all(list(made)), {}, "2026-03-01T00:00:00Z")
    out = tmp_path_factory.mktemp("deep") / "site"
    write_site(out, build_site(facts))
    return out


@pytest.mark.parametrize("width", [1280, 390])
def test_a_200_run_config_page_has_a_tab_stop_per_chart(
    browser: Browser, phone: Browser, deep_site: Path, width: int
) -> None:
    chrome = browser if width == 1280 else phone
    page = chrome.open(deep_site, "#/config/a")
    focusable = page.evaluate(FOCUSABLE)
    assert focusable <= 40, focusable  # was 3,208: one per point
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.tagName") == "H1"
    assert page.evaluate("location.hash") == "#/config/a"  # the route stays
    first = page.locator("svg.chart .hpt[tabindex='0']").first
    first.focus()
    tip = page.locator("#tip")
    assert tip.is_visible()
    shown = tip.inner_text()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.getAttribute('tabindex')") == "0"
    assert tip.inner_text() != shown  # the next point's numbers
    page.keyboard.press("Escape")
    assert not tip.is_visible()
    page.keyboard.press("Enter")  # Enter shows what hover and tap show
    assert tip.is_visible() and "conc" in tip.inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press(" ")
    assert tip.is_visible()
    assert page.locator("svg.chart").first.locator("[data-tip][tabindex='0']").count() == 1
    page.close()
    assert chrome.errors == []


def test_a_stale_config_is_marked_not_drawn_as_current(browser: Browser, deep_site: Path) -> None:
    page = browser.open(deep_site, "")
    stale = page.locator("#configs tbody tr.stale")
    assert stale.count() == 1 and "label b" in stale.inner_text()
    assert "stale: last measured 50 run(s) ago" in stale.inner_text()
    page.close()
    page = browser.open(deep_site, "#/config/b")
    banner = page.locator("#stale").inner_text()
    assert "last measured 50 run(s) ago, 2026-01-" in banner and str(STALE_AFTER) in banner
    page.close()
    page = browser.open(deep_site, "#/config/a")
    assert page.locator("#stale").count() == 0
    page.close()
    page = browser.open(deep_site, "#/pareto/l1b/512x128")
    assert page.locator("svg.chart .pt.stale").count() == 1
    assert page.locator("svg.chart .pt:not(.stale)").count() == 9
    page.close()
    assert browser.errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_filters_hide_other_configs_and_a_link_keeps_them(
    browser: Browser, phone: Browser, deep_site: Path, width: int
) -> None:
    chrome = browser if width == 1280 else phone
    page = chrome.open(deep_site, "")
    rows = page.locator("#configs tbody tr:visible")
    assert rows.count() == 3
    page.select_option("#f-hw", "mi355x")
    assert rows.count() == 1 and "label b" in rows.inner_text()
    assert page.locator("#shown-count").inner_text() == "1 of 3 config(s) shown."
    assert page.evaluate("location.hash") == "#/?hw=mi355x"
    page.select_option("#f-hw", "")
    page.select_option("#f-prec", "fp4")
    assert rows.count() == 1 and "label c" in rows.inner_text()
    page.select_option("#f-fw", "vllm")
    assert rows.count() == 0
    assert page.evaluate("location.hash") == "#/?fw=vllm&prec=fp4"
    page.close()
    page = chrome.open(deep_site, "#/?fw=sglang")  # a link keeps the filters
    assert page.locator("#f-fw").input_value() == "sglang"
    assert page.locator("#configs tbody tr:visible").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.close()
    assert chrome.errors == []


def _download(page: Any, link: Any) -> str:
    with page.expect_download() as download:
        link.click()
    return Path(download.value.path()).read_text()


def test_every_table_downloads_as_csv(browser: Browser, deep_site: Path) -> None:
    page = browser.open(deep_site, "#/?fw=sglang")
    with page.expect_download() as download:
        page.locator("#configs a.csv").click()
    assert download.value.suggested_filename == "every-config-in-main-s-history.csv"
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0] == "Config,Kind,Last measured,Steps"
    assert len(lines) == 2 and lines[1].startswith("label b,throughput,")  # the rows shown
    page.close()
    page = browser.open(deep_site, "#/config/a")
    assert page.locator("a.csv").count() == page.locator("table.data").count() == 7
    page.get_by_role("button", name="Show the data as a table").first.click()
    lines = _download(page, page.locator("a.csv").first).splitlines()
    assert lines[0].startswith("Run,Image,conc 1,conc 2,")
    assert len(lines) == 1 + RUNS
    values = lines[-1].split(",")[2:]  # numbers without thousands separators
    assert len(values) == 8 and all(float(v) > 0 for v in values)
    page.close()
    assert browser.errors == []
