"""Repository settings: one block a benchmark repository commits, read by every command.

`infx.toml` at the repository root, or a `[tool.infx]` table in its `pyproject.toml`
(towncrier's convention, for repositories that already have one). A dedicated file is
the first choice because a benchmark repository like InferenceX is not a Python
package and has no root pyproject.toml. Command-line options override every setting.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infx import schemas
from infx.errors import UsageError

SETTINGS_FILE = "infx.toml"
# The sweep workflow: its file name (the id the API and every command's --workflow-id take)
# and its path in the repository.
SWEEP_WORKFLOW = "run-sweep.yml"
SWEEP_WORKFLOW_PATH = f".github/workflows/{SWEEP_WORKFLOW}"
# What every benchmark job reads besides its recipe script: the sweep workflow, which
# passes each job its inputs, and the job template. A sweep's manifest records their
# bytes, so a reused run must have run the same ones.
JOB_FILES = (SWEEP_WORKFLOW_PATH, ".github/workflows/benchmark-tmpl.yml")

CHANGELOG_FILE = "perf-changelog.yaml"
MASTER_GLOB = "configs/*-master.yaml"
RUNNERS_FILE = "configs/runners.yaml"
# Where pr-links and the API point when nothing names a GitHub Enterprise host.
DEFAULT_SERVER = "https://github.com"


@dataclass(frozen=True)
class ResultsSettings:
    """`[results]`: how `infx results compare` and `changes` gate and report."""

    acknowledge_label: str = "regression-acknowledged"
    change_issues: bool = False
    change_issue_label: str = "performance-change"
    history_runs: int = 20
    site_url: str | None = None  # the results site: the PR comment links to its overlay
    confirm_repeats: int = 0  # repeats a sweep's compare dispatches for unconfirmed configs
    paired_repeats: bool = (
        False  # a repeat measures main's image beside the PR's (read at the base)
    )
    false_fail: float = 0.05  # unchanged sweeps the gate may fail (the verdict's error rate)


@dataclass(frozen=True)
class ReuseSettings:
    """`[reuse]`: what a moving image tag does to reuse (`moving-tags`: "record", or
    "refuse"). docs/reuse.md says what each trusts."""

    moving_tags: str = "record"


@dataclass(frozen=True)
class ReviewSettings:
    """`[review]`: the code-owner sign-off and the Pareto coverage check (docs/review.md)."""

    exempt: tuple[str, ...] = ()  # owners whose sign-off is never required (a core team)
    escalate: tuple[str, ...] = ()  # who the sign-off verdict asks when coverage is short
    pareto_points: int = 5  # frontier points a curve needs for the coverage check to pass


@dataclass(frozen=True)
class Settings:
    repository: str | None = None
    server: str | None = None
    main_branch: str = "main"
    changelog: str = CHANGELOG_FILE
    master_configs: tuple[str, ...] = (MASTER_GLOB,)
    runners: str = RUNNERS_FILE
    # The InferenceX format the repository is on (infx.formats); None: chosen from its data.
    format: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    history: str | None = None
    job_files: tuple[str, ...] = JOB_FILES
    results: ResultsSettings = field(default_factory=ResultsSettings)
    source: str | None = None
    # GPU-hours per sweep category (primary label role, or "push"); none: no limit.
    budget: Mapping[str, float] = field(default_factory=dict)
    # A path to an InferenceX thresholds file, or its table ({default, models}); None: no floors.
    accuracy_floors: str | Mapping[str, Any] | None = None
    rerun_other_node: bool = True
    reuse: ReuseSettings = field(default_factory=ReuseSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)

    def label(self, role: str) -> str:
        """The repository's name for a sweep label (the role's own name unless renamed)."""
        return self.labels.get(role, role)


def _table(root: Path) -> tuple[dict[str, Any], str] | None:
    dedicated = root / SETTINGS_FILE
    if dedicated.is_file():
        return _read(dedicated), SETTINGS_FILE
    if dedicated.exists():  # a folder named infx.toml: never read as "no settings"
        raise UsageError(f"{SETTINGS_FILE} is not a file")
    project = root / "pyproject.toml"
    if project.is_file():
        table = _tool_table(_read(project), "pyproject.toml")
        if table is not None:
            return table, "pyproject.toml [tool.infx]"
    return None


def _tool_table(project: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """pyproject.toml's [tool.infx] table (None: it has none); `tool = 1` or `tool.infx = 1`
    is a usage error naming it, not a crash."""
    tool = project.get("tool", {})
    if not isinstance(tool, Mapping):
        return None
    table = tool.get("infx")
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{name}: tool.infx must be a table, not {type(table).__name__}")
    return table


def _read(path: Path) -> dict[str, Any]:
    return _loads(path.read_bytes(), path.name)


def table_of(data: bytes, name: str) -> dict[str, Any]:
    """A settings file's bytes (read at a commit) as TOML; not TOML is a usage error."""
    return _loads(data, name)


