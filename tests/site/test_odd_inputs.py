"""Sites of histories nobody here would write, built as a user builds them (results tables
through `infx results ingest`, then `infx site build`) and opened in chromium: odd model
prefixes, long and hostile names. Every link the site draws opens its page, and no page is
wider than the window."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.results.simulate import Sweeps
from tests.site.conftest import CHROMIUM, Browser

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

READY = "document.getElementById('view').getAttribute('data-ready')"


def _ok(args: list[str]) -> str:
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


def built(
    folder: Path, configs: int, runs: int, change: Callable[[int, dict[str, Any]], None]
) -> Path:
    """`runs` main runs of `configs` simulated configs, each row passed to `change(run,
    row)`, ingested one table at a time; the site built from that history."""
    sweeps = Sweeps(configs, seed=1, concs=(4, 16, 64))
    history = folder / "history.sqlite"
    for r in range(runs):
        doc = sweeps.run(100 + r)
        doc["run"]["created_at"] = f"2026-03-{1 + r:02d}T12:00:00Z"
        doc["rows"] = [copy.deepcopy(row) for row in doc["rows"]]  # the runs share rows
        for row in doc["rows"]:
            change(r, row)
        table = folder / f"run{r}.json"
        table.write_text(json.dumps(doc))
        _ok(["results", "ingest", str(table), "--history", str(history)])
    site = folder / "site"
    _ok(["site", "build", "--history", str(history), "--out", str(site)])
    return site


def links(page: Any) -> list[str]:
    return page.evaluate(
        "[...document.querySelectorAll('#view a[href^=\"#/\"]')].map((a) => a.getAttribute('href'))"
    )


def opened(reader: Browser, site: Path, route: str) -> str:
    """The view `route` opened as (its data-ready), reached by a hash change."""
    page = reader.open(site, route)
    ready = page.evaluate(READY)
    page.close()
    return str(ready)


PREFIXES = (".hidden", "..", "Foo", "foo", "a/b", "模型", "ü", "x" * 300)
FORMULAS = ("+cmd|' /C calc'!A0", "-2+3")  # a spreadsheet runs either


@pytest.fixture(scope="module")
def odd_prefixes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One config per model prefix a results table may hold (any non-empty string)."""

    def prefix(run: int, row: dict[str, Any]) -> None:
        config = int(row["identity"]["model-prefix"][1:]) * 8 + row["identity"]["tp"] - 1
        row["identity"]["model-prefix"] = (PREFIXES + FORMULAS)[config]

    configs = len(PREFIXES + FORMULAS)
    return built(tmp_path_factory.mktemp("odd-prefixes"), configs, 2, prefix)


def test_each_model_prefix_has_a_pareto_page_of_its_own_that_opens(
    browser: Browser, odd_prefixes: Path
) -> None:
    page = browser.open(odd_prefixes, "#/")
    pages = page.evaluate("window.INFX_DATA.index.pages")
    routes = [r for r in links(page) if r.startswith("#/pareto/")]
    page.close()
    assert len(pages) == len(routes) == len(PREFIXES + FORMULAS)  # none shares a page
    assert sorted(p["title"].split(" · ")[0] for p in pages) == sorted(PREFIXES + FORMULAS)
    for route in routes:
        assert opened(browser, odd_prefixes, route) == "pareto", route
    assert browser.errors == []


HOSTILE = (
    '</script><script>window.PWNED=1</script><img src=x onerror="window.PWNED=1">'
    "`${window.PWNED=1}`'\"&amp;\u2028漢" + "x" * 200
)


