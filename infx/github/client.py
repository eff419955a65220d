"""The one GitHub REST client infx uses: PyGithub, configured as Actions expects.

Token from GH_TOKEN or GITHUB_TOKEN; API base from GITHUB_API_URL (default
https://api.github.com); retries with backoff on 5xx, 429 and rate-limit 403s
(honouring Retry-After and X-RateLimit-Reset, through PyGithub's GithubRetry);
a timeout on every request; pagination at 100 items a page. Every failure
surfaces as one GitHubError. Methods return plain dataclasses, so the decision
logic above never touches PyGithub objects.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.Artifact import Artifact as GhArtifact
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.IssueComment import IssueComment
from github.PaginatedList import PaginatedList

from infx.errors import GitHubError

DEFAULT_API = "https://api.github.com"
T = TypeVar("T")


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    association: str
    body: str
    created_at: datetime
    updated_at: datetime
    issue_number: int | None = None


@dataclass(frozen=True)
class Pull:
    number: int
    state: str
    draft: bool
    merged_at: datetime | None
    head_ref: str
    head_sha: str
    head_repo: str | None
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    id: int
    head_sha: str
    head_branch: str | None
    event: str
    status: str
    conclusion: str | None
    path: str
    run_attempt: int
    html_url: str
    created_at: datetime


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    expired: bool


@dataclass(frozen=True)
class LabelEvent:
    action: str  # labeled | unlabeled
    label: str
    created_at: datetime


@dataclass(frozen=True)
class ChangedFile:
    filename: str
    status: str
    patch: str


@dataclass(frozen=True)
class Comparison:
    commits: tuple[tuple[str, int], ...]  # (sha, number of parents), oldest first
    files: tuple[ChangedFile, ...]


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class GitHub:
    """Read and write one repository."""

    def __init__(
        self,
        repo: str,
        *,
        token: str | None = None,
        api_url: str | None = None,
        timeout: float = 30,
        retries: int = 5,
        backoff: float = 1.0,
    ) -> None:
        token = token or os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
        api_url = (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API).rstrip("/")
        retry = GithubRetry(
            total=retries,
            backoff_factor=backoff,
            status_forcelist=[*range(500, 600), 429],
            secondary_rate_wait=backoff * 10,
            max_rate_limit_wait=float(os.environ.get("INFX_MAX_RATE_LIMIT_WAIT", 300)),
        )
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=api_url,
            timeout=int(timeout),
            retry=retry,
            per_page=100,
            lazy=True,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self.slug = repo
        self._repo = self._gh.get_repo(repo)
        self._permissions: dict[str, str] = {}

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except GithubException as exc:
            message = exc.message or (
                exc.data.get("message") if isinstance(exc.data, dict) else None
            )
            raise GitHubError(
                f"GitHub API error while {what}: {exc.status} {message or ''}".rstrip()
            ) from None
        except RateLimitExceededExceedsMaxWait as exc:
            raise GitHubError(f"GitHub rate limit while {what}: {exc}") from None
        except (requests.RequestException, OSError) as exc:
            raise GitHubError(f"GitHub API unreachable while {what}: {exc}") from None

    # --- reads -------------------------------------------------------------

    def pull(self, number: int) -> Pull:
        return self._call(f"reading PR #{number}", lambda: self._pull(self._repo.get_pull(number)))

    @staticmethod
    def _pull(pr: Any) -> Pull:
        head = pr.raw_data.get("head") or {}
        return Pull(
            number=pr.number,
            state=pr.state,
            draft=bool(pr.raw_data.get("draft")),
            merged_at=_utc(pr.merged_at),
            head_ref=head.get("ref", ""),
            head_sha=head.get("sha", ""),
            head_repo=((head.get("repo") or {}).get("full_name")),
            labels=tuple(label["name"] for label in pr.raw_data.get("labels", [])),
        )

    def pulls_for_commit(self, sha: str) -> list[Pull]:
        return self._call(
            f"listing PRs of commit {sha[:12]}",
            lambda: [self._pull(p) for p in self._repo.get_commit(sha).get_pulls()],
        )

    def pull_commits(self, number: int) -> list[str]:
        return self._call(
            f"listing commits of PR #{number}",
            lambda: [c.sha for c in self._repo.get_pull(number).get_commits()],
        )

    def is_pull_request(self, number: int) -> bool:
        return self._call(
            f"reading issue #{number}",
            lambda: self._repo.get_issue(number).raw_data.get("pull_request") is not None,
        )

    @staticmethod
    def _comment(c: Any, issue_number: int | None = None) -> Comment:
        raw = c.raw_data
        return Comment(
            id=c.id,
            author=(raw.get("user") or {}).get("login", ""),
            association=raw.get("author_association", "NONE"),
            body=raw.get("body") or "",
            created_at=_utc(c.created_at),
            updated_at=_utc(c.updated_at),
            issue_number=issue_number,
        )

    def comments(self, number: int) -> list[Comment]:
        """Every comment of an issue or PR, oldest first (all pages)."""
        return self._call(
            f"listing comments of #{number}",
            lambda: [self._comment(c, number) for c in self._repo.get_issue(number).get_comments()],
        )

    def _issue_comment(self, comment_id: int) -> Any:
        return IssueComment(
            self._gh.requester, url=f"{self._repo.url}/issues/comments/{comment_id}"
        )

    def comment(self, comment_id: int) -> Comment:
        def fetch() -> Comment:
            comment = self._issue_comment(comment_id)
            comment.complete()
            url = comment.raw_data.get("issue_url") or ""
            number = int(url.rsplit("/", 1)[-1]) if url.rsplit("/", 1)[-1].isdigit() else None
            return self._comment(comment, number)

        return self._call(f"reading comment {comment_id}", fetch)

    def permission(self, login: str) -> str:
        """admin, write, read or none (maintain reads as write, triage as read)."""
        if login not in self._permissions:
            self._permissions[login] = self._call(
                f"reading the permission of {login}",
                lambda: self._repo.get_collaborator_permission(login),
            )
        return self._permissions[login]

    @staticmethod
    def _run(r: Any) -> Run:
        raw = r.raw_data
        return Run(
            id=r.id,
            head_sha=raw.get("head_sha", ""),
            head_branch=raw.get("head_branch"),
            event=raw.get("event", ""),
            status=raw.get("status", ""),
            conclusion=raw.get("conclusion"),
            path=raw.get("path", ""),
            run_attempt=int(raw.get("run_attempt") or 1),
            html_url=raw.get("html_url", ""),
            created_at=_utc(r.created_at),
        )

    def run(self, run_id: int) -> Run:
        return self._call(
            f"reading run {run_id}", lambda: self._run(self._repo.get_workflow_run(run_id))
        )

    def runs(self, workflow: str, branch: str, event: str = "pull_request") -> Iterator[Run]:
        """Completed runs of a workflow on a branch, newest first, fetched a page at a time."""
        pages = self._call(
            f"listing runs of {workflow}",
            lambda: self._repo.get_workflow(workflow).get_runs(
                branch=branch, event=event, status="completed"
            ),
        )
        iterator = iter(pages)
        while True:
            item = self._call(f"listing runs of {workflow}", lambda: next(iterator, None))
            if item is None:
                return
            yield self._run(item)

    def artifacts(self, run_id: int) -> list[Artifact]:
        def fetch() -> list[Artifact]:
            pages = PaginatedList(
                GhArtifact,
                self._gh.requester,
                f"{self._repo.url}/actions/runs/{run_id}/artifacts",
                None,
                list_item="artifacts",
            )
            return [Artifact(a.id, a.name, bool(a.raw_data.get("expired"))) for a in pages]

        return self._call(f"listing artifacts of run {run_id}", fetch)

    def label_events(self, number: int) -> list[LabelEvent]:
        def fetch() -> list[LabelEvent]:
            events = []
            for event in self._repo.get_issue(number).get_timeline():
                raw = event.raw_data
                if raw.get("event") in ("labeled", "unlabeled") and raw.get("label"):
                    events.append(
                        LabelEvent(raw["event"], raw["label"]["name"], _utc(event.created_at))
                    )
            return events

        return self._call(f"reading the timeline of PR #{number}", fetch)

    def compare(self, base: str, head: str) -> Comparison:
        def fetch() -> Comparison:
            raw = self._repo.compare(base, head).raw_data
            commits = tuple((c["sha"], len(c.get("parents", []))) for c in raw.get("commits", []))
            files = tuple(
                ChangedFile(f["filename"], f.get("status", ""), f.get("patch") or "")
                for f in raw.get("files", [])
            )
            return Comparison(commits, files)

        return self._call(f"comparing {base[:12]}...{head[:12]}", fetch)

    def commit_files(self, sha: str) -> list[ChangedFile]:
        return self._call(
            f"reading commit {sha[:12]}",
            lambda: [
                ChangedFile(f["filename"], f.get("status", ""), f.get("patch") or "")
                for f in self._repo.get_commit(sha).raw_data.get("files", [])
            ],
        )

    def check_runs(self, sha: str) -> list[tuple[str, str, str | None]]:
        """(name, status, conclusion) of every check run on a commit."""
        return self._call(
            f"reading checks of {sha[:12]}",
            lambda: [
                (c.name, c.status, c.conclusion)
                for c in self._repo.get_commit(sha).get_check_runs()
            ],
        )

    # --- writes ------------------------------------------------------------

    def react(self, comment_id: int, content: str, bot_login: str) -> None:
        """Leave exactly one of +1/-1 from the bot on a comment."""
        other = "-1" if content == "+1" else "+1"

        def apply() -> None:
            comment = self._issue_comment(comment_id)
            mine = [r for r in comment.get_reactions() if r.user and r.user.login == bot_login]
            for reaction in mine:
                if reaction.content == other:
                    comment.delete_reaction(reaction.id)
            if not any(r.content == content for r in mine):
                comment.create_reaction(content)

        self._call(f"reacting to comment {comment_id}", apply)

    def post_comment(self, number: int, body: str) -> None:
        self._call(
            f"commenting on #{number}", lambda: self._repo.get_issue(number).create_comment(body)
        )

    def dispatch(self, event_type: str, payload: dict[str, Any]) -> None:
        self._call(
            f"dispatching {event_type}",
            lambda: self._repo.create_repository_dispatch(event_type, payload),
        )

    def merge(self, number: int, method: str, sha: str, title: str | None = None) -> None:
        def apply() -> None:
            pr = self._repo.get_pull(number)
            status = pr.merge(merge_method=method, sha=sha, commit_title=title or pr.title)
            if not status.merged:
                raise GitHubError(f"PR #{number} was not merged: {status.message}")

        self._call(f"merging PR #{number}", apply)
