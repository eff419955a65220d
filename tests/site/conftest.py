"""Histories for the site tests, from the real H200 serving runs in tests/data/gpu-noise-h200:
each run's job folders go through `infx results process`, `collect` and `ingest` as a main
run would, with a distinct run id, commit and creation time.

The commits are real: a small git repository (`Repo`) holds one commit per main run, and
between the last unchanged run (main15) and the first changed one (chg00) a commit that
appends a changelog entry naming the l1b config, and one naming another config. So the step
the engine change made is explained for l1b and unexplained for l05b.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infx.cli import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu-noise-h200"
MAIN_RUNS = [f"main{i:02d}" for i in range(16)]
CHANGE_RUNS = [f"chg{i:02d}" for i in range(6)]
L1B_LINK = "https://github.com/acme/bench/pull/77"
OTHER_LINK = "https://github.com/acme/bench/pull/78"
REPO_URL = "https://github.com/acme/bench"
CHROMIUM = Path("/usr/bin/chromium")
# A config page has drawn (the view marks itself ready once its charts are in).
CONFIG_READY = "document.getElementById('view').getAttribute('data-ready') === 'config'"

MASTERS = """\
l05b-bf16-h200-vllm:
  image: gpunoise/engine:sdpa
  model: synthetic/llama-0.45b-random
  model-prefix: l05b
  runner: h200
  precision: bf16
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 512
      osl: 128
      search-space:
      - { tp: 1, conc-list: [1, 4, 16, 64] }

l1b-bf16-h200-vllm:
  image: gpunoise/engine:sdpa
  model: synthetic/llama-1b-random
  model-prefix: l1b
  runner: h200
  precision: bf16
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 512
      osl: 128
      search-space:
      - { tp: 1, conc-list: [1, 4, 16, 64] }

other-fp8-mi355x-sglang:
  image: lmsys/sglang:v0.5
  model: other/model
  model-prefix: other
  runner: mi355x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [4] }
"""

FIRST_ENTRY = """\
- config-keys:
    - l05b-bf16-h200-vllm
    - l1b-bf16-h200-vllm
  description:
    - "Serve both models with the SDPA engine image."
  pr-link: https://github.com/acme/bench/pull/1
"""

CHANGE_ENTRIES = f"""
- config-keys:
    - l1b-*
  scenario-type:
    - fixed-seq-len
  description:
    - "Use eager attention instead of SDPA for the 1B model."
  pr-link: {L1B_LINK}

- config-keys:
    - other-fp8-mi355x-sglang
  description:
    - "Bump the SGLang image of another model."
  pr-link: {OTHER_LINK}
"""


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


@dataclass(frozen=True)
class Repo:
    path: Path
    shas: dict[str, str]  # run name -> the commit its main run measured


@pytest.fixture(scope="session")
def bench_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    path = tmp_path_factory.mktemp("bench-repo")
    git(path, "init", "-q", "-b", "main")
    (path / "configs").mkdir()
    (path / "configs" / "test-master.yaml").write_text(MASTERS)
    (path / "infx.toml").write_text('repository = "acme/bench"\n')
    (path / "perf-changelog.yaml").write_text(FIRST_ENTRY)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "start")
    shas = {}
    for name in MAIN_RUNS + CHANGE_RUNS:
        if name == CHANGE_RUNS[0]:
            with (path / "perf-changelog.yaml").open("a") as out:
                out.write(CHANGE_ENTRIES)
            git(path, "add", "-A")
            git(path, "commit", "-qm", "eager attention for l1b; another model's image")
        git(path, "commit", "-q", "--allow-empty", "-m", f"run {name}")
        shas[name] = git(path, "rev-parse", "HEAD")
    return Repo(path, shas)


def _ok(args: list[str]) -> None:
    outcome = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert outcome.exit_code == 0, outcome.output


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory, bench_repo: Repo) -> dict[str, Path]:
    """Run name -> its results.json, as `infx results collect` wrote it for a main run."""
    root = tmp_path_factory.mktemp("h200")
    for part in ("part1.tar.gz", "part2.tar.gz"):
        with tarfile.open(DATA / part) as archive:
            archive.extractall(root, filter="data")
    found = {}
    for i, name in enumerate(MAIN_RUNS + CHANGE_RUNS):
        kind = "main" if name.startswith("main") else "change"
        run_dir = root / "jobs" / kind / name
        for job in sorted(p for p in run_dir.iterdir() if p.is_dir()):
            _ok(["results", "process", "--row", (job / "row.json").read_text(),
                 "--results-dir", str(job)])  # fmt: skip
        out = root / "tables" / name
        run_id = 5000 + i
        _ok(["results", "collect", str(run_dir), "--out-dir", str(out), "--run-id", str(run_id),
             "--sha", bench_repo.shas[name], "--ref", "refs/heads/main"])  # fmt: skip
        table = out / "results.json"
        doc = json.loads(table.read_text())
        doc["run"]["created_at"] = f"2026-03-{1 + i:02d}T12:00:00Z"
        doc["run"]["url"] = f"{REPO_URL}/actions/runs/{run_id}"
        table.write_text(json.dumps(doc))
        found[name] = table
    return found


def ingest(url: str, tables: dict[str, Path], names: list[str]) -> None:
    for name in names:
        _ok(["results", "ingest", str(tables[name]), "--history", url])


@pytest.fixture(scope="session")
def main_history(tmp_path_factory: pytest.TempPathFactory, tables: dict[str, Path]) -> Path:
    """The 16 unchanged runs: main's history before the change."""
    path = tmp_path_factory.mktemp("history-main") / "history.sqlite"
    ingest(f"sqlite:///{path}", tables, MAIN_RUNS)
    return path


