"""Shared fixtures: real git repositories in temporary folders, driven through the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from infx.cli import cli
from tests.github.fake_api import FakeGitHub

ROOT = Path(__file__).resolve().parents[1]
# A property test is judged on its examples, never on how long one took: hypothesis's
# default deadline (200 ms an example) fails on a busy machine for reasons no change made.
settings.register_profile("infx", deadline=None)
settings.load_profile("infx")
# The folder that holds InferenceX's real data (inferencex/: its perf-changelog.yaml,
# configs/ and golden plans/), as CONTRIBUTING.md says; the tests that read it skip without it.
TEST_DATA_VARIABLE = "INFX_TEST_DATA"


def shared_folder(environ: Mapping[str, str], clone: Path = ROOT) -> Path:
    """Where the shared test data lies: the folder INFX_TEST_DATA names (laid out like
    `../shared`), else `../shared` beside the clone."""
    named = environ.get(TEST_DATA_VARIABLE, "")
    return Path(named).expanduser().resolve() if named else clone.parent / "shared"


SHARED = shared_folder(os.environ) / "inferencex"
REPO = "acme/bench"
LINK = f"https://github.com/{REPO}/pull/"

MASTER = """\
llama-fp8-mi355x-vllm:
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 32 }

llama-fp8-mi355x-sglang:
  image: lmsysorg/sglang:v0.5.5-rocm700-mi35x
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, conc-start: 4, conc-end: 64 }
"""

HISTORY = f"""\
- config-keys:
    - llama-fp8-mi355x-vllm
  description:
    - "Bring up Llama 70B FP8 on MI355X with vLLM"
  pr-link: {LINK}1

- config-keys:
    - llama-fp8-*
  description:
    - "Raise max concurrency for every Llama FP8 config"
  pr-link: {LINK}2
"""


def load_yaml12(text: str | bytes) -> Any:
    """YAML 1.2 plain data (ruamel's C loader), as GitHub reads workflows (`on:` is a key)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=False)
    yaml.allow_duplicate_keys = False
    return yaml.load(text)


def entry(
    keys: list[str] | None = None,
    link: str = "XXX",
    description: str = "Tune flags",
    extra: str = "",
) -> str:
    keys = keys or ["llama-fp8-mi355x-vllm"]
    lines = [
        "- config-keys:",
        *(f"    - {k}" for k in keys),
        "  description:",
        f'    - "{description}"',
        f"  pr-link: {link}",
    ]
    return "\n".join(lines) + "\n" + extra


@dataclass
class GitRepo:
    path: Path

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, name: str, data: str | bytes) -> Path:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            data = data.encode("utf-8")
        target.write_bytes(data)
        return target

    def read(self, name: str = "perf-changelog.yaml") -> bytes:
        return (self.path / name).read_bytes()

    def commit(self, message: str = "change", **files: str | bytes) -> str:
        for name, data in files.items():
            self.write(name.replace("__", "/"), data)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def infx(self, *args: str, env: dict[str, str] | None = None) -> Result:
        old = Path.cwd()
        os.chdir(self.path)
        try:
            return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)


def make_repo(path: Path, history: str = HISTORY, master: str = MASTER) -> GitRepo:
    repo = GitRepo(path)
    path.mkdir(parents=True, exist_ok=True)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.email", "ci@example.invalid")
    repo.git("config", "user.name", "CI")
    repo.git("config", "commit.gpgsign", "false")
    repo.git("remote", "add", "origin", f"git@github.com:{REPO}.git")
    repo.commit("base", **{"perf-changelog.yaml": history, "configs__amd-master.yaml": master})
    repo.git("tag", "base")
    return repo


def real_repo(path: Path, data: Path = SHARED) -> GitRepo:
    """A repository laid out as InferenceX is: `data`'s perf-changelog.yaml and everything
    under its configs/ (runners.yaml and deprecated configs too), committed on main and
    tagged `base`. Skips the test when ../shared is absent and `data` is its default."""
    if not (data / "configs").is_dir():
        pytest.skip(f"{data} is not present (set {TEST_DATA_VARIABLE}: see CONTRIBUTING.md)")
    repo = make_repo(path, history="", master="")
    shutil.rmtree(repo.path / "configs")
    shutil.copytree(data / "configs", repo.path / "configs")
    shutil.copy(data / "perf-changelog.yaml", repo.path / "perf-changelog.yaml")
    repo.commit("InferenceX as it is")
    repo.git("tag", "-f", "base")
    return repo


