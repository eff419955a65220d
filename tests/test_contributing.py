"""What CONTRIBUTING.md promises someone who works on infx: where the tests find their
data, a fast suite that still reaches every package, and the pre-commit hooks of infx's own
repository passing on a fresh clone of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, SHARED, SLOW_TESTS, TEST_DATA_VARIABLE, shared_folder

BIN = Path(sys.executable).parent
_BESIDE = BIN / "pre-commit"
PRE_COMMIT = str(_BESIDE) if _BESIDE.exists() else shutil.which("pre-commit")
CONFIG = ROOT / ".pre-commit-config.yaml"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"


def _env(**extra: str) -> dict[str, str]:
    """This environment without what GitHub Actions or a developer's shell adds."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_"))}
    return {**kept, **extra}


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_env(**env),
        timeout=600,
    )


# --- test data --------------------------------------------------------------------------


def test_the_test_data_is_beside_the_clone_unless_a_variable_names_it(tmp_path: Path) -> None:
    clone = tmp_path / "infx"
    assert shared_folder({}, clone) == tmp_path / "shared"
    assert shared_folder({TEST_DATA_VARIABLE: ""}, clone) == tmp_path / "shared"
    named = tmp_path / "elsewhere" / "data"
    assert shared_folder({TEST_DATA_VARIABLE: str(named)}, clone) == named
    assert TEST_DATA_VARIABLE in CONTRIBUTING.read_text()


def test_the_suite_reads_the_folder_the_variable_names(tmp_path: Path) -> None:
    """Set before pytest starts, the variable moves every test that reads the data."""
    where = [sys.executable, "-c", "from tests.conftest import SHARED; print(SHARED)"]
    named = subprocess.run(
        where, cwd=ROOT, capture_output=True, text=True, env=_env(INFX_TEST_DATA=str(tmp_path))
    )
    assert named.stdout.strip() == str(tmp_path.resolve() / "inferencex"), named.stderr
    unset = subprocess.run(where, cwd=ROOT, capture_output=True, text=True, env=_env())
    assert unset.stdout.strip() == str(ROOT.parent / "shared" / "inferencex"), unset.stderr


@pytest.mark.slow
def test_a_data_test_skips_without_the_folder_and_runs_on_the_one_named(tmp_path: Path) -> None:
    one = "tests/changelog/test_inferencex_history.py::test_every_history_entry_is_schema_valid"
    empty = tmp_path / "empty"
    empty.mkdir()
    skipped = _pytest("-q", one, INFX_TEST_DATA=str(empty))
    assert skipped.returncode == 0 and "1 skipped" in skipped.stdout, skipped.stdout
    if not (SHARED / "perf-changelog.yaml").is_file():
        pytest.skip(f"{SHARED} is not present")
    data = tmp_path / "data" / "inferencex"
    data.mkdir(parents=True)
    shutil.copy(SHARED / "perf-changelog.yaml", data / "perf-changelog.yaml")
    ran = _pytest("-q", one, INFX_TEST_DATA=str(data.parent))
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout


# --- the fast suite ---------------------------------------------------------------------


# Collects the whole suite in a process of its own and prints each test with its marker.
_COLLECT = """
import json, sys, pytest
class Listing:
    def pytest_collection_finish(self, session):
        self.tests = [(i.nodeid, i.get_closest_marker("slow") is not None) for i in session.items]
listing = Listing()
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider"], plugins=[listing])
print("\\n" + json.dumps(listing.tests))
sys.exit(code)
"""


def _collected() -> tuple[list[str], list[str]]:
    """The fast and the slow tests of the whole suite, by node id."""
    done = subprocess.run(
        [sys.executable, "-c", _COLLECT], cwd=ROOT, capture_output=True, text=True, env=_env()
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tests = json.loads(done.stdout.splitlines()[-1])
    return [t for t, slow in tests if not slow], [t for t, slow in tests if slow]


@pytest.mark.slow
def test_the_fast_suite_reaches_every_package() -> None:
    fast, slow = _collected()
    assert 0 < len(slow) < len(fast)
    # `python -m pytest`, the README's command, runs both.
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "-m" not in options["ini_options"]["addopts"].split()
    assert any(m.startswith("slow:") for m in options["ini_options"]["markers"])
    # Tests mirror infx/: a package's tests are in tests/<package>/ (the command line's in
    # tests/test_cli.py), a module's in tests/test_<module>.py. infx/github is reached
    # through the fake API of tests/github/, which the reuse, results and history tests use.
    packages = sorted(p.parent.name for p in (ROOT / "infx").glob("*/__init__.py"))
    unreached = [
        name
        for name in packages
        if name != "github"
        and not any(t.startswith((f"tests/{name}/", f"tests/test_{name}.py")) for t in fast)
    ]
    assert unreached == []
    assert any(t.startswith("tests/reuse/") for t in fast)
    # A slow name that no longer names a test would let its test back into the fast suite.
    names = {t.split("::")[-1].split("[")[0] for t in fast + slow}
    assert sorted(SLOW_TESTS - names) == []


# --- pre-commit -------------------------------------------------------------------------


def test_the_repository_runs_the_hook_it_publishes() -> None:
    """infx's own hook, as .pre-commit-hooks.yaml publishes it, and every hook local: a
    commit downloads nothing."""
    (local,) = yaml.safe_load(CONFIG.read_text())["repos"]
    assert local["repo"] == "local"
    hooks = {hook["id"]: hook for hook in local["hooks"]}
    assert {h["language"] for h in hooks.values()} == {"system"}
    (published,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    for key in ("name", "entry", "files", "pass_filenames"):
        assert hooks[published["id"]][key] == published[key], key
    assert {"ruff-check", "ruff-format", "mypy"} <= set(hooks)
    assert hooks["mypy"]["entry"] == "mypy --strict infx"


@pytest.mark.slow
@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")
def test_pre_commit_passes_on_a_fresh_clone(tmp_path: Path) -> None:
    """`pre-commit run --all-files` in a clone of this repository as committed. mypy is
    skipped here (SKIP=mypy): strict mode over all of infx takes longer than the rest
    together, and .ci/run runs it on its own."""
    assert PRE_COMMIT is not None
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "infx"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=clone, capture_output=True, text=True)

    # The hook checks the changelog against where the branch left main.
    if git("rev-parse", "-q", "--verify", "refs/remotes/origin/main").returncode != 0:
        git("update-ref", "refs/remotes/origin/main", "HEAD")
    env = _env(
        PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        SKIP="mypy",
    )
    done = subprocess.run(
        [PRE_COMMIT, "run", "--all-files"],
        cwd=clone,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = {
        line.rsplit(".", 1)[0].rstrip("."): line.rsplit(".", 1)[1]
        for line in done.stdout.splitlines()
        if "...." in line
    }
    for name in ("perf-changelog gate", "ruff check", "ruff format"):
        assert results.get(name) == "Passed", done.stdout
    assert results.get("mypy --strict") == "Skipped", done.stdout