@pytest.fixture(scope="module")
def hostile_names(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Markup, script, quotes and 200 unbroken characters in every name a table holds."""

    def names(run: int, row: dict[str, Any]) -> None:
        if row["identity"]["tp"] == 1:
            for key in ("model", "runner", "hardware", "framework", "precision"):
                row["identity"][key] = f"{HOSTILE}{key}"
            row["recipe"]["image"] = f"{HOSTILE}image"

    return built(tmp_path_factory.mktemp("hostile"), 2, 2, names)


WIDE = "document.documentElement.scrollWidth > window.innerWidth"


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_hostile_names_are_text_and_never_widen_a_page(
    who: str, request: pytest.FixtureRequest, hostile_names: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    page = reader.open(hostile_names, "#/")
    routes = ["#/", "#/coverage", *(r for r in links(page) if r != "#/")]
    page.close()
    assert len(routes) >= 5  # the Pareto page, both configs
    for route in routes:
        page = reader.open(hostile_names, route)
        assert page.evaluate(READY) not in ("error", None), route
        assert not page.evaluate(WIDE), route
        assert not page.evaluate("!!window.PWNED"), route
        page.close()
    assert reader.errors == []


@pytest.fixture(scope="module")
def huge_numbers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A config whose throughput is in the tens of millions and TTFT in the 10^15 ms."""

    def huge(run: int, row: dict[str, Any]) -> None:
        if row["identity"]["tp"] == 1:
            for key in ("tput_per_gpu", "total_tput", "output_tput_per_gpu", "median_ttft"):
                row["metrics"][key] *= 1e5 if "tput" in key else 1e12

    return built(tmp_path_factory.mktemp("huge"), 1, 2, huge)


CLEARANCE = """() => [...document.querySelectorAll("svg.chart")]
  .filter((svg) => svg.getClientRects().length).map((svg) => {
    const ticks = [...svg.querySelectorAll(".grid text.ytick")];
    const title = [...svg.querySelectorAll(".grid text.label")].pop();
    return Math.min(...ticks.map((t) => t.getBoundingClientRect().left))
      - title.getBoundingClientRect().right;
  })"""


def test_ticks_of_huge_numbers_clear_the_axis_title(browser: Browser, huge_numbers: Path) -> None:
    """ "10,000,000" at 1280 wide ran into the y axis' title (and 10^15 off the chart)."""
    page = browser.open(huge_numbers, "#/")
    routes = [r for r in links(page) if r.startswith(("#/pareto/", "#/config/"))]
    page.close()
    for route in routes:
        page = browser.open(huge_numbers, route)
        gaps = page.evaluate(CLEARANCE)
        assert gaps and min(gaps) > 0, (route, gaps)
        page.close()
    assert browser.errors == []


INSIDE = """() => [...document.querySelectorAll("svg.chart")]
  .filter((svg) => svg.getClientRects().length).flatMap((svg) => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll("text")].map((t) => [t.textContent, t.getBoundingClientRect()])
      .filter(([, b]) => b.width && (b.left < box.left - 1 || b.right > box.right + 1))
      .map(([text]) => text);
  })"""


def test_every_text_of_a_chart_is_inside_it_on_a_phone(phone: Browser, odd_prefixes: Path) -> None:
    """At 390 wide a config's history charts wrote 'Main run, oldest to newest (N runs;
    ticks: run date)' past their right edge ('... ticks: run da')."""
    page = phone.open(odd_prefixes, "#/")
    found = links(page)
    page.close()
    routes = [r for r in found if r.startswith("#/pareto/")][:2]
    routes += [r for r in found if r.startswith("#/config/")][:2]
    assert len(routes) == 4
    for route in routes:
        page = phone.open(odd_prefixes, route)
        assert page.evaluate(INSIDE) == [], route
        page.close()
    assert phone.errors == []


@pytest.fixture(scope="module")
def no_p99(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A client that reports no TTFT p99 (a results table may leave a latency out)."""

    def drop(run: int, row: dict[str, Any]) -> None:
        del row["metrics"]["p99_ttft"]

    return built(tmp_path_factory.mktemp("no-p99"), 1, 3, drop)


def test_a_metric_no_run_measured_says_so_instead_of_an_empty_chart(
    browser: Browser, no_p99: Path
) -> None:
    page = browser.open(no_p99, "#/")
    (route,) = [r for r in links(page) if r.startswith("#/config/")]
    page.close()
    page = browser.open(no_p99, route)
    empty = page.evaluate(
        "[...document.querySelectorAll('#metric-charts svg.chart')]"
        ".filter((svg) => !svg.querySelector('.hpt')).length"
    )
    assert empty == 0  # every chart drawn has points
    assert page.locator("#metric-charts svg.chart").count() == 5
    said = page.locator("#metric-charts figure[data-metric='p99_ttft']").inner_text()
    assert "Not measured" in said and "TTFT p99" in said
    page.close()
    assert browser.errors == []


def test_a_name_that_starts_like_a_formula_downloads_as_text(
    browser: Browser, odd_prefixes: Path
) -> None:
    """The CSV link quoted = and @ only: a config of model prefix "-2+3" or "+cmd|..." was a
    formula in the spreadsheet that opened the download."""
    page = browser.open(odd_prefixes, "#/")
    with page.expect_download() as download:
        page.locator("#configs a.csv").click()
    lines = Path(download.value.path()).read_text().splitlines()
    page.close()
    for formula in FORMULAS:
        (line,) = [line for line in lines if formula.split("|")[0] in line]
        assert line.startswith(f"'{formula}") or line.startswith(f"\"'{formula}"), line
    assert browser.errors == []


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_a_points_numbers_with_a_long_image_name_stay_in_the_window(
    who: str, request: pytest.FixtureRequest, hostile_names: Path
) -> None:
    """The tooltip kept a long unbroken image name on one line: the page was 2,700 px wide
    while it showed (at 390 and at 1280)."""
    reader: Browser = request.getfixturevalue(who)
    page = reader.open(hostile_names, "#/")
    routes = [r for r in links(page) if r.startswith(("#/pareto/", "#/config/"))]
    page.close()
    for route in routes:
        page = reader.open(hostile_names, route)
        page.locator("svg.chart [data-tip]").first.focus()
        assert page.locator("#tip").is_visible(), route
        assert "Image " in page.locator("#tip").inner_text()
        assert not page.evaluate(WIDE), route
        page.close()
    assert reader.errors == []