# --- the fast suite: `python -m pytest -m "not slow"` ----------------------------------
# What is slow is marked here, by rule, so no test file has to say it (CONTRIBUTING.md).
# The fast suite still reaches every package; `python -m pytest` runs everything.

# Whole modules: they build and install wheels, clone repositories and run pre-commit,
# or run the real aiperf client against a server.
SLOW_MODULES = frozenset(
    {
        "tests/test_adoption.py",
        "tests/test_packaging.py",
        "tests/test_precommit.py",
        "tests/results/compare/test_end_to_end.py",
    }
)
# tests/actions runs the workflow files job by job through the harness, their expressions
# through GitHub's evaluator in Node; these of its modules only call infx.
FAST_ACTIONS_MODULES = frozenset({"tests/actions/test_sweep_commands.py"})
# Hypothesis's default; a property test that asks for more examples is slow.
DEFAULT_EXAMPLES = 100
# Tests measured over about half a second on a quiet 2-core machine, or whose cases take
# seconds together (`python -m pytest -p no:cacheprovider --durations=0`), by function
# name: a test keeps its name when it moves. A fast run lists the unmarked tests that took
# over a second; add them here (the first test to import matplotlib or SciPy pays for it).
SLOW_TESTS = frozenset(
    {
        # changelog (the first three hold a property test inside)
        "test_accepted_diff_keeps_history_for_every_reader",
        "test_canonicalize_is_idempotent_and_keeps_base",
        "test_hostile_entries_are_refused_before_loading",
        "test_driver_never_splices_a_link_into_a_spread_pr_link",
        "test_main_branch_name_comes_from_the_settings",
        "test_rebasing_a_pr_whose_commits_append_entries_that_read_alike_keeps_both",
        # history
        "test_a_table_without_its_creation_time_keeps_its_place",
        "test_overlapping_ingests_store_every_run_once",
        # matrix, on InferenceX's real data
        "test_configs_read_as_inferencex_reads_them",
        "test_plan_equals_the_reference",
        # merge
        "test_the_helper_waits_for_the_reuse_status_and_stops_on_not_ready",
        # results
        "test_a_five_percent_slower_config_is_flagged",
        "test_a_step_in_the_newest_run_is_found_and_quiet_series_are_not",
        "test_an_acknowledgement_covers_only_the_verdict_the_maintainer_saw",
        "test_one_png_per_config_readable_by_all",
        "test_simulated_noise_without_change_raises_few_alarms",
        "test_two_thousand_rows_fit_in_one_comment",
        "test_halved_token_latency_is_reported_as_an_improvement",  # a recorded aiperf run
        "test_unchanged_runs_and_pooled_triples_of_them_never_fail_the_gate",  # real H200 runs
        "test_the_eager_change_fails_in_five_of_six_runs_and_every_pooled_triple",
        # reuse, through the fake GitHub API
        "test_a_403_rate_limit_with_retry_after",
        "test_a_body_that_is_not_the_expected_json_ends_in_one_line",  # 40 cases, 10 s in all
        "test_a_connection_that_never_answers_ends_at_the_time_cap",
        "test_a_full_size_sweep_is_decided_within_the_request_budget",
        "test_a_job_file_deep_under_a_double_star_glob_counts",
        "test_a_line_beyond_pr_link_after_the_run_voids_reuse",
        "test_a_manifest_that_cannot_be_read_is_never_a_yes",
        "test_a_merge_that_alters_the_pr_s_own_edit_voids_reuse",
        "test_a_recipe_linked_to_a_shared_script_counts_the_script",
        "test_a_run_with_two_manifests_is_not_reused",
        "test_main_changing_a_selected_config_after_the_run_voids_reuse",
        "test_main_changing_an_anchor_the_measured_config_aliases_voids_reuse",
        "test_main_editing_another_config_next_to_the_pr_s_edit_keeps_reuse",
        "test_main_editing_the_floors_file_the_settings_name_voids_reuse",
        "test_main_editing_the_measured_config_voids_reuse_naming_the_field",
        "test_main_editing_the_same_master_file_elsewhere_keeps_reuse",
        "test_main_raising_an_accuracy_floor_after_the_run_voids_reuse",
        "test_the_real_configs_reuse_when_nothing_measured_changed",
        # schemas, on InferenceX's real data
        "test_both_engines_accept_the_real_data",
        # the house rules: vulture over all of infx
        "test_no_dead_code",
    }
)


