"""The GitHub edge of the results commands: read what the rules need, write what they
decided. Decides nothing itself: the rules are in `gate`, `comparison`, `steps` and
`render`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Protocol

from infx.context import repo_slug
from infx.errors import GitHubError
from infx.github.values import Comment, LabelEvent, Pull
from infx.results.compare.baseline import Client as SearchClient
from infx.results.compare.baseline import find
from infx.results.compare.rules import (
    CompareOutcome,
    HistorySource,
    MainHistory,
    Reporting,
    api_history,
)
from infx.results.render.comment import sticky
from infx.results.table.rows import Row
from infx.results.verdict.gate import (
    Acknowledgement,
    acknowledgement,
    askers,
    is_bot,
    label_adders,
    same_comment,
    shown_since,
    verdict_digest,
)
from infx.results.verdict.report import Report
from infx.results.verdict.steps import ChangeIssue, Commits, Range, Step, unopened

if TYPE_CHECKING:  # the client (PyGithub) loads only when a command talks to GitHub
    from infx.github.client import GitHub


class Reader(SearchClient, Protocol):
    """The GitHub reads and writes of the results commands (infx.github.client.GitHub)."""

    slug: str

    def pull(self, number: int) -> Pull: ...
    def comments(self, number: int) -> list[Comment]: ...
    def permission(self, login: str) -> str: ...
    def label_events(self, number: int) -> list[LabelEvent]: ...
    def create_comment(self, number: int, body: str) -> Comment: ...
    def edit_comment(self, comment_id: int, body: str) -> Comment: ...
    def create_check_run(
        self, name: str, head_sha: str, conclusion: str, title: str, summary: str
    ) -> int: ...
    def commits_between(self, base: str, head: str) -> list[tuple[str, str]]: ...
    def open_issues(self, label: str) -> list[tuple[int, str, str]]: ...
    def create_issue(self, title: str, body: str, labels: list[str]) -> int: ...


def client_of(repo: str | None) -> Callable[[], GitHub]:
    """The API client of --repo, made on first use and kept: a command that needs none
    never asks which repository it is in."""

    @cache
    def client() -> GitHub:
        from infx.github.client import GitHub  # PyGithub: start-up time

        return GitHub(repo_slug(repo))

    return client


def main_history(client: Reader, rows: list[Row], source: HistorySource) -> MainHistory:
    """Main's runs holding these rows' configs, through the API within the request budget."""
    runs = source.api_runs
    branch = source.branch or "main"
    search = find(
        client,
        rows,
        workflow=source.workflow,
        branch=branch,
        budget=source.budget or runs + 6,
        run_id=source.baseline_run,
        runs=runs,
    )
    docs = [b.document() for b in reversed(search.baselines)]
    return api_history(docs, branch, search.describe())


def read_acknowledgement(
    client: Reader,
    number: int,
    label: str,
    bot_login: str,
    report: Report,
    head: str | None = None,
) -> Acknowledgement:
    """The acknowledgement of this failing verdict, if one counts: the label (who added it
    last, and when, by its `labeled` events) or an /ack-regression comment, each given
    after the sticky comment began showing this verdict (its digest, of `head`, else the
    PR's head) by someone with write, maintain or admin permission."""
    pull = client.pull(number)
    digest = verdict_digest(report, head or pull.head_sha)
    comments = client.comments(number)
    since = shown_since(sticky(comments, bot_login), digest)
    events = client.label_events(number) if label and label in pull.labels else []
    adders = label_adders(pull.labels, events, label)
    people = set(askers(comments, since))
    if adders and since is not None and adders[-1].created_at > since:
        people |= {adders[-1].actor} - {""}
    permissions = {login: client.permission(login) for login in sorted(people) if not is_bot(login)}
    return acknowledgement(digest, since, pull.labels, events, comments, permissions, label)


def upsert_comment(client: Reader, number: int, body: str, bot_login: str) -> str:
    """Edit the sticky comment in place; create it only when the PR has none."""
    found = sticky(client.comments(number), bot_login)
    if found is None:
        client.create_comment(number, body)
        return "created"
    if same_comment(found.body, body):
        return "kept"
    client.edit_comment(found.id, body)
    return "updated"


def publish(github: Callable[[], Reader], how: Reporting, done: CompareOutcome) -> Iterator[str]:
    """Post the comment on the PR and the check run on its head, saying each as it is done."""
    if how.pr is not None:
        action = upsert_comment(github(), how.pr, done.comment, how.bot_login)
        yield f"{action} the results comment on #{how.pr}"
    if done.check is not None:
        check = done.check
        github().create_check_run(
            check.name, check.sha, check.conclusion, check.title, check.summary
        )
        yield f"check run {check.name} on {check.sha[:12]}: {check.conclusion}"


def commits_of(client: Reader, groups: dict[Range, list[Step]]) -> tuple[Commits, list[str]]:
    """The commits between each range's last good and first changed run, and a warning for
    each range GitHub would not list (the report stands without the list)."""
    commits: Commits = {}
    warnings = []
    for key, found in groups.items():
        good, bad = found[0].good.get("sha"), found[0].bad.get("sha")
        if isinstance(good, str) and isinstance(bad, str):
            try:
                commits[key] = client.commits_between(good, bad)
            except GitHubError as exc:
                warnings.append(f"infx: warning: commits not listed: {exc}")
    return commits, warnings


def open_issues(
    github: Callable[[], Reader], issues: list[ChangeIssue], label: str
) -> Iterator[str]:
    """Open an issue per range, never twice for one run (an open issue names its run)."""
    if not issues:
        return
    existing = [body for _, _, body in github().open_issues(label)]
    for issue, already in unopened(issues, existing):
        if already:
            yield f"issue for run {issue.run_id} already open"
            continue
        number = github().create_issue(issue.title, issue.body, [label])
        yield f"opened issue #{number} for run {issue.run_id}"
