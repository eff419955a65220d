"""The one GitHub REST client infx uses: PyGithub, configured as Actions expects.

Token from GH_TOKEN or GITHUB_TOKEN; API base from GITHUB_API_URL (default
https://api.github.com); a timeout on every request; 100 items a page. PyGithub sends,
retries and paginates (see transport.py for what infx adds on its extension points);
reading.py maps each answer onto infx's values, field by field, so the decision logic
never sees a guess. Every failure surfaces as one GitHubError, and so does every answer
that is not the JSON the endpoint documents. A decision's reads run under `Limits`
(budget.py); every read, in a decision or not, is counted by the client's one Meter.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

from github import Auth
from github.Commit import Commit
from github.Consts import DEFAULT_USER_AGENT
from github.GithubObject import NotSet
from github.IssueComment import IssueComment
from github.Repository import Repository

from infx.errors import GitHubError
from infx.github import reading
from infx.github.budget import Limits, Meter, within
from infx.github.review_reads import ReviewReads
from infx.github.settings_reads import SettingsReads
from infx.github.transport import (
    Answer,
    MeteredRetry,
    Pages,
    Transport,
    doing,
    redirect,
    signed_download,
)
from infx.github.trust_reads import TrustReads

# The values are infx.github.values'; they stay importable from here.
from infx.github.values import (
    Artifact,
    Comment,
    Job,
    LabelEvent,
    Pull,
    Run,
    Status,
    Step,
)

__all__ = ["DEFAULT_API", "Artifact", "Comment", "GitHub", "Job", "LabelEvent", "Pull"]
__all__ += ["Run", "Status", "Step"]

DEFAULT_API = "https://api.github.com"
T = TypeVar("T")


class GitHub(SettingsReads, ReviewReads, TrustReads):
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
        retry = MeteredRetry(
            self.meter,
            total=retries,
            # A host that does not resolve or refuses the connection is rarely back in
            # seconds: two tries (2 s) rather than the half minute of server errors.
            connect=min(retries, 2),
            # Waits of 0, 2, 4, 8 and 16 s: five retries span half a minute, longer than
            # GitHub's usual transient 5xx and a quarter of a decision's time cap.
            backoff_factor=backoff,
            status_forcelist=[*range(500, 600), 429],
            # Ten seconds, not the minute GitHub advises: a decision has two minutes, and
            # giving up only means no reuse.
            secondary_rate_wait=backoff * 10,
            max_rate_limit_wait=float(os.environ.get("INFX_MAX_RATE_LIMIT_WAIT", "300")),
        )
        transport = Transport(
            self.meter,
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            timeout=max(1, int(min(timeout, self.limits.seconds))),  # never past the cap
            user_agent=DEFAULT_USER_AGENT,
            per_page=100,
            verify=True,
            retry=retry,
            pool_size=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,  # an object is read when infx reads it, never on creation
        )
        self.slug = repo
        self._timeout = timeout
        self._base = f"/repos/{repo}"
        self._transport = transport
        self._repo = Repository(transport, url=self._base)
        self._permissions: dict[str, str] = {}

    def decide(self, fetch: Callable[[], T]) -> T:
        """Run one decision's reads within this client's limits."""
        return within(self.meter, self.limits, fetch)

    def _pages(
        self, url: str, params: dict[str, Any] | None = None, key: str | None = None
    ) -> Pages:
        return Pages(self._transport, url, params, key=key)

    def _issue_comment(self, comment_id: int) -> IssueComment:
        return IssueComment(self._transport, url=f"{self._base}/issues/comments/{comment_id}")

    # --- reads -------------------------------------------------------------

    def pull(self, number: int) -> Pull:
        with doing(f"reading PR #{number}"):
            return reading.pull(reading.Json(self._repo.get_pull(number).raw_data))

    def open_pulls(self, base: str) -> list[Pull]:
        """The newest 100 open PRs into `base` (one page)."""
        params = {"state": "open", "base": base, "sort": "created", "direction": "desc"}
        with doing(f"listing open PRs into {base}"):
            page = self._pages(f"{self._base}/pulls", params).first_page()
            return [reading.pull(item) for item in page]

    def pulls_for_commit(self, sha: str) -> list[Pull]:
        with doing(f"listing PRs of commit {sha[:12]}"):
            items = self._pages(f"{self._base}/commits/{sha}/pulls").items()
            return [reading.pull(item) for item in items]

    def pull_commits(self, number: int) -> list[str]:
        with doing(f"listing commits of PR #{number}"):
            return [
                item.sha("sha")
                for item in self._pages(f"{self._base}/pulls/{number}/commits").items()
            ]

    def comments(self, number: int) -> list[Comment]:
        """Every comment of an issue or PR, oldest first (all pages)."""
        with doing(f"listing comments of #{number}"):
            items = self._pages(f"{self._base}/issues/{number}/comments").items()
            return [reading.comment(item) for item in items]

    def comment(self, comment_id: int) -> Comment:
        with doing(f"reading comment {comment_id}"):
            return reading.comment(reading.Json(self._issue_comment(comment_id).raw_data))

    def permission(self, login: str) -> str:
        """admin, write, read or none (maintain reads as write, triage as read)."""
        if login not in self._permissions:
            with doing(f"reading the permission of {login}"):
                url = f"{self._base}/collaborators/{login}/permission"
                self._permissions[login] = Answer(self._transport, url=url).json.text("permission")
        return self._permissions[login]

    def run(self, run_id: int) -> Run:
        with doing(f"reading run {run_id}"):
            return reading.run(reading.Json(self._repo.get_workflow_run(run_id).raw_data))

    def _runs_page(
        self, workflow: str, branch: str, event: str, status: str, limit: int = 100
    ) -> list[Run]:
        params = {"branch": branch, "event": event, "status": status, "per_page": limit}
        with doing(f"listing {status} {event} runs of {workflow} on {branch}"):
            return self._one_runs_page(workflow, params)

    def _one_runs_page(self, workflow: str, params: dict[str, Any]) -> list[Run]:
        url = f"{self._base}/actions/workflows/{workflow}/runs"
        page = self._pages(url, params, "workflow_runs").first_page()
        return [reading.run(item) for item in page]

    def branch_runs(self, workflow: str, branch: str) -> list[Run]:
        """The newest 100 runs of a workflow on a branch, whatever their event or status."""
        with doing(f"listing runs of {workflow} on {branch}"):
            return self._one_runs_page(workflow, {"branch": branch, "per_page": 100})

    def runs_since(
        self, workflow: str, event: str, since: datetime, branch: str | None = None
    ) -> Iterator[Run]:
        """The runs of `workflow` (its file name) by `event` (on `branch`) created at or after
        `since`, newest first, a page at a time as the caller reads on."""
        params: dict[str, Any] = {
            "event": event,
            "created": f">={since.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}",
            "per_page": 100,
        }
        if branch is not None:
            params["branch"] = branch
        url = f"{self._base}/actions/workflows/{workflow}/runs"
        with doing(f"listing {event} runs of {workflow}"):
            for item in self._pages(url, params, "workflow_runs").items():
                yield reading.run(item)

    def recent_runs(self, workflow: str, branch: str) -> list[Run]:
        """The newest 100 completed pull_request runs of a workflow on a branch (one page)."""
        return self._runs_page(workflow, branch, "pull_request", "completed")

    def artifacts(self, run_id: int) -> list[Artifact]:
        url = f"{self._base}/actions/runs/{run_id}/artifacts"
        with doing(f"listing artifacts of run {run_id}"):
            return [reading.artifact(item) for item in self._pages(url, key="artifacts").items()]

    def run_artifacts_page(self, run_id: int) -> tuple[list[Artifact], bool]:
        """A run's first 100 artifacts, and whether they are all of them."""
        url = f"{self._base}/actions/runs/{run_id}/artifacts"
        with doing(f"listing artifacts of run {run_id}"):
            pages = self._pages(url, {"per_page": 100}, "artifacts")
            found = [reading.artifact(item) for item in pages.first_page()]
        return found, pages.total is not None and pages.total <= len(found)

    def artifacts_since(self, name: str, since: datetime) -> list[Artifact]:
        """The repository's artifacts called `name` created at or after `since`, newest first:
        one listing for every run instead of a request per run (GitHub lists newest first)."""
        found = []
        with doing(f"listing {name} artifacts"):
            pages = self._pages(f"{self._base}/actions/artifacts", {"name": name}, "artifacts")
            for item in pages.items():
                artifact = reading.across_runs(item)
                if artifact.created_at is None or artifact.created_at < since:
                    break
                found.append(artifact)
        return found

    def label_events(self, number: int) -> list[LabelEvent]:
        with doing(f"reading the timeline of PR #{number}"):
            items = self._pages(f"{self._base}/issues/{number}/timeline").items()
            return [event for item in items if (event := reading.label_event(item)) is not None]

    def statuses(self, sha: str) -> list[Status]:
        """The commit statuses of a commit, newest first (one page: the newest 100)."""
        url = f"{self._base}/commits/{sha}/statuses"
        with doing(f"reading statuses of {sha[:12]}"):
            return [
                reading.status(item) for item in self._pages(url, {"per_page": 100}).first_page()
            ]

    def check_runs(self, sha: str) -> list[tuple[str, str, str | None]]:
        """(name, status, conclusion) of every check run on a commit."""
        url = f"{self._base}/commits/{sha}/check-runs"
        with doing(f"reading checks of {sha[:12]}"):
            return [reading.check_run(item) for item in self._pages(url, key="check_runs").items()]

    def jobs(self, run_id: int, *, every_attempt: bool = False) -> list[Job]:
        """The jobs of a run: its latest attempt, or every attempt's (all pages, capped)."""
        url = f"{self._base}/actions/runs/{run_id}/jobs"
        params = {"filter": "all" if every_attempt else "latest"}
        with doing(f"listing jobs of run {run_id}"):
            return [reading.job(item) for item in self._pages(url, params, "jobs").items()]

    def job_log_tail(self, job_id: int, max_bytes: int = 64 * 1024) -> str | None:
        """The last `max_bytes` of a job's log, or None when GitHub keeps none (a runner lost
        before it uploaded one, or logs past retention). The API redirects to storage on
        another host; that request goes out without the token, like artifact downloads."""
        what = f"reading the log of job {job_id}"
        with doing(what):
            url = f"{self._base}/actions/jobs/{job_id}/logs"
            status, location, _ = redirect(self._transport, url)
            if status in (404, 410):
                return None
            if status != 302 or not location:
                raise GitHubError(f"GitHub API error while {what}: {status}", status)
            tail = b""
            with signed_download(self._transport, location, self._timeout, what) as response:
                if response.status_code in (404, 410):
                    return None
                if response.status_code != 200:
                    raise GitHubError(f"{what}: storage answered {response.status_code}")
                for chunk in response.iter_content(chunk_size=1 << 16):
                    tail = (tail + chunk)[-max_bytes:]
            return tail.decode("utf-8", "replace")

    # --- writes ------------------------------------------------------------

    def react(self, comment_id: int, content: str, bot_login: str) -> None:
        """Leave exactly one of +1/-1 from the bot on a comment."""
        other = "-1" if content == "+1" else "+1"
        target = self._issue_comment(comment_id)
        with doing(f"reacting to comment {comment_id}"):
            listed = self._pages(f"{self._base}/issues/comments/{comment_id}/reactions").items()
            reactions = [reading.reaction(item) for item in listed]
            mine = [(rid, existing) for rid, existing, login in reactions if login == bot_login]
            for reaction_id, existing in mine:
                if existing == other:
                    # PyGithub's delete_reaction answers False for a failure, without
                    # GitHub's status or message: the requester says both.
                    url = f"{self._base}/issues/comments/{comment_id}/reactions/{reaction_id}"
                    self._transport.requestJsonAndCheck("DELETE", url)
            if not any(existing == content for _, existing in mine):
                target.create_reaction(content)

    def set_status(self, sha: str, status: Status, target_url: str | None = None) -> None:
        """Set one context's commit status on a commit (GitHub keeps the newest per context)."""
        with doing(f"setting {status.context} on {sha[:12]}"):
            # The commit as far as a status needs it: its sha, so PyGithub reads nothing.
            commit = Commit(self._transport, {}, {"sha": sha, "url": f"{self._base}/commits/{sha}"})
            commit.create_status(
                status.state,
                target_url=target_url or NotSet,
                description=status.description,
                context=status.context,
            )

    def post_comment(self, number: int, body: str) -> None:
        with doing(f"commenting on #{number}"):
            self._repo.get_issue(number).create_comment(body)

    def dispatch(self, event_type: str, payload: dict[str, Any]) -> None:
        with doing(f"dispatching {event_type}"):
            self._repo.create_repository_dispatch(event_type, payload)

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        """Start a workflow_dispatch run of `workflow` on branch `ref`."""
        with doing(f"dispatching {workflow} on {ref}"):
            self._repo.get_workflow(workflow).create_dispatch(ref, inputs, throw=True)

    def cancel_run(self, run_id: int) -> bool:
        """Cancel a workflow run; False when it had already finished (GitHub answers 409)."""
        try:
            with doing(f"cancelling run {run_id}"):
                url = f"{self._base}/actions/runs/{run_id}/cancel"
                self._transport.requestJsonAndCheck("POST", url)
        except GitHubError as exc:
            if exc.status == 409:
                return False
            raise
        return True

    def merge(self, number: int, method: str, sha: str) -> None:
        with doing(f"merging PR #{number}"):
            status = self._repo.get_pull(number).merge(merge_method=method, sha=sha)
            if not status.merged:
                raise GitHubError(f"PR #{number} was not merged: {status.message}")

    # --- results: baseline runs, their artifacts, the sticky comment --------------
    # Each read below makes exactly one request (one page), so a caller can count its cost.

    def successful_runs(
        self, workflow: str, branch: str, event: str, limit: int = 100
    ) -> list[Run]:
        """The newest completed-successfully runs of a workflow, newest first."""
        return self._runs_page(workflow, branch, event, "success", limit)

    def artifacts_named(self, name: str, limit: int = 100) -> list[Artifact]:
        """The repository's newest artifacts called `name`, across runs, newest first."""
        url = f"{self._base}/actions/artifacts"
        with doing(f"listing artifacts named {name}"):
            page = self._pages(url, {"name": name, "per_page": limit}, "artifacts").first_page()
            return [reading.across_runs(item) for item in page]

    def run_artifacts_named(self, run_id: int, name: str) -> list[Artifact]:
        url = f"{self._base}/actions/runs/{run_id}/artifacts"
        with doing(f"listing artifacts of run {run_id}"):
            page = self._pages(url, {"name": name, "per_page": 100}, "artifacts").first_page()
            return [a for a in map(reading.artifact, page) if a.name == name]

    def download_artifact(
        self, artifact_id: int, target: str | os.PathLike[str], max_bytes: int
    ) -> int:
        """Save an artifact's zip to `target`; stop with an error past `max_bytes`.

        The API answers with a redirect to a signed storage URL on another host
        (blob.core.windows.net); the storage request goes out without our token, on the
        API's scheme only. Returns the size.
        """
        what = f"downloading artifact {artifact_id}"
        with doing(what):
            url = f"{self._base}/actions/artifacts/{artifact_id}/zip"
            status, location, message = redirect(self._transport, url)
            if status != 302 or not location:
                raise GitHubError(
                    f"GitHub API error while {what}: {status} {message}".rstrip(), status
                )
            size = 0
            with signed_download(self._transport, location, self._timeout, what) as response:
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

    def artifact_member(self, artifact_id: int, member: str, max_bytes: int) -> bytes:
        """One file of an artifact's zip, at most `max_bytes` unpacked."""
        with tempfile.TemporaryDirectory(prefix="infx-artifact-") as tmp:
            archive = os.path.join(tmp, "artifact.zip")
            self.download_artifact(artifact_id, archive, max_bytes)
            with doing(f"reading {member} from artifact {artifact_id}"):
                try:
                    with zipfile.ZipFile(archive) as zf:
                        info = zf.getinfo(member)
                        if info.file_size > max_bytes:
                            raise reading.Unexpected(f"{info.file_size} bytes unpacked")
                        return zf.read(info)
                except KeyError:
                    raise reading.Unexpected(f"no {member} in the archive") from None
                except (zipfile.BadZipFile, OSError) as exc:
                    raise reading.Unexpected(f"an unreadable archive ({exc})") from None

    def create_comment(self, number: int, body: str) -> Comment:
        with doing(f"commenting on #{number}"):
            made = self._repo.get_issue(number).create_comment(body)
            return reading.comment(reading.Json(made.raw_data))

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        with doing(f"editing comment {comment_id}"):
            # PyGithub's IssueComment.edit keeps GitHub's answer only as typed attributes,
            # which read a missing field as None; the answer itself is read here.
            url = f"{self._base}/issues/comments/{comment_id}"
            _, data = self._transport.requestJsonAndCheck("PATCH", url, input={"body": body})
            return reading.comment(reading.Json(data))

    # --- results: the check run, change issues ---------------------------------------

    def create_check_run(
        self, name: str, head_sha: str, conclusion: str, title: str, summary: str
    ) -> int:
        """A completed check run on a commit (needs `checks: write`); returns its id."""
        with doing(f"creating check run {name} on {head_sha[:12]}"):
            made = self._repo.create_check_run(
                name,
                head_sha,
                status="completed",
                conclusion=conclusion,
                output={"title": title, "summary": summary},
            )
            return reading.Json(made.raw_data).number("id")

    def open_issues(self, label: str) -> list[tuple[int, str, str]]:
        """(number, title, body) of open issues carrying `label` (pull requests left out)."""
        params = {"state": "open", "labels": label}
        with doing(f"listing open issues labelled {label}"):
            items = self._pages(f"{self._base}/issues", params).items()
            return [issue for item in items if (issue := reading.open_issue(item)) is not None]

    def create_issue(self, title: str, body: str, labels: list[str]) -> int:
        with doing(f"opening issue {title[:40]!r}"):
            made = self._repo.create_issue(title, body, labels=labels)
            return reading.Json(made.raw_data).number("number")

    def commits_between(self, base: str, head: str) -> list[tuple[str, str]]:
        """(sha, subject) of the commits in head that base lacks, oldest first (GitHub lists
        at most 250)."""
        with doing(f"listing commits {base[:12]}...{head[:12]}"):
            answer = Answer(self._transport, url=f"{self._base}/compare/{base}...{head}").json
            return [reading.compared_commit(item) for item in answer.items("commits")]
