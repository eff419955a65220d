"""The one GitHub REST client infx uses: PyGithub, configured as Actions expects.

Token from GH_TOKEN or GITHUB_TOKEN; API base from GITHUB_API_URL (default
https://api.github.com); retries with backoff on 5xx, 429 and rate-limit 403s
(honouring Retry-After and X-RateLimit-Reset, through PyGithub's GithubRetry);
a timeout on every request; 100 items a page. Every failure surfaces as one
GitHubError, and so does every answer that is not the JSON the endpoint documents
(an HTML page, an empty body, `{}`): reads return plain dataclasses checked field by
field, so the decision logic never sees a guess. Listings follow `Link: rel="next"`
themselves so a page cap and a repeated link end them; a decision's reads run under
`Limits` (see budget.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait

from infx.errors import GitHubError
from infx.github.budget import Limits, Meter, within
from infx.github.values import PrivateForkPolicy, RunnerGroup, SelfHostedRunner

DEFAULT_API = "https://api.github.com"
T = TypeVar("T")
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    association: str
    body: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Pull:
    number: int
    state: str
    merged_at: datetime | None
    head_ref: str
    head_sha: str
    head_repo: str | None
    base_ref: str
    labels: tuple[str, ...]
    created_at: datetime
    merge_commit_sha: str | None = None  # once merged: the commit the merge put on the base
    draft: bool = False


@dataclass(frozen=True)
class Run:
    id: int
    head_sha: str
    event: str
    status: str
    conclusion: str | None
    path: str
    run_attempt: int
    html_url: str
    created_at: datetime
    head_branch: str | None = None
    head_repo: str | None = None  # the repository the run's commit came from (a fork's)


@dataclass(frozen=True)
class Status:
    """A commit status: one context's state on a commit."""

    context: str
    state: str  # error | failure | pending | success
    description: str


@dataclass(frozen=True)
class Step:
    number: int
    name: str
    status: str
    conclusion: str | None


@dataclass(frozen=True)
class Job:
    """One job of a workflow run, as the jobs API lists it."""

    id: int
    run_id: int
    attempt: int
    name: str
    status: str
    conclusion: str | None
    started_at: datetime | None
    completed_at: datetime | None
    runner_name: str | None
    labels: tuple[str, ...]
    steps: tuple[Step, ...]

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.completed_at is None:
            return None
        return max(0.0, (self.completed_at - self.started_at).total_seconds())

    @property
    def failed_step(self) -> str | None:
        """The first step that failed, was cancelled, or never finished."""
        for step in self.steps:
            if step.conclusion in ("failure", "cancelled", "timed_out") or (
                step.status != "completed" and self.status == "completed"
            ):
                return step.name
        return None


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    expired: bool
    created_at: datetime | None  # GitHub may leave it out; listings across runs never do
    run_id: int | None = None  # the workflow run that uploaded it, when GitHub says
    head_branch: str | None = None
    head_sha: str | None = None
    size: int | None = None  # bytes of its zip archive, when GitHub says


@dataclass(frozen=True)
class LabelEvent:
    action: str  # labeled | unlabeled
    label: str
    created_at: datetime
    actor: str = ""  # who added or removed it ("": GitHub names no one)