def slow_reason(item: pytest.Item) -> str | None:
    """Why a collected test belongs to the slow suite, or None when it is fast."""
    path = Path(item.path).resolve()
    module = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    if module in SLOW_MODULES:
        return "builds, clones or runs an external client"
    if module.startswith("tests/actions/") and module not in FAST_ACTIONS_MODULES:
        return "runs workflow jobs through the harness"
    params = getattr(item, "callspec", None)
    if "postgres" in getattr(item, "fixturenames", ()) or (
        params is not None
        and "postgresql" in [v for v in params.params.values() if isinstance(v, str)]
    ):
        return "the PostgreSQL half of the history tests"
    # Where @settings keeps a test's settings (hypothesis has no public name for it).
    function = getattr(item, "obj", None)
    examples = getattr(
        getattr(function, "_hypothesis_internal_use_settings", None), "max_examples", 0
    )
    if examples > DEFAULT_EXAMPLES:
        return f"a property test of {examples} examples"
    if getattr(item, "originalname", item.name) in SLOW_TESTS:
        return "measured over half a second"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = slow_reason(item)
        if reason is not None:
            item.add_marker(pytest.mark.slow(reason=reason))


# Unmarked tests that took over a second, named at the end of a fast run.
_UNMARKED_OVER = 1.0
_unmarked_slow: list[tuple[float, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.duration > _UNMARKED_OVER and "slow" not in report.keywords:
        _unmarked_slow.append((report.duration, report.nodeid))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if _unmarked_slow and "not slow" in (config.option.markexpr or ""):
        terminalreporter.section(f"over {_UNMARKED_OVER:.0f} s and not marked slow")
        for duration, nodeid in sorted(_unmarked_slow, reverse=True):
            terminalreporter.write_line(f"{duration:5.2f}s {nodeid}")
        terminalreporter.write_line("add them to SLOW_TESTS in tests/conftest.py if they stay slow")


# An address where nothing answers: a test that forgets the fake API fails at once.
NO_API = "http://127.0.0.1:9"


@pytest.fixture(autouse=True, scope="session")
def outside_actions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite runs outside GitHub Actions even when it runs inside it (ci.yml): no test
    or fixture, session-wide ones included, sees or writes the runner's files and
    variables; what a test needs from that environment, it sets itself (monkeypatch).
    The API address is pinned where nothing answers (unset, PyGithub would go to the real
    GitHub), and crash logs go to the session's own cache, not the user's."""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("GITHUB_", "RUNNER_", "INFX_")) or name == "GH_TOKEN":
                patch.delenv(name)
        patch.setenv("GITHUB_API_URL", NO_API)
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo")


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The URL of a throw-away PostgreSQL server for the whole session (see
    tests/history/postgres.py); skips only where none can run: not root and no binaries."""
    from tests.history.postgres import server, unavailable

    reason = unavailable()
    if reason:
        pytest.skip(reason)
    with server() as url:
        yield url


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    """A fake GitHub API of this test's own, which PyGithub reaches through GITHUB_API_URL."""
    with FakeGitHub() as fake:
        fake.state.workdir = tmp_path / "api-git"
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GITHUB_TOKEN", "test-token")
        monkeypatch.setenv("GITHUB_REPOSITORY", "acme/bench")
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
        monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
        yield fake
