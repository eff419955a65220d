"""A PR's page in chromium, at 1280 and 390 wide: only the configs the run swept are drawn
(the others one collapsed line), and no two point labels overlap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.site.conftest import CHANGE_RUNS, CHROMIUM, Browser

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip("no /usr/bin/chromium: apt-get install chromium", allow_module_level=True)

OVERLAPS = """() => {
  const boxes = [...document.querySelectorAll("svg.chart")].map((svg) =>
    [...svg.querySelectorAll("text.pt-label")].map((t) => t.getBoundingClientRect()));
  let found = 0;
  for (const labels of boxes) {
    labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
      found += a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    }));
  }
  return [found, boxes.flat().length];
}"""


@pytest.fixture(scope="module")
def pr_site(
    tmp_path_factory: pytest.TempPathFactory, tables: dict[str, Path], main_history: Path
) -> Path:
    """PR 44: the first changed run judged against main, its l05b config left unswept (every
    point missing), as a run that swept one config reads."""
    outcome = CliRunner().invoke(
        cli,
        [
            "results",
            "compare",
            str(tables[CHANGE_RUNS[0]]),
            "--history",
            str(main_history),
            "--format",
            "json",
        ],
    )
    doc = json.loads(outcome.stdout[outcome.stdout.index("{") :])
    (unswept,) = [c for c in doc["configs"] if c["label"].startswith("l05b")]
    for point in unswept["points"]:
        point |= {"pr": None, "status": "missing", "verdict": "missing"}
    folder = tmp_path_factory.mktemp("pr-page")
    (folder / "verdicts").mkdir()
    (folder / "verdicts" / "pr-44.json").write_text(json.dumps(doc))
    built = CliRunner().invoke(cli, ["site", "build", "--history", str(main_history), "--out",
                                     str(folder / "site"), "--verdicts", str(folder / "verdicts")])  # fmt: skip
    assert built.exit_code == 0, built.output
    return folder / "site"


@pytest.mark.parametrize("width", [1280, 390])
def test_a_pr_page_draws_the_configs_it_swept_and_no_label_overlaps(
    browser: Browser, phone: Browser, pr_site: Path, width: int
) -> None:
    chrome = browser if width == 1280 else phone
    page = chrome.open(pr_site, "#/pr/44")
    assert page.locator("section.pr-config").count() == 1  # l1b only
    assert "l1b" in page.locator("section.pr-config h2").inner_text()
    unswept = page.locator("#unswept")
    assert unswept.count() == 1 and "1 config(s)" in unswept.locator("summary").inner_text()
    assert not unswept.locator("li").is_visible()  # collapsed
    assert "l05b" in (unswept.locator("li").text_content() or "")
    overlaps, labels = page.evaluate(OVERLAPS)
    assert labels and overlaps == 0
    page.close()
    assert chrome.errors == []
