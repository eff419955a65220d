"""The one GitHub REST client infx uses: PyGithub, configured as Actions expects.

Token from GH_TOKEN or GITHUB_TOKEN; API base from GITHUB_API_URL (default
https://api.github.com); retries with backoff on 5xx, 429 and rate-limit 403s
(honouring Retry-After and X-RateLimit-Reset, through PyGithub's GithubRetry);
a timeout on every request; 100 items a page. Every failure surfaces as one
GitHubError. Methods return plain dataclasses built from the response JSON, so
the decision logic never touches PyGithub objects.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

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
    title: str = ""


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


def _time(value: str | None) -> datetime:
    if not value:
        return datetime.min.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _raw(obj: Any) -> dict[str, Any]:
    """The JSON an object was built from. `raw_data` would make PyGithub fetch the full
    object again (one request per list item), which the request budget cannot afford."""
    return obj._rawData


def _pull(raw: dict[str, Any]) -> Pull:
    head = raw.get("head") or {}
    return Pull(
        number=raw["number"],
        state=raw.get("state", ""),
        draft=bool(raw.get("draft")),
        merged_at=_time(raw["merged_at"]) if raw.get("merged_at") else None,
        head_ref=head.get("ref", ""),
        head_sha=head.get("sha", ""),
        head_repo=(head.get("repo") or {}).get("full_name"),
        labels=tuple(label["name"] for label in raw.get("labels", [])),
        title=raw.get("title", ""),
    )


def _comment(raw: dict[str, Any], issue_number: int | None = None) -> Comment:
    return Comment(
        id=raw["id"],
        author=(raw.get("user") or {}).get("login", ""),
        association=raw.get("author_association", "NONE"),
        body=raw.get("body") or "",
        created_at=_time(raw.get("created_at")),
        updated_at=_time(raw.get("updated_at")),
        issue_number=issue_number,
    )


def _run(raw: dict[str, Any]) -> Run:
    return Run(
        id=raw["id"],
        head_sha=raw.get("head_sha", ""),
        head_branch=raw.get("head_branch"),
        event=raw.get("event", ""),
        status=raw.get("status", ""),
        conclusion=raw.get("conclusion"),
        path=raw.get("path", ""),
        run_attempt=int(raw.get("run_attempt") or 1),
        html_url=raw.get("html_url", ""),
        created_at=_time(raw.get("created_at")),
    )


def _files(raw: dict[str, Any]) -> tuple[ChangedFile, ...]:
    return tuple(
        ChangedFile(f["filename"], f.get("status", ""), f.get("patch") or "")
        for f in raw.get("files", [])
    )


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
            max_rate_limit_wait=float(os.environ.get("INFX_MAX_RATE_LIMIT_WAIT", "300")),
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
        self._timeout = timeout
        self._repo = self._gh.get_repo(repo)
        self._permissions: dict[str, str] = {}

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except GithubException as exc:
            detail = exc.data.get("message") if isinstance(exc.data, dict) else exc.message
            raise GitHubError(
                f"GitHub API error while {what}: {exc.status} {detail or ''}".rstrip(), exc.status
            ) from None
        except RateLimitExceededExceedsMaxWait as exc:
            raise GitHubError(f"GitHub rate limit while {what}: {exc}") from None
        except (requests.RequestException, OSError) as exc:
            raise GitHubError(f"GitHub API unreachable while {what}: {exc}") from None

    def _list(self, what: str, pages: Callable[[], Any]) -> list[dict[str, Any]]:
        return self._call(what, lambda: [_raw(item) for item in pages()])

    # --- reads -------------------------------------------------------------

    def pull(self, number: int) -> Pull:
        return self._call(
            f"reading PR #{number}", lambda: _pull(self._repo.get_pull(number).raw_data)
        )

    def pulls_for_commit(self, sha: str) -> list[Pull]:
        raws = self._list(
            f"listing PRs of commit {sha[:12]}", lambda: self._repo.get_commit(sha).get_pulls()
        )
        return [_pull(raw) for raw in raws]

    def pull_commits(self, number: int) -> list[str]:
        raws = self._list(
            f"listing commits of PR #{number}", lambda: self._repo.get_pull(number).get_commits()
        )
        return [raw["sha"] for raw in raws]

    def comments(self, number: int) -> list[Comment]:
        """Every comment of an issue or PR, oldest first (all pages)."""
        raws = self._list(
            f"listing comments of #{number}", lambda: self._repo.get_issue(number).get_comments()
        )
        return [_comment(raw, number) for raw in raws]

    def _issue_comment(self, comment_id: int) -> IssueComment:
        return IssueComment(
            self._gh.requester, url=f"{self._repo.url}/issues/comments/{comment_id}"
        )

    def comment(self, comment_id: int) -> Comment:
        def fetch() -> Comment:
            raw = self._issue_comment(comment_id).raw_data
            tail = (raw.get("issue_url") or "").rsplit("/", 1)[-1]
            return _comment(raw, int(tail) if tail.isdigit() else None)

        return self._call(f"reading comment {comment_id}", fetch)

    def permission(self, login: str) -> str:
        """admin, write, read or none (maintain reads as write, triage as read)."""
        if login not in self._permissions:
            self._permissions[login] = self._call(
                f"reading the permission of {login}",
                lambda: self._repo.get_collaborator_permission(login),
            )
        return self._permissions[login]

    def run(self, run_id: int) -> Run:
        return self._call(
            f"reading run {run_id}", lambda: _run(self._repo.get_workflow_run(run_id).raw_data)
        )

    def runs(self, workflow: str, branch: str, event: str = "pull_request") -> Iterator[Run]:
        """Completed runs of a workflow on a branch, newest first, fetched a page at a time."""
        what = f"listing runs of {workflow}"
        pages = self._call(
            what,
            lambda: iter(
                self._repo.get_workflow(workflow).get_runs(
                    branch=branch, event=event, status="completed"
                )
            ),
        )
        while True:
            item = self._call(what, lambda: next(pages, None))
            if item is None:
                return
            yield _run(_raw(item))

    def artifacts(self, run_id: int) -> list[Artifact]:
        url = f"{self._repo.url}/actions/runs/{run_id}/artifacts"
        raws = self._list(
            f"listing artifacts of run {run_id}",
            lambda: PaginatedList(GhArtifact, self._gh.requester, url, None, list_item="artifacts"),
        )
        return [Artifact(raw["id"], raw["name"], bool(raw.get("expired"))) for raw in raws]

    def label_events(self, number: int) -> list[LabelEvent]:
        raws = self._list(
            f"reading the timeline of PR #{number}",
            lambda: self._repo.get_issue(number).get_timeline(),
        )
        return [
            LabelEvent(raw["event"], raw["label"]["name"], _time(raw.get("created_at")))
            for raw in raws
            if raw.get("event") in ("labeled", "unlabeled") and raw.get("label")
        ]

    def compare(self, base: str, head: str) -> Comparison:
        def fetch() -> Comparison:
            raw = self._repo.compare(base, head).raw_data
            commits = tuple((c["sha"], len(c.get("parents", []))) for c in raw.get("commits", []))
            return Comparison(commits, _files(raw))

        return self._call(f"comparing {base[:12]}...{head[:12]}", fetch)

    def commit_files(self, sha: str) -> list[ChangedFile]:
        return self._call(
            f"reading commit {sha[:12]}", lambda: list(_files(self._repo.get_commit(sha).raw_data))
        )

    def check_runs(self, sha: str) -> list[tuple[str, str, str | None]]:
        """(name, status, conclusion) of every check run on a commit."""
        raws = self._list(
            f"reading checks of {sha[:12]}", lambda: self._repo.get_commit(sha).get_check_runs()
        )
        return [(raw["name"], raw.get("status", ""), raw.get("conclusion")) for raw in raws]

    # --- writes ------------------------------------------------------------

    def react(self, comment_id: int, content: str, bot_login: str) -> None:
        """Leave exactly one of +1/-1 from the bot on a comment."""
        other = "-1" if content == "+1" else "+1"

        def apply() -> None:
            comment = self._issue_comment(comment_id)
            mine = [
                _raw(r)
                for r in comment.get_reactions()
                if (_raw(r).get("user") or {}).get("login") == bot_login
            ]
            for reaction in mine:
                if reaction.get("content") == other:
                    comment.delete_reaction(reaction["id"])
            if not any(r.get("content") == content for r in mine):
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

    def merge(self, number: int, method: str, sha: str) -> None:
        def apply() -> None:
            status = self._repo.get_pull(number).merge(merge_method=method, sha=sha)
            if not status.merged:
                raise GitHubError(f"PR #{number} was not merged: {status.message}")

        self._call(f"merging PR #{number}", apply)

    # --- results: baseline runs, their artifacts, the sticky comment --------------
    # Each method below makes exactly one request (one page), so a caller can count
    # its cost; every response is checked for the shape it must have.

    def _json(self, what: str, verb: str, url: str, **kwargs: Any) -> Any:
        _, data = self._call(
            what, lambda: self._gh.requester.requestJsonAndCheck(verb, url, **kwargs)
        )
        return data

    def successful_runs(
        self, workflow: str, branch: str, event: str, limit: int = 100
    ) -> list[Run]:
        """The newest completed-successfully runs of a workflow, newest first."""
        what = f"listing successful {event} runs of {workflow} on {branch}"
        params = {"branch": branch, "event": event, "status": "success", "per_page": limit}
        data = self._json(
            what, "GET", f"{self._repo.url}/actions/workflows/{workflow}/runs", parameters=params
        )
        return [_run(raw) for raw in _items(data, "workflow_runs", what, _RUN_FIELDS)]

    def artifacts_named(self, name: str, limit: int = 100) -> list[RunArtifact]:
        """The repository's newest artifacts called `name`, across runs, newest first."""
        what = f"listing artifacts named {name}"
        params = {"name": name, "per_page": limit}
        data = self._json(what, "GET", f"{self._repo.url}/actions/artifacts", parameters=params)
        return [_run_artifact(raw) for raw in _items(data, "artifacts", what, _ARTIFACT_FIELDS)]

    def run_artifacts_named(self, run_id: int, name: str) -> list[RunArtifact]:
        what = f"listing artifacts of run {run_id}"
        data = self._json(
            what,
            "GET",
            f"{self._repo.url}/actions/runs/{run_id}/artifacts",
            parameters={"name": name, "per_page": 100},
        )
        found = [_run_artifact(raw) for raw in _items(data, "artifacts", what, _ARTIFACT_FIELDS)]
        return [a for a in found if a.name == name]

    def download_artifact(
        self, artifact_id: int, target: str | os.PathLike[str], max_bytes: int
    ) -> int:
        """Save an artifact's zip to `target`; stop with an error past `max_bytes`.

        The API answers with a redirect to a signed storage URL on another host
        (blob.core.windows.net), which PyGithub refuses to follow; the storage request
        goes out without our token, on the API's scheme only. Returns the size.
        """
        what = f"downloading artifact {artifact_id}"
        url = f"{self._repo.url}/actions/artifacts/{artifact_id}/zip"
        status, headers, body = self._call(what, lambda: self._gh.requester.requestJson("GET", url))
        location = headers.get("location", "")
        if status != 302 or not location:
            detail = ""
            with contextlib.suppress(ValueError, AttributeError):
                detail = json.loads(body).get("message", "")
            raise GitHubError(f"GitHub API error while {what}: {status} {detail}".rstrip(), status)
        if urlsplit(location).scheme != urlsplit(self._gh.requester.base_url).scheme:
            raise GitHubError(f"{what}: refusing a redirect to {urlsplit(location).scheme}")

        def fetch() -> int:
            size = 0
            with requests.get(location, stream=True, timeout=self._timeout) as response:
                if response.status_code != 200:
                    raise GitHubError(f"{what}: storage answered {response.status_code}")
                with open(target, "wb") as fh:
                    for chunk in response.iter_content(chunk_size=1 << 20):
                        size += len(chunk)
                        if size > max_bytes:
                            raise GitHubError(f"{what}: larger than {max_bytes} bytes")
                        fh.write(chunk)
            with open(target, "rb") as fh:
                if fh.read(4) != b"PK\x03\x04":
                    raise GitHubError(f"{what}: the download is not a zip archive")
            return size

        return self._call(what, fetch)

    def create_comment(self, number: int, body: str) -> Comment:
        what = f"commenting on #{number}"
        data = self._json(
            what, "POST", f"{self._repo.url}/issues/{number}/comments", input={"body": body}
        )
        return _comment(_shaped(data, what, _COMMENT_FIELDS), number)

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        what = f"editing comment {comment_id}"
        data = self._json(
            what, "PATCH", f"{self._repo.url}/issues/comments/{comment_id}", input={"body": body}
        )
        return _comment(_shaped(data, what, _COMMENT_FIELDS))


