"""The `changes` use case: after a main run, the series of main's history that stepped in
its newest runs, with the commits between the last good and the first changed run, and
the issues to open for them. The command prints, summarizes and opens what this returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from infx.history.sources import stored_documents
from infx.results.compare import facts
from infx.results.compare.baseline import all_configs
from infx.results.compare.rules import DEFAULT_WORKFLOW
from infx.results.ingest.files import load_results
from infx.results.render.changes import changes_report, plan_issues
from infx.results.verdict.changes import detect
from infx.results.verdict.steps import ChangeIssue, Commits, ranges, step_json
from infx.settings import Settings


@dataclass(frozen=True)
class ChangesRequest:
    where: str | None = None  # --history DIR|URL; None: main's runs through the API
    current: Path | None = None  # this run's table, the newest point
    runs: int = 20
    workflow: str = DEFAULT_WORKFLOW
    branch: str | None = None  # None: main-branch in infx.toml
    recent: int = 3
    threshold: float = 2.0
    issue: bool | None = None  # None: change-issues in infx.toml [results]
    output_format: str = "text"


@dataclass(frozen=True)
class ChangesOutcome:
    markdown: str  # the report: the job summary, and stdout in text format
    stdout: str
    warnings: list[str] = field(default_factory=list)  # stderr, first
    issues: list[ChangeIssue] = field(default_factory=list)  # to open, labelled `label`
    label: str = ""


def changes(
    request: ChangesRequest,
    settings: Settings,
    server: str,
    github: Callable[[], facts.Reader],
) -> ChangesOutcome:
    """Find the steps; `github` gives the API client, asked for only when the history, the
    commits or the issues need it."""
    branch = request.branch or settings.main_branch
    issue = settings.results.change_issues if request.issue is None else request.issue
    client = None
    if request.where is not None:
        history = stored_documents(request.where, request.runs)
    else:
        client = github()
        history = all_configs(client, workflow=request.workflow, branch=branch, runs=request.runs)
    if request.current is not None:
        newest = load_results(request.current)
        seen = (newest.get("run") or {}).get("id")
        history = [d for d in history if (d.get("run") or {}).get("id") != seen] + [newest]
    steps = detect(history, request.recent, request.threshold)
    groups = ranges(steps)
    commits: Commits = {}
    warnings: list[str] = []
    if groups and (client is not None or issue):
        client = client or github()
        commits, warnings = facts.commits_of(client, groups)
    slug = client.slug if client is not None else ""
    markdown = changes_report(groups, commits, server if slug else "", slug)
    stdout = json.dumps([step_json(s) for s in steps], indent=2)
    issues = plan_issues(groups, commits, server, slug, branch) if issue else []
    return ChangesOutcome(
        markdown=markdown,
        stdout=stdout if request.output_format == "json" else markdown,
        warnings=warnings,
        issues=issues,
        label=settings.results.change_issue_label,
    )
