"""The site read from a keyboard, at 1280 and at 390 px: a skip link first, one tab stop a
chart (arrows move between its points), Enter or Space shows what a hover or tap shows;
no favicon request; the "unconfirmed" verdict has a shape of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.site.conftest import CHROMIUM, CONFIG_READY, Browser

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

# Everything Tab can reach: shown, tabindex not negative.
FOCUSABLE = """() => [...document.querySelectorAll(
  'a[href], button, input, select, textarea, [tabindex]')].filter((e) =>
  e.tabIndex >= 0 && !e.disabled && !e.closest('[hidden]')).length"""
# The bound on a config page's tab stops: its links, buttons and one stop a chart, never
# one a point (a 200-run config page had 3,208 before).
MOST_STOPS = 80


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_the_skip_link_is_the_first_stop_and_lands_in_the_view(
    who: str, request: pytest.FixtureRequest, site: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    page = reader.open(site, "")
    page.keyboard.press("Tab")
    first = page.evaluate("[document.activeElement.id, document.activeElement.textContent]")
    assert first == ["skip", "Skip to content"]
    page.keyboard.press("Enter")
    assert page.evaluate("document.getElementById('view').contains(document.activeElement)")
    assert page.evaluate("location.hash") in ("", "#/")  # the route is untouched
    page.close()
    assert reader.errors == []


def test_a_config_page_has_one_tab_stop_a_chart(browser: Browser, site: Path) -> None:
    """At 1280; test_deep_site holds the bound at 200 runs, at both widths."""
    reader = browser
    page = reader.open_config(site)
    marks = page.locator("svg.chart [data-tip]").count()
    charts = page.locator("svg.chart").count()
    stops = page.evaluate(FOCUSABLE)
    # Every mark reachable by Tab would be `marks` stops more; one a chart is what is left.
    assert page.locator("svg.chart [data-tip][tabindex='0']").count() == charts
    assert marks > stops
    assert stops <= MOST_STOPS
    # The arrows walk the chart: Right to the next mark, End to the last, Home back.
    first = page.locator("svg.chart [data-tip][tabindex='0']").first
    first.focus()
    labels = page.evaluate(
        "[...document.querySelector('svg.chart').querySelectorAll('[data-tip]')]"
        ".map((m) => m.getAttribute('aria-label'))"
    )
    here = "document.activeElement.getAttribute('aria-label')"
    page.keyboard.press("ArrowRight")
    assert page.evaluate(here) == labels[1]
    page.keyboard.press("End")
    assert page.evaluate(here) == labels[-1]
    # The mark last visited is the chart's tab stop now, and the only one.
    assert page.locator("svg.chart").first.locator("[tabindex='0']").count() == 1
    page.keyboard.press("Home")
    assert page.evaluate(here) == labels[0]
    page.close()
    assert reader.errors == []


@pytest.mark.parametrize("key", ["Enter", " "])
def test_enter_or_space_on_a_point_shows_its_numbers_then_opens_it(
    key: str, browser: Browser, site: Path
) -> None:
    page = browser.open(site, "#/pareto/l05b/512x128")
    mark = page.locator("svg.chart .pt[tabindex='0']").first
    mark.focus()
    page.keyboard.press("Escape")
    assert page.locator("#tip").is_hidden()
    page.keyboard.press(key)
    assert page.locator("#tip").is_visible()
    label = mark.get_attribute("aria-label")
    assert label and page.locator("#tip").inner_text().split("\n")[0] in label
    page.keyboard.press(key)  # a second press does what a click does: opens the config
    page.wait_for_function(CONFIG_READY)
    page.close()
    assert browser.errors == []


def test_no_favicon_is_asked_for(browser: Browser, site: Path) -> None:
    page = browser.open(site, "")
    assert page.locator("link[rel='icon']").get_attribute("href") == "data:,"
    page.close()
    assert not [url for url in browser.requests if "favicon" in url]


def test_unconfirmed_has_a_symbol_of_its_own(browser: Browser, site: Path) -> None:
    page = browser.open(site, "")
    symbols = page.evaluate(
        "['regressed','improved','unconfirmed','within-noise']"
        ".map((v) => window.InfxViews.verdict(v).textContent.trim().charAt(0))"
    )
    assert len(set(symbols)) == 4, symbols
    page.close()