class _Json:
    """One JSON object of an API answer, read with the types the endpoint documents."""

    def __init__(self, data: object, what: str) -> None:
        self.what = what
        if not isinstance(data, dict):
            raise _shape_error(data, what, "an object")
        self.data: dict[str, Any] = data

    def _get(self, key: str, kinds: tuple[type, ...], optional: bool) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            if kinds == (list,):
                raise _unexpected(self.what, f"no {key} list")
            raise _unexpected(self.what, f"{key} is {value!r:.40}")
        return value

    def text(self, key: str) -> str:
        return self._get(key, (str,), False)

    def maybe_text(self, key: str) -> str | None:
        return self._get(key, (str,), True)

    def number(self, key: str) -> int:
        return self._get(key, (int,), False)

    def maybe_number(self, key: str) -> int | None:
        return self._get(key, (int,), True)

    def flag(self, key: str) -> bool:
        return bool(self._get(key, (bool,), True))

    def obj(self, key: str) -> _Json:
        return _Json(self._get(key, (dict,), False), self.what)

    def maybe_obj(self, key: str) -> _Json | None:
        value = self._get(key, (dict,), True)
        return None if value is None else _Json(value, self.what)

    def items(self, key: str) -> list[_Json]:
        return [_Json(item, self.what) for item in self._get(key, (list,), False)]

    def time(self, key: str) -> datetime:
        value = self.text(key)
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise _unexpected(self.what, f"{key} is {value!r:.40}, not a time") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

    def maybe_time(self, key: str) -> datetime | None:
        return None if self.data.get(key) is None else self.time(key)

    def sha(self, key: str) -> str:
        value = self.text(key)
        if not re.fullmatch(r"[0-9a-f]{40}", value):
            raise _unexpected(self.what, f"{key} is {value!r:.50}, not a commit sha")
        return value


def _unexpected(what: str, detail: str) -> GitHubError:
    """An answer that is not what the endpoint documents: never guessed around."""
    return GitHubError(f"unexpected GitHub response while {what}: {detail}")


def _shape_error(data: object, what: str, expected: str) -> GitHubError:
    if data is None:
        return _unexpected(what, "an empty body")
    kind = {dict: "object", list: "list", str: "string", bool: "boolean"}.get(type(data), "number")
    return _unexpected(what, f"a JSON {kind}, not {expected}")


def _list_of(data: object, what: str, key: str | None) -> list[_Json]:
    if key is not None:
        return _Json(data, what).items(key)
    if not isinstance(data, list):
        raise _shape_error(data, what, "a list")
    return [_Json(item, what) for item in data]