@dataclass(frozen=True)
class RunArtifact:
    id: int
    name: str
    expired: bool
    run_id: int | None
    head_branch: str | None
    created_at: datetime


_RUN_FIELDS = {"id": int, "head_sha": str, "event": str, "status": str, "path": str}
_ARTIFACT_FIELDS = {"id": int, "name": str, "expired": bool}
_COMMENT_FIELDS = {"id": int, "body": str}


def _shaped(raw: Any, what: str, fields: dict[str, type]) -> dict[str, Any]:
    """`raw` must be an object whose listed fields have the listed types (PyGithub turns a
    non-JSON body into {"data": ...}, which must not pass for an answer)."""
    if not isinstance(raw, dict):
        raise GitHubError(f"unexpected GitHub response while {what}: not an object")
    for key, kind in fields.items():
        value = raw.get(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise GitHubError(f"unexpected GitHub response while {what}: {key} is {value!r:.40}")
    return raw


def _items(data: Any, key: str, what: str, fields: dict[str, type]) -> list[dict[str, Any]]:
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise GitHubError(f"unexpected GitHub response while {what}: no {key} list")
    return [_shaped(item, what, fields) for item in items]


def _run_artifact(raw: dict[str, Any]) -> RunArtifact:
    run = raw.get("workflow_run") if isinstance(raw.get("workflow_run"), dict) else {}
    run_id = run.get("id")
    return RunArtifact(
        id=raw["id"],
        name=raw["name"],
        expired=raw["expired"],
        run_id=run_id if isinstance(run_id, int) and not isinstance(run_id, bool) else None,
        head_branch=run.get("head_branch") if isinstance(run.get("head_branch"), str) else None,
        created_at=_time(raw.get("created_at")),
    )
