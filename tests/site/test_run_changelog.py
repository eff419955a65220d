"""A config page's changelog per run, in chromium at 1280 and 390: picking a run (from the
list or by clicking a point) shows the changelog entries naming the config that landed
with it, with their PR links."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.site.conftest import CHROMIUM, L1B_LINK, MAIN_RUNS, Browser, Repo

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

CHANGE = len(MAIN_RUNS)  # the index of the first changed run, with which the entry landed


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, changed_history: Path, bench_repo: Repo) -> Path:
    built = tmp_path_factory.mktemp("landed") / "site"
    args = ["--history", str(changed_history), "--out", str(built)]
    outcome = CliRunner().invoke(cli, ["site", "build", *args, "--repo-dir", str(bench_repo.path)])
    assert outcome.exit_code == 0, outcome.output
    return built


@pytest.mark.parametrize("who", ["browser", "phone"])
def test_a_run_shows_the_changelog_entries_that_landed_with_it(
    who: str, request: pytest.FixtureRequest, site: Path
) -> None:
    reader: Browser = request.getfixturevalue(who)
    page = reader.open_config(site, "l1b")
    panel = page.locator("#landed")
    # The newest run with an entry is picked first: the changed engine's.
    assert page.locator("#run-pick").input_value() == str(CHANGE)
    assert panel.locator(f"a[href='{L1B_LINK}']").count() == 1
    assert "Use eager attention instead of SDPA for the 1B model." in panel.inner_text()
    page.select_option("#run-pick", str(CHANGE - 1))
    assert panel.locator("a[href]").count() == 1  # the run's own link only
    assert "no changelog entry naming this config landed" in panel.inner_text()
    # A click on a chart's point of that run picks it.
    page.locator(f"svg.chart .hpt[data-run='{CHANGE}']").first.dispatch_event("click")
    assert page.locator("#run-pick").input_value() == str(CHANGE)
    assert panel.locator(f"a[href='{L1B_LINK}']").count() == 1
    page.close()
    # The entry names l1b only: l05b's page lists no entry for that run.
    page = reader.open_config(site, "l05b")
    page.select_option("#run-pick", str(CHANGE))
    assert page.locator(f"#landed a[href='{L1B_LINK}']").count() == 0
    page.close()
    assert reader.errors == []