class _MeteredRetry(GithubRetry):
    """GithubRetry that charges each retry to the decision and never waits past its deadline."""

    def __init__(self, meter: Meter, **kwargs: Any) -> None:
        self.meter = meter
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> _MeteredRetry:
        kw["meter"] = self.meter
        return super().new(**kw)

    def increment(
        self, method: str | None = None, url: str | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        self.meter.charge(f"retrying {method} {url}")
        return super().increment(method, url, *args, **kwargs)

    def sleep(self, response: Any = None) -> None:
        wait = (self.get_retry_after(response) if response is not None else None) or 0
        self.meter.allow_wait(max(wait, self.get_backoff_time()), "waiting to retry")
        super().sleep(response)


def _comment(item: _Json) -> Comment:
    user = item.maybe_obj("user")
    return Comment(
        id=item.number("id"),
        author=user.text("login") if user else "",
        association=item.maybe_text("author_association") or "NONE",
        body=item.maybe_text("body") or "",
        created_at=item.time("created_at"),
        updated_at=item.time("updated_at"),
    )


def _pull(item: _Json) -> Pull:
    head = item.obj("head")
    head_repo = head.maybe_obj("repo")
    return Pull(
        number=item.number("number"),
        state=item.text("state"),
        merged_at=item.maybe_time("merged_at"),
        head_ref=head.text("ref"),
        head_sha=head.sha("sha"),
        head_repo=head_repo.text("full_name") if head_repo else None,
        base_ref=item.obj("base").text("ref"),
        labels=tuple(label.text("name") for label in item.items("labels")),
        created_at=item.time("created_at"),
        merge_commit_sha=item.sha("merge_commit_sha")
        if item.maybe_text("merge_commit_sha")
        else None,
        draft=item.flag("draft"),
    )


def _run(item: _Json) -> Run:
    return Run(
        id=item.number("id"),
        head_sha=item.sha("head_sha"),
        event=item.text("event"),
        status=item.text("status"),
        conclusion=item.maybe_text("conclusion"),
        path=item.text("path"),
        run_attempt=item.maybe_number("run_attempt") or 1,
        html_url=item.text("html_url"),
        created_at=item.time("created_at"),
        head_branch=item.maybe_text("head_branch"),
        head_repo=head.text("full_name") if (head := item.maybe_obj("head_repository")) else None,
    )


def _job(item: _Json) -> Job:
    return Job(
        id=item.number("id"),
        run_id=item.number("run_id"),
        attempt=item.maybe_number("run_attempt") or 1,
        name=item.text("name"),
        status=item.text("status"),
        conclusion=item.maybe_text("conclusion"),
        started_at=item.maybe_time("started_at"),
        completed_at=item.maybe_time("completed_at"),
        runner_name=item.maybe_text("runner_name"),
        labels=tuple(
            str(label) for label in item.data.get("labels") or () if isinstance(label, str)
        ),
        steps=tuple(
            Step(
                step.number("number"),
                step.text("name"),
                step.text("status"),
                step.maybe_text("conclusion"),
            )
            for step in (item.items("steps") if item.data.get("steps") is not None else [])
        ),
    )


def _artifact(item: _Json) -> Artifact:
    run = item.maybe_obj("workflow_run")
    return Artifact(
        id=item.number("id"),
        name=item.text("name"),
        expired=item.flag("expired"),
        created_at=item.maybe_time("created_at"),
        run_id=run.number("id") if run else None,
        head_branch=run.maybe_text("head_branch") if run else None,
        head_sha=run.maybe_text("head_sha") if run else None,
        size=item.maybe_number("size_in_bytes"),
    )


def _across_runs(item: _Json) -> Artifact:
    """An artifact of a listing across runs, which must say its run and when it came."""
    artifact = _artifact(item)
    if artifact.run_id is None or artifact.created_at is None:
        raise _unexpected(item.what, "an artifact without its workflow_run or created_at")
    return artifact


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
        limits: Limits | None = None,
    ) -> None:
        token = token or os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
        self.api_url = (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API).rstrip("/")
        self.limits = limits or Limits.from_env()
        self.meter = Meter()
        retry = _MeteredRetry(
            self.meter,
            total=retries,
            # Waits of 0, 2, 4, 8 and 16 s: five retries span half a minute, longer than
            # GitHub's usual transient 5xx and a quarter of a decision's time cap.
            backoff_factor=backoff,
            status_forcelist=[*range(500, 600), 429],
            # Ten seconds, not the minute GitHub advises: a decision has two minutes, and
            # giving up only means no reuse.
            secondary_rate_wait=backoff * 10,
            max_rate_limit_wait=float(os.environ.get("INFX_MAX_RATE_LIMIT_WAIT", "300")),
        )
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            timeout=max(1, int(min(timeout, self.limits.seconds))),  # never past the cap
            retry=retry,
            per_page=100,
            lazy=True,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self.slug = repo
        self._timeout = timeout
        self._repo = self._gh.get_repo(repo)
        self._base = f"/repos/{repo}"
        self._permissions: dict[str, str] = {}

    def decide(self, fetch: Callable[[], T]) -> T:
        """Run one decision's reads within this client's limits."""
        return within(self.meter, self.limits, fetch)

    # --- transport -------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except GithubException as exc:
            detail = exc.data.get("message") if isinstance(exc.data, dict) else None
            raise GitHubError(
                f"GitHub API error while {what}: {exc.status} {detail or ''}".rstrip(), exc.status
            ) from None
        except RateLimitExceededExceedsMaxWait as exc:
            raise GitHubError(f"GitHub rate limit while {what}: {exc}") from None
        except (requests.RequestException, OSError) as exc:
            raise GitHubError(f"GitHub API unreachable while {what}: {exc}") from None

    def _get(
        self, what: str, url: str, params: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        """One GET: (headers, JSON). The body must be JSON; its shape is the caller's to check."""
        self.meter.charge(what)

        def request() -> tuple[dict[str, Any], Any]:
            try:
                return self._gh.requester.requestJsonAndCheck("GET", url, params)
            except ValueError:  # PyGithub's json.loads on a body that starts like JSON
                raise _unexpected(what, "malformed JSON") from None

        headers, data = self._call(what, request)
        kind = str(headers.get("content-type", "application/json")).split(";")[0]
        if data is not None and kind != "application/json":
            raise _unexpected(what, f"{kind}, not JSON")
        if (
            isinstance(data, dict)
            and isinstance(data.get("data"), str)
            and set(data) <= {"data", "url"}
        ):
            # PyGithub wraps a body that is not JSON as {"data": text} (and adds "url").
            raise _unexpected(what, "a page that is not JSON")
        return headers, data

    def _write(self, what: str, verb: str, url: str, body: dict[str, Any]) -> _Json:
        _, data = self._call(
            what, lambda: self._gh.requester.requestJsonAndCheck(verb, url, input=body)
        )
        return _Json(data, what)

    def _object(self, what: str, url: str, params: dict[str, Any] | None = None) -> _Json:
        return _Json(self._get(what, url, params)[1], what)

    def _pages(
        self, what: str, url: str, params: dict[str, Any] | None = None, key: str | None = None
    ) -> Iterator[_Json]:
        """Every item of a listing, a page at a time; a repeated or endless `next` link ends it."""
        seen: set[str] = set()
        next_url: str | None = url
        query: dict[str, Any] | None = {**(params or {}), "per_page": 100}
        pages = 0
        while next_url is not None:
            if pages == self.meter.pages:
                raise GitHubError(f"gave up while {what}: more than {pages} pages of 100 items")
            headers, data = self._get(what, next_url, query)
            pages += 1
            yield from _list_of(data, what, key)
            next_url = self._next_page(what, str(headers.get("link", "")), seen)
            query = None

    def _next_page(self, what: str, link: str, seen: set[str]) -> str | None:
        match = _NEXT.search(link)
        if match is None:
            return None
        target = match.group(1)
        if not target.startswith(self.api_url + "/"):
            raise _unexpected(what, f"a next-page link that leaves {self.api_url}")
        if target in seen:
            raise GitHubError(f"gave up while {what}: GitHub's next-page link repeats a page")
        seen.add(target)
        return target[len(self.api_url) :]

    # --- reads -------------------------------------------------------------

    def pull(self, number: int) -> Pull:
        return _pull(self._object(f"reading PR #{number}", f"{self._base}/pulls/{number}"))

    def open_pulls(self, base: str) -> list[Pull]:
        """The newest 100 open PRs into `base` (one page)."""
        what = f"listing open PRs into {base}"
        params = {"state": "open", "base": base, "sort": "created", "direction": "desc"}
        answer = self._get(what, f"{self._base}/pulls", {**params, "per_page": 100})[1]
        return [_pull(item) for item in _list_of(answer, what, None)]

    def pulls_for_commit(self, sha: str) -> list[Pull]:
        what = f"listing PRs of commit {sha[:12]}"
        return [_pull(item) for item in self._pages(what, f"{self._base}/commits/{sha}/pulls")]

    def pull_commits(self, number: int) -> list[str]:
        what = f"listing commits of PR #{number}"
        return [
            item.sha("sha") for item in self._pages(what, f"{self._base}/pulls/{number}/commits")
        ]

    def comments(self, number: int) -> list[Comment]:
        """Every comment of an issue or PR, oldest first (all pages)."""
        what = f"listing comments of #{number}"
        return [
            _comment(item) for item in self._pages(what, f"{self._base}/issues/{number}/comments")
        ]

    def comment(self, comment_id: int) -> Comment:
        what = f"reading comment {comment_id}"
        return _comment(self._object(what, f"{self._base}/issues/comments/{comment_id}"))

    def permission(self, login: str) -> str:
        """admin, write, read or none (maintain reads as write, triage as read)."""
        if login not in self._permissions:
            what = f"reading the permission of {login}"
            answer = self._object(what, f"{self._base}/collaborators/{login}/permission")
            self._permissions[login] = answer.text("permission")
        return self._permissions[login]

    def run(self, run_id: int) -> Run:
        return _run(self._object(f"reading run {run_id}", f"{self._base}/actions/runs/{run_id}"))

    def _runs_page(
        self, workflow: str, branch: str, event: str, status: str, limit: int = 100
    ) -> list[Run]:
        what = f"listing {status} {event} runs of {workflow} on {branch}"
        params = {"branch": branch, "event": event, "status": status, "per_page": limit}
        answer = self._object(what, f"{self._base}/actions/workflows/{workflow}/runs", params)
        return [_run(item) for item in answer.items("workflow_runs")]

    def branch_runs(self, workflow: str, branch: str) -> list[Run]:
        """The newest 100 runs of a workflow on a branch, whatever their event or status."""
        what = f"listing runs of {workflow} on {branch}"
        params = {"branch": branch, "per_page": 100}
        answer = self._object(what, f"{self._base}/actions/workflows/{workflow}/runs", params)
        return [_run(item) for item in answer.items("workflow_runs")]

    def recent_runs(self, workflow: str, branch: str) -> list[Run]:
        """The newest 100 completed pull_request runs of a workflow on a branch (one page)."""
        return self._runs_page(workflow, branch, "pull_request", "completed")

    def artifacts(self, run_id: int) -> list[Artifact]:
        what = f"listing artifacts of run {run_id}"
        url = f"{self._base}/actions/runs/{run_id}/artifacts"
        return [_artifact(item) for item in self._pages(what, url, key="artifacts")]

    def run_artifacts_page(self, run_id: int) -> tuple[list[Artifact], bool]:
        """A run's first 100 artifacts, and whether they are all of them."""
        what = f"listing artifacts of run {run_id}"
        url = f"{self._base}/actions/runs/{run_id}/artifacts"
        answer = self._object(what, url, {"per_page": 100})
        found = [_artifact(item) for item in answer.items("artifacts")]
        total = answer.maybe_number("total_count")
        return found, total is not None and total <= len(found)

    def artifacts_since(self, name: str, since: datetime) -> list[Artifact]:
        """The repository's artifacts called `name` created at or after `since`, newest first:
        one listing for every run instead of a request per run (GitHub lists newest first)."""
        what = f"listing {name} artifacts"
        found = []
        items = self._pages(what, f"{self._base}/actions/artifacts", {"name": name}, "artifacts")
        for item in items:
            artifact = _across_runs(item)
            if artifact.created_at < since:
                break
            found.append(artifact)
        return found

    def label_events(self, number: int) -> list[LabelEvent]:
        what = f"reading the timeline of PR #{number}"
        events = []
        for item in self._pages(what, f"{self._base}/issues/{number}/timeline"):
            if item.maybe_text("event") in ("labeled", "unlabeled"):
                label, actor = item.obj("label"), item.maybe_obj("actor")
                login = (actor.maybe_text("login") if actor is not None else None) or ""
                events.append(
                    LabelEvent(
                        item.text("event"), label.text("name"), item.time("created_at"), login
                    )
                )
        return events

    def statuses(self, sha: str) -> list[Status]:
        """The commit statuses of a commit, newest first (one page: the newest 100)."""
        what = f"reading statuses of {sha[:12]}"
        answer = self._get(what, f"{self._base}/commits/{sha}/statuses", {"per_page": 100})[1]
        return [
            Status(i.text("context"), i.text("state"), i.maybe_text("description") or "")
            for i in _list_of(answer, what, None)
        ]

    def check_runs(self, sha: str) -> list[tuple[str, str, str | None]]:
        """(name, status, conclusion) of every check run on a commit."""
        what = f"reading checks of {sha[:12]}"
        items = self._pages(what, f"{self._base}/commits/{sha}/check-runs", key="check_runs")
        return [(i.text("name"), i.text("status"), i.maybe_text("conclusion")) for i in items]

    def jobs(self, run_id: int, *, every_attempt: bool = False) -> list[Job]:
        """The jobs of a run: its latest attempt, or every attempt's (all pages, capped)."""
        what = f"listing jobs of run {run_id}"
        url = f"{self._base}/actions/runs/{run_id}/jobs"
        params = {"filter": "all" if every_attempt else "latest"}
        return [_job(item) for item in self._pages(what, url, params, key="jobs")]

    def job_log_tail(self, job_id: int, max_bytes: int = 64 * 1024) -> str | None:
        """The last `max_bytes` of a job's log, or None when GitHub keeps none (a runner lost
        before it uploaded one, or logs past retention). The API redirects to storage on
        another host; that request goes out without the token, like artifact downloads."""
        what = f"reading the log of job {job_id}"
        self.meter.charge(what)
        url = f"{self._repo.url}/actions/jobs/{job_id}/logs"
        status, headers, _ = self._call(what, lambda: self._gh.requester.requestJson("GET", url))
        if status in (404, 410):
            return None
        location = headers.get("location", "")
        if status != 302 or not location:
            raise GitHubError(f"GitHub API error while {what}: {status}", status)
        if urlsplit(location).scheme != urlsplit(self._gh.requester.base_url).scheme:
            raise GitHubError(f"{what}: refusing a redirect to {urlsplit(location).scheme}")

        def fetch() -> str | None:
            tail = b""
            with requests.get(location, stream=True, timeout=self._timeout) as response:
                if response.status_code in (404, 410):
                    return None
                if response.status_code != 200:
                    raise GitHubError(f"{what}: storage answered {response.status_code}")
                for chunk in response.iter_content(chunk_size=1 << 16):
                    tail = (tail + chunk)[-max_bytes:]
            return tail.decode("utf-8", "replace")

        return self._call(what, fetch)

    # --- repository and organization settings (`infx security check`) ------------
    # Most need a token that may administer the repository (or the organization's
    # runners): GitHub answers 403 or 404 otherwise.

    def repository_owner(self) -> tuple[bool, str, str]:
        """(private, owner login, owner type: User or Organization)."""
        item = self._object(f"reading {self.slug}", self._base)
        owner = item.obj("owner")
        return item.flag("private"), owner.text("login"), owner.text("type")

    def fork_approval_policy(self) -> str:
        """Which outside contributors' fork PR runs wait for approval (public repositories)."""
        what = "reading the fork pull request approval policy"
        url = f"{self._base}/actions/permissions/fork-pr-contributor-approval"
        return self._object(what, url).text("approval_policy")

    def private_fork_policy(self) -> PrivateForkPolicy:
        what = "reading the fork pull request policy of a private repository"
        item = self._object(
            what, f"{self._base}/actions/permissions/fork-pr-workflows-private-repos"
        )
        return PrivateForkPolicy(
            run_workflows=item.flag("run_workflows_from_fork_pull_requests"),
            send_write_tokens=item.flag("send_write_tokens_to_workflows"),
            send_secrets=item.flag("send_secrets_and_variables"),
            require_approval=item.flag("require_approval_for_fork_pr_workflows"),
        )

    def workflow_token_permissions(self) -> tuple[str, bool]:
        """The workflow token's default permissions (read or write), and whether workflows
        may approve pull requests."""
        what = "reading the default workflow permissions"
        item = self._object(what, f"{self._base}/actions/permissions/workflow")
        return item.text("default_workflow_permissions"), item.flag(
            "can_approve_pull_request_reviews"
        )

    def self_hosted_runners(self, organization: str | None = None) -> list[SelfHostedRunner]:
        """The repository's self-hosted runners, or the organization's."""
        where = f"/orgs/{organization}" if organization else self._base
        what = f"listing the self-hosted runners of {organization or self.slug}"
        return [
            SelfHostedRunner(
                name=item.text("name"),
                labels=tuple(label.text("name") for label in item.items("labels")),
                ephemeral=None if item.data.get("ephemeral") is None else item.flag("ephemeral"),
                group_id=item.maybe_number("runner_group_id"),
            )
            for item in self._pages(what, f"{where}/actions/runners", key="runners")
        ]

    def runner_groups(self, organization: str) -> list[RunnerGroup]:
        what = f"listing the runner groups of {organization}"

        def group(item: _Json) -> RunnerGroup:
            workflows = item.data.get("selected_workflows") or []
            if not isinstance(workflows, list) or not all(isinstance(w, str) for w in workflows):
                raise _unexpected(what, "selected_workflows is not a list of names")
            return RunnerGroup(
                id=item.number("id"),
                name=item.text("name"),
                restricted_to_workflows=item.flag("restricted_to_workflows"),
                selected_workflows=tuple(workflows),
            )

        url = f"/orgs/{organization}/actions/runner-groups"
        return [group(item) for item in self._pages(what, url, key="runner_groups")]

    # --- writes ------------------------------------------------------------

    def react(self, comment_id: int, content: str, bot_login: str) -> None:
        """Leave exactly one of +1/-1 from the bot on a comment."""
        other = "-1" if content == "+1" else "+1"
        url = f"{self._base}/issues/comments/{comment_id}/reactions"
        what = f"reacting to comment {comment_id}"
        mine = []
        for item in self._pages(what, url):
            user = item.maybe_obj("user")
            if user is not None and user.text("login") == bot_login:
                mine.append((item.number("id"), item.text("content")))
        requester = self._gh.requester
        for reaction_id, existing in mine:
            if existing == other:
                self._call(
                    what,
                    lambda rid=reaction_id: requester.requestJsonAndCheck("DELETE", f"{url}/{rid}"),
                )
        if not any(existing == content for _, existing in mine):
            self._call(
                what, lambda: requester.requestJsonAndCheck("POST", url, input={"content": content})
            )

    def set_status(self, sha: str, status: Status, target_url: str | None = None) -> None:
        """Set one context's commit status on a commit (GitHub keeps the newest per context)."""
        body: dict[str, Any] = {
            "state": status.state,
            "context": status.context,
            "description": status.description,
        }
        if target_url:
            body["target_url"] = target_url
        self._write(
            f"setting {status.context} on {sha[:12]}", "POST", f"{self._base}/statuses/{sha}", body
        )

    def post_comment(self, number: int, body: str) -> None:
        self._call(
            f"commenting on #{number}", lambda: self._repo.get_issue(number).create_comment(body)
        )

    def dispatch(self, event_type: str, payload: dict[str, Any]) -> None:
        self._call(
            f"dispatching {event_type}",
            lambda: self._repo.create_repository_dispatch(event_type, payload),
        )

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        """Start a workflow_dispatch run of `workflow` on branch `ref`."""
        what = f"dispatching {workflow} on {ref}"
        url = f"{self._base}/actions/workflows/{workflow}/dispatches"
        self._call(
            what,
            lambda: self._gh.requester.requestJsonAndCheck(
                "POST", url, input={"ref": ref, "inputs": inputs}
            ),
        )

    def merge(self, number: int, method: str, sha: str) -> None:
        def apply() -> None:
            status = self._repo.get_pull(number).merge(merge_method=method, sha=sha)
            if not status.merged:
                raise GitHubError(f"PR #{number} was not merged: {status.message}")

        self._call(f"merging PR #{number}", apply)

    # --- results: baseline runs, their artifacts, the sticky comment --------------
    # Each read below makes exactly one request (one page), so a caller can count its cost.

    def successful_runs(
        self, workflow: str, branch: str, event: str, limit: int = 100
    ) -> list[Run]:
        """The newest completed-successfully runs of a workflow, newest first."""
        return self._runs_page(workflow, branch, event, "success", limit)

    def artifacts_named(self, name: str, limit: int = 100) -> list[Artifact]:
        """The repository's newest artifacts called `name`, across runs, newest first."""
        what = f"listing artifacts named {name}"
        url = f"{self._base}/actions/artifacts"
        answer = self._object(what, url, {"name": name, "per_page": limit})
        return [_across_runs(item) for item in answer.items("artifacts")]

    def run_artifacts_named(self, run_id: int, name: str) -> list[Artifact]:
        what = f"listing artifacts of run {run_id}"
        url = f"{self._base}/actions/runs/{run_id}/artifacts"
        answer = self._object(what, url, {"name": name, "per_page": 100})
        return [a for a in map(_artifact, answer.items("artifacts")) if a.name == name]

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

    def artifact_member(self, artifact_id: int, member: str, max_bytes: int) -> bytes:
        """One file of an artifact's zip, at most `max_bytes` unpacked."""
        import tempfile
        import zipfile

        what = f"reading {member} from artifact {artifact_id}"
        with tempfile.TemporaryDirectory(prefix="infx-artifact-") as tmp:
            archive = os.path.join(tmp, "artifact.zip")
            self.download_artifact(artifact_id, archive, max_bytes)
            try:
                with zipfile.ZipFile(archive) as zf:
                    info = zf.getinfo(member)
                    if info.file_size > max_bytes:
                        raise _unexpected(what, f"{info.file_size} bytes unpacked")
                    return zf.read(info)
            except KeyError:
                raise _unexpected(what, f"no {member} in the archive") from None
            except (zipfile.BadZipFile, OSError) as exc:
                raise _unexpected(what, f"an unreadable archive ({exc})") from None

    def create_comment(self, number: int, body: str) -> Comment:
        what = f"commenting on #{number}"
        url = f"{self._base}/issues/{number}/comments"
        return _comment(self._write(what, "POST", url, {"body": body}))

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        what = f"editing comment {comment_id}"
        url = f"{self._base}/issues/comments/{comment_id}"
        return _comment(self._write(what, "PATCH", url, {"body": body}))

    # --- results: the check run, change issues ---------------------------------------

    def create_check_run(
        self, name: str, head_sha: str, conclusion: str, title: str, summary: str
    ) -> int:
        """A completed check run on a commit (needs `checks: write`); returns its id."""
        what = f"creating check run {name} on {head_sha[:12]}"
        body = {
            "name": name,
            "head_sha": head_sha,
            "status": "completed",
            "conclusion": conclusion,
            "output": {"title": title, "summary": summary},
        }
        return self._write(what, "POST", f"{self._base}/check-runs", body).number("id")

    def open_issues(self, label: str) -> list[tuple[int, str, str]]:
        """(number, title, body) of open issues carrying `label` (pull requests left out)."""
        what = f"listing open issues labelled {label}"
        params = {"state": "open", "labels": label}
        return [
            (i.number("number"), i.text("title"), i.maybe_text("body") or "")
            for i in self._pages(what, f"{self._base}/issues", params)
            if i.maybe_obj("pull_request") is None
        ]

    def create_issue(self, title: str, body: str, labels: list[str]) -> int:
        what = f"opening issue {title[:40]!r}"
        payload = {"title": title, "body": body, "labels": labels}
        return self._write(what, "POST", f"{self._base}/issues", payload).number("number")

    def commits_between(self, base: str, head: str) -> list[tuple[str, str]]:
        """(sha, subject) of the commits in head that base lacks, oldest first (GitHub lists
        at most 250)."""
        what = f"listing commits {base[:12]}...{head[:12]}"
        answer = self._object(what, f"{self._base}/compare/{base}...{head}")
        out = []
        for item in answer.items("commits"):
            message = (item.maybe_obj("commit") or _Json({}, what)).maybe_text("message") or ""
            out.append((item.sha("sha"), message.split("\n", 1)[0]))
        return out