REUSED_RUN = 7777  # the pull request run whose sweep main's newest run republished


@pytest.fixture(scope="session")
def changed_history(tmp_path_factory: pytest.TempPathFactory, tables: dict[str, Path]) -> Path:
    """The 16 unchanged runs, then the 6 changed ones as later main runs; the newest of them
    reused the sweep of pull request run REUSED_RUN."""
    folder = tmp_path_factory.mktemp("history-changed")
    path = folder / "history.sqlite"
    newest = CHANGE_RUNS[-1]
    doc = json.loads(tables[newest].read_text())
    doc["run"]["reused_from"] = REUSED_RUN
    reused = folder / "reused.json"
    reused.write_text(json.dumps(doc))
    ingest(f"sqlite:///{path}", tables | {newest: reused}, MAIN_RUNS + CHANGE_RUNS)
    return path


# --- the browser tests' chromium (test_browser.py, test_keyboard.py) ---------------------
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


class Browser:
    """One chromium for the module; every request any page makes is recorded."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.requests: list[str] = []
        self.errors: list[str] = []
        context.on("request", lambda request: self.requests.append(request.url))

    def open(self, site: Path, route: str) -> Any:
        page = self.context.new_page()
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.goto((site / "index.html").as_uri() + route)
        page.wait_for_function(
            "['overview','pareto','config','pr','verdicts','coverage','error']"
            ".includes(document.getElementById('view').getAttribute('data-ready'))"
        )
        return page

    def open_config(self, site: Path, label: str | None = None) -> Any:
        """A config's page, reached from the overview as a reader would: the first config,
        or the one whose label starts with `label` and a space."""
        page = self.open(site, "")
        find = "configs[0]" if label is None else (
            f"configs.find((c) => c.label.startsWith({label!r} + ' '))"
        )  # fmt: skip
        slug = page.evaluate(f"window.INFX_DATA.index.{find}.slug")
        page.evaluate(f"location.hash = '#/config/{slug}'")
        page.wait_for_function(CONFIG_READY)
        return page


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, changed_history: Path) -> Path:
    """`infx site build` of the changed history, as a user runs it (no repository): the site
    the keyboard and overview-tool tests read; a module may build its own instead."""
    built = tmp_path_factory.mktemp("built") / "site"
    outcome = CliRunner().invoke(
        cli, ["site", "build", "--history", str(changed_history), "--out", str(built)]
    )
    assert outcome.exit_code == 0, outcome.output
    return built


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    """Playwright for the browser tests; they skip, saying why, without it or chromium."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    if not CHROMIUM.is_file():
        pytest.skip("no /usr/bin/chromium: apt-get install chromium (.ci/run does as root)")
    with sync_api.sync_playwright() as running:
        yield running


def _context(playwright: Any, profile: Path, **options: Any) -> Any:
    return playwright.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=ARGS, **options
    )


@pytest.fixture(scope="module")
def browser(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A desktop: 1280 x 900."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    context = _context(playwright, profile, viewport={"width": 1280, "height": 900})
    yield Browser(context)
    context.close()


@pytest.fixture(scope="module")
def phone(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """The same chromium as a phone: 390 x 844 CSS pixels, touch, the viewport meta obeyed."""
    profile = tmp_path_factory.mktemp("chromium-phone")
    context = _context(playwright, profile, viewport={"width": 390, "height": 844},
                       has_touch=True, is_mobile=True, device_scale_factor=2)  # fmt: skip
    yield Browser(context)
    context.close()