def _loads(data: bytes, name: str) -> dict[str, Any]:
    import tomllib  # only where a settings file exists

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name}: not valid TOML: {exc}") from None


def parse(table: Mapping[str, Any], source: str) -> Settings:
    """Settings from a parsed table; a wrong key or value is a usage error naming it."""
    problems = schemas.errors("settings", dict(table))
    if problems:
        message = schemas.describe(problems[0]) or problems[0].message
        raise UsageError(f"{source}: {message}")
    for where, value in _numbers(table, tuple(table)):
        if not math.isfinite(value):
            raise UsageError(f"{source}: {where} must be a finite number, not {value}")
    return Settings(
        repository=table.get("repository"),
        server=table["server"].rstrip("/") if "server" in table else None,
        main_branch=table.get("main-branch", "main"),
        changelog=table.get("changelog", CHANGELOG_FILE),
        master_configs=tuple(table.get("master-configs", (MASTER_GLOB,))),
        runners=table.get("runners", RUNNERS_FILE),
        format=table.get("format"),
        labels=dict(table.get("labels", {})),
        history=table.get("history"),
        job_files=tuple(table.get("job-files", JOB_FILES)),
        results=_results(table.get("results", {})),
        source=source,
        budget=dict(table.get("budget", {})),
        accuracy_floors=table.get("accuracy-floors"),
        rerun_other_node=table.get("rerun", {}).get("other-node", True),
        reuse=ReuseSettings(
            moving_tags=table.get("reuse", {}).get("moving-tags", "record"),
        ),
        review=ReviewSettings(
            exempt=tuple(table.get("review", {}).get("exempt", ())),
            escalate=tuple(table.get("review", {}).get("escalate", ())),
            pareto_points=table.get("review", {}).get("pareto-points", 5),
        ),
    )


def _numbers(table: Mapping[str, Any], keys: tuple[str, ...]) -> Iterator[tuple[str, float]]:
    """Every number below the given keys (TOML allows nan and inf; a schema cannot refuse
    them, and a budget, floor or false-fail rate of nan would compare false with everything)."""
    todo: list[tuple[str, Any]] = [(key, table[key]) for key in keys if key in table]
    while todo:
        where, value = todo.pop()
        if isinstance(value, Mapping):
            todo.extend((f"{where}.{k}", v) for k, v in value.items())
        elif isinstance(value, float):
            yield where, value


def _results(table: Mapping[str, Any]) -> ResultsSettings:
    default = ResultsSettings()
    return ResultsSettings(
        acknowledge_label=table.get("acknowledge-label", default.acknowledge_label),
        change_issues=table.get("change-issues", default.change_issues),
        change_issue_label=table.get("change-issue-label", default.change_issue_label),
        history_runs=table.get("history-runs", default.history_runs),
        site_url=table.get("site-url", default.site_url),
        confirm_repeats=table.get("confirm-repeats", default.confirm_repeats),
        paired_repeats=table.get("paired-repeats", default.paired_repeats),
        false_fail=float(table.get("false-fail", default.false_fail)),
    )


def load(root: Path) -> Settings:
    """The settings of the repository at `root` (defaults when it has none)."""
    found = _table(root)
    return Settings() if found is None else parse(*found)


# The files settings may come from, in the order they are looked for.
SETTINGS_FILES = (SETTINGS_FILE, "pyproject.toml")


def load_at(root: Path, ref: str) -> Settings:
    """The settings as committed at `ref` (defaults when it has none): what a pull request
    may not change for itself, such as its GPU budget, is read at its base."""
    from infx import git

    return committed(git.read_blobs(ref, list(SETTINGS_FILES), root), ref)


def committed(files: Mapping[str, bytes | None], ref: str) -> Settings:
    """The settings of SETTINGS_FILES' bytes as read at `ref` (None: no such file)."""
    for name, source in ((SETTINGS_FILE, SETTINGS_FILE), ("pyproject.toml", None)):
        data = files[name]
        if data is None:
            continue
        table = _loads(data, f"{name} at {ref}")
        if source is None:
            found = _tool_table(table, f"{name} at {ref}")
            if found is None:
                continue
            table = found
            source = "pyproject.toml [tool.infx]"
        return parse(table, f"{source} at {ref}")
    return Settings()
