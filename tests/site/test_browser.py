"""The built site in a real browser: Playwright driving Debian's chromium, the site opened
from a temporary folder over file://. Each view must draw the points its data holds (counted
in the DOM), a step must show the changelog entry that explains it, a PR's regressed point
must read as regressed, and no request may leave the site's folder.

Skipped, saying why, without Playwright (`pip install playwright`, in the `test` extra) or
without /usr/bin/chromium (`apt-get install chromium`; `.ci/run` installs it as root).
`INFX_UPDATE_README=1` copies the Pareto screenshot to docs/site-pareto.png.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.site.conftest import (
    CHANGE_RUNS,
    CHROMIUM,
    CONFIG_READY,
    L1B_LINK,
    MAIN_RUNS,
    OTHER_LINK,
    REUSED_RUN,
    Browser,
    Repo,
)

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "site-pareto.png"
WIDE, PHONE = ROOT / "docs" / "site-1280.png", ROOT / "docs" / "site-390.png"
UPDATE = os.environ.get("INFX_UPDATE_README") == "1"
PR = 41

pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
if not CHROMIUM.is_file():
    pytest.skip(
        "no /usr/bin/chromium: apt-get install chromium (.ci/run does as root)",
        allow_module_level=True,
    )


def _build(*args: str) -> None:
    outcome = CliRunner().invoke(cli, ["site", "build", *args])
    assert outcome.exit_code == 0, outcome.output


def _verdict(table: Path, history: Path) -> dict[str, Any]:
    outcome = CliRunner().invoke(
        cli, ["results", "compare", str(table), "--history", str(history), "--format", "json"]
    )
    assert outcome.exit_code in (0, 1), outcome.output
    return json.loads(outcome.stdout[outcome.stdout.index("{") :])


@pytest.fixture(scope="module")
def verdict(tables: dict[str, Path], main_history: Path) -> dict[str, Any]:
    """What `infx results compare` says of the first changed run against the main runs."""
    return _verdict(tables[CHANGE_RUNS[0]], main_history)


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory,
    changed_history: Path,
    main_history: Path,
    bench_repo: Repo,
    tables: dict[str, Path],
    verdict: dict[str, Any],
) -> Path:
    """The site of the changed history (steps explained from the repository's changelog)
    and two verdicts, each drawn over main's curves: PR 41's (the first changed run judged
    against the main runs), acknowledged and reused by main's newest run, and PR 40's,
    which changed nothing."""
    folder = tmp_path_factory.mktemp("site-inputs")
    verdicts = folder / "verdicts"
    verdicts.mkdir()
    acknowledged = json.loads(json.dumps(verdict))
    acknowledged["gate"] |= {"passed": True, "acknowledged": {
        "by": "comment", "who": "maint", "url": "https://github.com/acme/bench/pull/41#c1"}}  # fmt: skip
    (verdicts / f"pr-{PR}-run-{REUSED_RUN}.json").write_text(json.dumps(acknowledged))
    quiet = _verdict(tables[MAIN_RUNS[-1]], main_history)
    (verdicts / "pr-40.json").write_text(json.dumps(quiet))
    built = folder / "built"
    _build("--history", str(changed_history), "--out", str(built), "--repo-dir",
           str(bench_repo.path), "--verdicts", str(verdicts))  # fmt: skip
    # Opened from a fresh temporary folder, as a deploy would have it.
    served = tmp_path_factory.mktemp("served") / "site"
    shutil.copytree(built, served)
    return served


def index_doc(page: Any) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate("window.INFX_DATA.index")
    return found


def slug_of(page: Any, prefix: str) -> str:
    configs = index_doc(page)["configs"]
    (found,) = [c["slug"] for c in configs if c["label"].startswith(prefix + " ")]
    return found


def test_the_overview_lists_every_page_and_config(browser: Browser, site: Path, tmp_path) -> None:
    page = browser.open(site, "")
    assert page.locator("#configs tbody tr").count() == 2
    assert page.locator("ul.pages li").count() == 2
    assert page.locator(f"a[href='#/pr/{PR}']").count() == 1
    page.fill("#config-filter", "l05b")
    assert page.locator("#configs tbody tr:visible").count() == 1
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
    page.close()
    assert browser.errors == []


def test_a_pareto_page_draws_each_point_of_the_latest_run(
    browser: Browser, site: Path, tables: dict[str, Path], tmp_path: Path
) -> None:
    page = browser.open(site, "#/pareto/l1b/512x128")
    latest = json.loads(tables[CHANGE_RUNS[-1]].read_text())
    rows = [r for r in latest["rows"] if r["identity"]["model-prefix"] == "l1b"]
    points = page.locator("svg.chart .pt")
    assert points.count() == len(rows) == 4
    drawn = sorted(int(points.nth(i).get_attribute("data-conc")) for i in range(4))
    assert drawn == sorted(r["identity"]["conc"] for r in rows)
    assert page.locator("table.data tbody tr").count() == 4
    axis = page.locator("svg.chart .grid text.label").all_text_contents()
    assert axis == ["Interactivity (tok/s/user)",
                    "Throughput per GPU (tok/s/GPU)"]  # fmt: skip
    ticks = page.locator("svg.chart .grid text:not(.label)").all_text_contents()
    assert ticks[0] == "0" and "0" in ticks[1:]  # both axes start at zero
    top = max(rows, key=lambda r: r["metrics"]["tput_per_gpu"])
    marker = page.locator(f"svg.chart .pt[data-conc='{top['identity']['conc']}']")
    marker.focus()
    tip = page.locator("#tip").inner_text()
    assert f"conc {top['identity']['conc']}" in tip and "Image gpunoise/engine:eager" in tip
    assert "run 5021" in tip and "Throughput" in tip and "±" in tip
    assert page.locator("polygon.band").count() == 1  # the frontier's noise band
    page.screenshot(path=str(tmp_path / "pareto.png"), full_page=True)
    if UPDATE:
        SCREENSHOT.write_bytes((tmp_path / "pareto.png").read_bytes())
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG"), "run with INFX_UPDATE_README=1"
    page.get_by_role("button", name="Show the data as a table").click()
    assert page.locator("table.data").is_visible() and not page.locator("svg.chart").is_visible()
    page.close()
    assert browser.errors == []


def test_a_step_shows_the_changelog_entry_that_explains_it(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    page = browser.open(site, "")
    l1b, l05b = slug_of(page, "l1b"), slug_of(page, "l05b")
    page.close()
    change = 5000 + len(MAIN_RUNS)  # the first changed run
    page = browser.open(site, f"#/config/{l1b}")
    step = page.locator(f"li.step[data-run='{change}']")
    assert step.get_attribute("data-status") == "explained"
    text = step.inner_text()
    assert "Explained by" in text and "acme/bench/pull/77" in text
    assert "Use eager attention instead of SDPA for the 1B model." in text
    assert OTHER_LINK.rsplit("/", 1)[-1] not in text.split("Explained by", 1)[1].split("(")[0]
    assert step.locator(f"a[href='{L1B_LINK}']").count() == 1
    runs = len(MAIN_RUNS) + len(CHANGE_RUNS)
    charts = page.locator("svg.chart")
    assert charts.count() == 6  # one per metric
    assert page.locator("svg.chart .hpt").count() == 6 * 4 * runs  # every value drawn
    steps = page.locator("li.step").count()
    assert page.locator("svg.chart g.stepmark").count() == 6 * steps
    page.screenshot(path=str(tmp_path / "config-l1b.png"), full_page=True)
    page.close()
    page = browser.open(site, f"#/config/{l05b}")
    step = page.locator(f"li.step[data-run='{change}']")
    assert step.get_attribute("data-status") == "unexplained"
    assert "Unexplained" in step.inner_text()
    page.close()
    assert browser.errors == []


def test_a_pr_overlay_shows_its_regressed_points_as_regressed(
    browser: Browser, site: Path, verdict: dict[str, Any], tmp_path: Path
) -> None:
    regressed = [(c["label"], p["conc"]) for c in verdict["configs"] for p in c["points"]
                 if p["verdict"] == "regressed"]  # fmt: skip
    assert regressed, "the changed run regresses against the unchanged ones"
    page = browser.open(site, f"#/pr/{PR}")
    marks = page.locator("svg.chart .pr-pt[data-verdict='regressed']")
    assert marks.count() == len(regressed)
    assert page.locator("svg.chart .pr-pt").count() == sum(
        1 for c in verdict["configs"] for p in c["points"] if p["pr"] is not None
    )
    # by shape (a downward triangle: its tip below its base) and by text, not colour alone
    path = marks.first.get_attribute("d")
    ys = [float(xy.split(",")[1]) for xy in path.lstrip("M").rstrip("Z").split("L")]
    assert len(ys) == 3 and ys[0] == max(ys)
    labels = page.locator("svg.chart text.pt-label.v-regressed").all_text_contents()
    assert len(labels) == len(regressed) and all("regressed" in t for t in labels)
    heading = page.locator("h1").inner_text()
    assert f"PR #{PR}" in heading and "regressed" in heading
    cells = page.locator("table.data tbody tr", has_text="regressed").count()
    assert cells == len(regressed)
    page.screenshot(path=str(tmp_path / "pr.png"), full_page=True)
    page.close()
    assert browser.errors == []


def test_the_verdict_history_and_coverage(browser: Browser, site: Path, tmp_path: Path) -> None:
    page = browser.open(site, "#/verdicts")
    rows = page.locator("#verdicts tbody tr")
    assert rows.count() == 2
    first = rows.nth(0).inner_text()  # newest PR first
    assert "#41" in first and "regressed" in first and "comment by @maint" in first
    assert "yes, by run 5021" in first and "overlay" in first
    assert "#40" in rows.nth(1).inner_text()
    page.screenshot(path=str(tmp_path / "verdicts.png"), full_page=True)
    page.close()
    page = browser.open(site, "#/coverage")
    rows = page.locator("#coverage tbody tr")
    assert rows.count() == 2
    assert all("1, 4, 16, 64" in rows.nth(i).inner_text() for i in range(2))
    page.screenshot(path=str(tmp_path / "coverage.png"), full_page=True)
    page.close()
    page = browser.open(site, "#/config/no-such-page")
    assert page.locator("#view").get_attribute("data-ready") == "error"
    page.close()
    browser.errors.clear()  # the missing page's file was refused, as it should be


def test_no_request_leaves_the_site(browser: Browser, site: Path) -> None:
    page = browser.open(site, "")
    for route in ("#/pareto/l05b/512x128", f"#/pr/{PR}", "#/coverage", "#/verdicts"):
        page.evaluate(f"location.hash = {json.dumps(route)}")
        name = route.split("/")[1]
        page.wait_for_function(
            f"document.getElementById('view').getAttribute('data-ready') === {json.dumps(name)}"
        )
    page.close()
    prefix = site.as_uri() + "/"
    assert browser.requests
    outside = [url for url in browser.requests if not url.startswith(prefix)]
    assert outside == []


SITE_URL = "https://acme.github.io/bench/"


def test_the_overlay_link_a_comment_writes_opens_the_overlay(
    api: Any,
    browser: Browser,
    main_history: Path,
    tables: dict[str, Path],
    bench_repo: Repo,
    tmp_path: Path,
) -> None:
    """Issue 33: the comment's "#N on the results site" link showed "no data file": the
    workflow's build drew no PR pages. `results compare --pr` records the verdict in the
    history; `site build` with default options draws every recorded PR, in every build."""
    import re

    pr, head = 43, "c" * 40
    api.state.add_pull(pr, head_sha=head)
    history = tmp_path / "history.sqlite"
    shutil.copy(main_history, history)
    repo = tmp_path / "repo"
    shutil.copytree(bench_repo.path, repo)
    (repo / "infx.toml").write_text(
        f'repository = "acme/bench"\n\n[results]\nsite-url = "{SITE_URL}"\n'
    )
    table = json.loads(tables[CHANGE_RUNS[0]].read_text())
    table["run"] |= {"id": 9043, "ref": f"refs/pull/{pr}/merge", "sha": head}
    mine = tmp_path / "results.json"
    mine.write_text(json.dumps(table))
    old = Path.cwd()
    os.chdir(repo)
    try:
        judged = CliRunner().invoke(cli, ["results", "compare", str(mine), "--history",
                                          str(history), "--pr", str(pr), "--check-sha", head])  # fmt: skip
    finally:
        os.chdir(old)
    assert judged.exit_code == 1, judged.output  # the changed run regressed
    (comment,) = [c["body"] for c in api.state.comments if c["issue_url"].endswith(f"/{pr}")]
    (link,) = re.findall(r"\]\((https://[^)\s]*#/pr/\d+)\)", comment)
    assert link.startswith(SITE_URL) and f"#{pr} on the results site" in comment
    route = link.removeprefix(SITE_URL)
    from infx.site.facts import stored_verdicts

    (record,) = stored_verdicts(f"sqlite:///{history}") or ()  # what the comment says
    regressed = sum(1 for c in record.doc["configs"] for p in c["points"]
                    if p["verdict"] == "regressed" and p["pr"] is not None)  # fmt: skip
    assert regressed and record.run_id == 9043
    site = tmp_path / "site"
    for build in range(2):  # a later build (a newer main run stored) keeps the overlay
        if build:
            _ok_ingest(tables[CHANGE_RUNS[1]], history)
        _build("--history", str(history), "--out", str(site), "--repo-dir", str(repo))
        page = browser.open(site, route)
        assert page.locator("#view").get_attribute("data-ready") == "pr"
        assert f"PR #{pr}" in page.locator("h1").inner_text()
        marks = page.locator("svg.chart .pr-pt[data-verdict='regressed']")
        assert marks.count() == regressed
        assert page.get_by_role("link", name=f"run {record.run_id}").count() == 1
        page.close()
    assert browser.errors == []


def _ok_ingest(table: Path, history: Path) -> None:
    outcome = CliRunner().invoke(cli, ["results", "ingest", str(table), "--history", str(history)])
    assert outcome.exit_code == 0, outcome.output


def _routes(page: Any) -> list[str]:
    return ["", "#/pareto/l1b/512x128", f"#/config/{slug_of(page, 'l1b')}", f"#/pr/{PR}",
            "#/verdicts", "#/coverage"]  # fmt: skip


LAYOUT = """() => {
  const charts = [...document.querySelectorAll("svg.chart")].filter((s) => s.getClientRects().length);
  return {
    page: document.documentElement.scrollWidth,
    charts: charts.map((svg) => {
      const box = svg.parentElement.getBoundingClientRect().width;
      const ticks = [...svg.querySelectorAll(".grid text:not(.label)")];
      const yTicks = [...svg.querySelectorAll(".grid text.ytick")];
      const yLabel = [...svg.querySelectorAll(".grid text.label")].pop();
      return [svg.getBoundingClientRect().width / box,
              Math.min(...ticks.map((t) => t.getBoundingClientRect().height)),
              Math.min(...yTicks.map((t) => t.getBoundingClientRect().left))
                - yLabel.getBoundingClientRect().right];
    }),
    tables: [...document.querySelectorAll("table.data")].filter((t) => t.getClientRects().length)
      .map((t) => [t.parentElement.getBoundingClientRect().right, t.scrollWidth]),
  };
}"""


def test_a_phone_reads_every_view(phone: Browser, site: Path, tmp_path: Path) -> None:
    """Issue 33: at 390 x 844 the charts shrank to 45 % (5 px ticks) and the tables widened
    the page to 760 px."""
    page = phone.open(site, "")
    routes = _routes(page)
    page.close()
    wide_tables = 0
    for route in routes:
        page = phone.open(site, route)
        assert page.locator("#view").get_attribute("data-ready") != "error", route
        layout = page.evaluate(LAYOUT)
        assert layout["page"] <= 390, (route, layout["page"])  # nothing scrolls sideways
        for share, tick, gap in layout["charts"]:
            assert share > 0.97, (route, share)  # the chart fills its box
            assert tick >= 11, (route, tick)  # tick labels as tall as the page's text
            assert gap > 0, (route, gap)  # the y axis' title clears its ticks
        for right, width in layout["tables"]:
            assert right <= 390, route  # the table's box stays inside the page
            wide_tables += width > 390  # and scrolls what does not fit
        if route == "#/pareto/l1b/512x128":
            page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)
        page.close()
    assert wide_tables, "no table wider than a phone: the scrolling boxes went untested"
    if UPDATE:
        PHONE.write_bytes((tmp_path / "phone.png").read_bytes())
    assert PHONE.read_bytes().startswith(b"\x89PNG"), "run with INFX_UPDATE_README=1"
    assert phone.errors == []


def test_a_tap_shows_the_numbers_and_a_second_tap_opens_the_config(
    phone: Browser, site: Path
) -> None:
    page = phone.open(site, "#/pareto/l1b/512x128")
    point = page.locator("svg.chart .pt").first
    config = point.get_attribute("data-config")
    point.tap()
    tip = page.locator("#tip")
    assert tip.is_visible() and "conc" in tip.inner_text()
    assert page.evaluate("location.hash") == "#/pareto/l1b/512x128"  # still here
    box = tip.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.locator("h1").tap()  # a tap elsewhere puts it away
    assert not tip.is_visible()
    point.tap()
    point.tap()  # the numbers were shown: now it opens
    page.wait_for_function(CONFIG_READY)
    assert page.evaluate("location.hash") == f"#/config/{config}"
    page.close()
    assert phone.errors == []


def test_a_desktop_reads_every_view_at_1280(browser: Browser, site: Path, tmp_path: Path) -> None:
    page = browser.open(site, "")
    routes = _routes(page)
    page.close()
    for route in routes:
        page = browser.open(site, route)
        layout = page.evaluate(LAYOUT)
        assert layout["page"] <= 1280, route
        assert all(tick >= 11 and gap > 0 for _, tick, gap in layout["charts"]), route
        if route == "#/pareto/l1b/512x128":
            page.screenshot(path=str(tmp_path / "wide.png"), full_page=True)
        page.close()
    if UPDATE:
        WIDE.write_bytes((tmp_path / "wide.png").read_bytes())
    assert WIDE.read_bytes().startswith(b"\x89PNG"), "run with INFX_UPDATE_README=1"
    assert browser.errors == []


def test_a_run_held_without_its_receipts_says_so(
    browser: Browser, changed_history: Path, bench_repo: Repo, tmp_path: Path
) -> None:
    """A number the history holds without the receipts that vouch for it (a run stored
    before receipts, or whose receipts failed to store) reads as such wherever its run is
    named; a reused merge needs its run, merge and main receipts all stored to read as
    vouched. Here only the newest run (which reused run REUSED_RUN) has them."""
    from infx.history.receipts import store_receipts
    from infx.site.read import read_history

    history = tmp_path / "history.sqlite"
    shutil.copy(changed_history, history)
    url = f"sqlite:///{history}"
    runs = read_history(url).runs
    first, newest = runs[0].id, runs[-1].id
    assert runs[-1].reused_from == REUSED_RUN
    sealed = [("run", {"kind": "run", "run": {"id": REUSED_RUN}}),
              ("merge", {"kind": "merge", "source": {"run": REUSED_RUN}})]  # fmt: skip
    store_receipts(url, newest, sealed)
    assert not read_history(url).runs[-1].receipts  # the main run's own is missing
    store_receipts(url, newest, [("main", {"kind": "run", "run": {"id": newest}})])
    assert [r.receipts for r in read_history(url).runs] == [False] * (len(runs) - 1) + [True]
    built = tmp_path / "site"
    _build("--history", str(history), "--out", str(built), "--repo-dir", str(bench_repo.path))
    page = browser.open_config(built, "l1b")
    text = page.locator("#view").inner_text()
    said = text[text.index("main run(s) measured it") :].split(". ", 1)[0]
    assert f"from run {first} · " in said and f" to run {newest} · " in said, said
    oldest, newest_text = said.split(" to ")
    assert oldest.endswith(" · no receipt") and "no receipt" not in newest_text, said
    page.close()
    assert browser.errors == []
