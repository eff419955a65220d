"""A local HTTP server speaking the GitHub REST endpoints infx uses, with GitHub-shaped JSON.

State lives in plain dicts a test fills in; every request is recorded, faults can be
injected per path: an error status, a body that is not JSON (HTML, empty, truncated), a
connection that never answers, page links that loop or never end. A PR's head and commits
follow its branch in a real git repository (`State.git_remote`). PyGithub reaches the
server through GITHUB_API_URL, as it would in Actions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

REPO = "acme/bench"
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def stamp(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fault:
    """Answer the next `times` requests whose path matches `pattern` this way instead.

    `raw` is sent verbatim (with `content_type`) instead of the JSON `body`; `hang` accepts
    the request and never answers until the server stops."""

    pattern: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = field(default_factory=lambda: {"message": "Server Error"})
    times: int = 1
    raw: bytes | None = None
    content_type: str = "application/json; charset=utf-8"
    hang: bool = False


HTML = b"<!DOCTYPE html><html><body><h1>Unicorn!</h1>This page is taking too long</body></html>"


@dataclass
class State:
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: list[dict[str, Any]] = field(default_factory=list)
    permissions: dict[str, str] = field(default_factory=dict)
    commit_pulls: dict[str, list[int]] = field(default_factory=dict)
    pull_commits: dict[int, list[str]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    timeline: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    check_runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # sha -> newest first
    reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    merges: list[dict[str, Any]] = field(default_factory=list)
    # Settings read by `infx security check`, by full path: a JSON answer, or (key, items)
    # for a listing that wraps its items in `key`.
    admin: dict[str, Any] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    # Listings whose path matches: "loop" links every page to the same next page, "endless"
    # always links one page further (the items repeat).
    page_links: dict[str, str] = field(default_factory=dict)
    released: threading.Event = field(default_factory=threading.Event)
    default_checks: list[dict[str, Any]] = field(default_factory=list)
    # Statuses of a commit nobody set any on (what CI would have set on a pushed head).
    default_statuses: list[dict[str, Any]] = field(default_factory=list)
    git_remote: str | None = None  # a bare repository whose branches are the PRs' heads
    workdir: Path | None = None  # where a test may build that repository
    token_user: tuple[str, str] = ("github-actions[bot]", "NONE")
    requests: list[tuple[str, str]] = field(default_factory=list)
    next_id: int = 9000
    blobs: dict[int, bytes] = field(default_factory=dict)  # artifact id -> zip bytes
    blob_auth: list[str | None] = field(default_factory=list)  # Authorization seen by storage
    jobs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # run id -> jobs
    logs: dict[int, bytes] = field(default_factory=dict)  # job id -> log text (absent: 404)
    workflow_dispatches: list[dict[str, Any]] = field(default_factory=list)
    # Deployment environments by name, as GET /environments/{name} answers (absent: 404),
    # and each run's reviews of its pending deployments (GET /actions/runs/{id}/approvals).
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)
    approvals: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # A PR's changed files and reviews, and files at a commit ((path, ref) -> bytes), as a
    # code-owner sign-off reads them.
    files: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    contents: dict[tuple[str, str], bytes] = field(default_factory=dict)
    # Artifact attestations by subject digest (sha256:<hex>): the Sigstore bundles GitHub
    # keeps for the repository (POST /attestations stores one, as the attest action does).
    attestations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # What GitHub knows of each run and no step of it can change: the ref and commit it
    # checked out (GITHUB_REF, GITHUB_SHA), from which its OIDC token's claims are made.
    run_checkouts: dict[int, tuple[str, str]] = field(default_factory=dict)

    # --- builders, GitHub-shaped -------------------------------------------------

    def user(self, login: str) -> dict[str, Any]:
        return {
            "login": login,
            "id": abs(hash(login)) % 10**6,
            "type": "User",
            "url": f"/users/{login}",
        }

    def add_pull(
        self,
        number: int,
        *,
        head_sha: str,
        head_ref: str = "feature",
        labels: list[str] = (),
        merged: bool = False,
        state: str = "open",
        fork: bool = False,
        commits: list[str] = (),
        base: str = "main",
        merge_commit_sha: str | None = None,
    ):
        self.pulls[number] = {
            "url": f"/repos/{REPO}/pulls/{number}",
            "id": number * 10,
            "number": number,
            "state": state,
            "title": f"PR {number}",
            "draft": False,
            "user": self.user("author"),
            "labels": [{"name": name, "id": i} for i, name in enumerate(labels)],
            "created_at": stamp(0),
            "merged_at": stamp(500) if merged else None,
            "merge_commit_sha": merge_commit_sha,
            "head": {
                "ref": head_ref,
                "sha": head_sha,
                "repo": {"full_name": "someone/bench" if fork else REPO},
            },
            "base": {"ref": base, "sha": "b" * 40, "repo": {"full_name": REPO}},
        }
        self.issues[number] = {
            "number": number,
            "pull_request": {"url": f"/repos/{REPO}/pulls/{number}"},
        }
        self.pull_commits[number] = list(commits) or [head_sha]

    def add_comment(
        self,
        number: int,
        login: str,
        body: str,
        minute: float,
        association: str = "MEMBER",
        edited: float | None = None,
    ) -> dict[str, Any]:
        self.next_id += 1
        comment = {
            "id": self.next_id,
            "url": f"/repos/{REPO}/issues/comments/{self.next_id}",
            "issue_url": f"/repos/{REPO}/issues/{number}",
            "body": body,
            "user": self.user(login),
            "author_association": association,
            "created_at": stamp(minute),
            "updated_at": stamp(edited if edited is not None else minute),
        }
        self.comments.append(comment)
        return comment

    def add_run(
        self,
        run_id: int,
        *,
        head_sha: str,
        minute: float,
        branch: str = "feature",
        conclusion: str = "success",
        event: str = "pull_request",
        status: str = "completed",
        path: str = ".github/workflows/run-sweep.yml",
        artifacts: list[str] = ("results_bmk",),
        expired: bool = False,
        head_repo: str = REPO,
        title: str = "run-sweep",
    ) -> dict[str, Any]:
        run = {
            "id": run_id,
            "name": "run-sweep",
            "display_title": title,
            "head_sha": head_sha,
            "head_branch": branch,
            "event": event,
            "status": status,
            "conclusion": conclusion,
            "path": path,
            "run_attempt": 1,
            "html_url": f"https://github.com/{REPO}/actions/runs/{run_id}",
            "created_at": stamp(minute),
            "url": f"/repos/{REPO}/actions/runs/{run_id}",
            "artifacts_url": f"/repos/{REPO}/actions/runs/{run_id}/artifacts",
            "head_repository": {"full_name": head_repo},
            "repository": {"full_name": REPO},
        }
        self.runs.append(run)
        self.artifacts[run_id] = [
            self.artifact(run, run_id * 100 + i, name, expired) for i, name in enumerate(artifacts)
        ]
        return run

    def artifact(
        self, run: dict[str, Any], artifact_id: int, name: str, expired: bool = False
    ) -> dict[str, Any]:
        """An artifact of `run`, uploaded 30 minutes after the run started."""
        created = datetime.fromisoformat(run["created_at"].replace("Z", "+00:00"))
        return {
            "id": artifact_id,
            "name": name,
            "expired": expired,
            "size_in_bytes": 1024,
            "created_at": (created + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "workflow_run": {
                "id": run["id"],
                "head_branch": run["head_branch"],
                "head_sha": run["head_sha"],
            },
        }

    def label(
        self, number: int, action: str, name: str, minute: float, actor: str = "maintainer"
    ) -> None:
        """A `labeled` or `unlabeled` event by `actor`, as the timeline and the issue events
        list it (the PR's `labels` are the test's to set)."""
        event = {
            "event": action,
            "label": {"name": name, "color": "ededed"},
            "created_at": stamp(minute),
            "actor": self.user(actor),
        }
        self.timeline.setdefault(number, []).append(event)

    def review(
        self, number: int, login: str, state: str, commit: str, minute: float, bot: bool = False
    ) -> dict[str, Any]:
        """A review of PR `number` as the reviews API lists it (oldest first)."""
        self.next_id += 1
        user = {**self.user(login), "type": "Bot" if bot else "User"}
        item = {
            "id": self.next_id,
            "user": user,
            "state": state,
            "commit_id": commit,
            "submitted_at": stamp(minute),
            "body": "",
        }
        self.reviews.setdefault(number, []).append(item)
        return item

    def changed(self, number: int, *paths: str, renamed: dict[str, str] | None = None) -> None:
        """PR `number` changes `paths` (and `renamed`: new path -> old path)."""
        listed = [{"filename": p, "status": "modified"} for p in paths]
        for new, old in (renamed or {}).items():
            listed.append({"filename": new, "status": "renamed", "previous_filename": old})
        self.files[number] = listed

    def trusted_labels(self, number: int, names: Any, who: str = "maintainer") -> None:
        """PR `number`'s timeline says `who` (write permission) added each of `names`: the
        sweep labels as a maintainer set them, which a sweep trusts without a reviewer."""
        self.permissions.setdefault(who, "write")
        for name in names:
            self.label(number, "labeled", name, 0)
            self.timeline[number][-1]["actor"] = self.user(who)

    def environment(
        self, name: str, reviewers: list[str] | None, *, teams: list[str] = (), wait: int = 0
    ) -> dict[str, Any]:
        """An environment as GitHub answers it: `reviewers` None has no required_reviewers
        rule (GitHub creates a missing environment like that); `wait` adds a wait timer."""
        self.next_id += 1
        rules: list[dict[str, Any]] = []
        if wait:
            rules.append({"id": 1, "node_id": "GA_1", "type": "wait_timer", "wait_timer": wait})
        if reviewers is not None:
            listed = [{"type": "User", "reviewer": self.user(login)} for login in reviewers]
            listed += [
                {"type": "Team", "reviewer": {"id": 5, "name": team, "slug": team}}
                for team in teams
            ]
            rules.append({"id": 2, "node_id": "GA_2", "type": "required_reviewers",
                          "prevent_self_review": False, "reviewers": listed})  # fmt: skip
        found = {
            "id": self.next_id,
            "node_id": f"EN_{self.next_id}",
            "name": name,
            "url": f"https://api.github.com/repos/{REPO}/environments/{name}",
            "html_url": f"https://github.com/{REPO}/deployments/activity_log?environments_filter={name}",
            "created_at": stamp(0),
            "updated_at": stamp(0),
            "can_admins_bypass": True,
            "protection_rules": rules,
            "deployment_branch_policy": None,
        }
        self.environments[name] = found
        return found

    def approve(
        self, run_id: int, login: str, environment: str = "gpu-budget", state: str = "approved"
    ) -> None:
        """A reviewer's review of run `run_id`'s pending deployment to `environment`."""
        self.approvals.setdefault(run_id, []).append(
            {
                "environments": [{"id": 1, "name": environment}],
                "state": state,
                "comment": "within reason",
                "user": self.user(login),
            }
        )

    def runner(
        self, name: str, labels: list[str], *, ephemeral: bool = True, group: int | None = None
    ) -> dict[str, Any]:
        """A self-hosted runner as the runners listings show it (group: an organization's)."""
        self.next_id += 1
        found = {
            "id": self.next_id,
            "name": name,
            "os": "Linux",
            "status": "online",
            "busy": False,
            "ephemeral": ephemeral,
            "labels": [
                {"id": i, "name": label, "type": "read-only" if i < 2 else "custom"}
                for i, label in enumerate(["self-hosted", "Linux", *labels])
            ],
        }
        if group is not None:
            found["runner_group_id"] = group
        return found

    def runner_group(self, group_id: int, name: str, workflows: list[str] | None) -> dict[str, Any]:
        """An organization runner group; `workflows` None lets every workflow use it."""
        return {
            "id": group_id,
            "name": name,
            "visibility": "selected",
            "default": group_id == 1,
            "runners_url": f"/orgs/acme/actions/runner-groups/{group_id}/runners",
            "inherited": False,
            "allows_public_repositories": True,
            "restricted_to_workflows": workflows is not None,
            "selected_workflows": workflows or [],
            "workflow_restrictions_read_only": False,
        }

    def api_requests(self) -> int:
        """Requests to the API proper, not to artifact storage."""
        return sum(1 for _, p in self.requests if not p.startswith("/_blobs/"))

    def count(self, method: str | None = None) -> int:
        return sum(1 for m, _ in self.requests if method is None or m == method)


class Handler(BaseHTTPRequestHandler):
    state: State
    base: str

    def log_message(self, *args: Any) -> None:
        pass

    def _send(
        self, status: int, payload: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        body = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _page(self, items: list[Any], query: dict[str, list[str]], wrap: str | None = None) -> None:
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        links = next(
            (
                how
                for pattern, how in self.state.page_links.items()
                if re.search(pattern, self.path)
            ),
            None,
        )
        if links == "loop":
            page, last = min(page, 2), 3
        elif links == "endless":
            last = page + 1
        chunk = items[(page - 1) * per_page : page * per_page] or items[:per_page]
        headers = {}
        if page < last:
            params = {k: v[0] for k, v in query.items()}
            links = []
            for rel, number in (("next", page + 1), ("last", last)):
                params["page"] = str(number)
                qs = "&".join(f"{k}={v}" for k, v in params.items())
                links.append(f'<{self.base}{urlparse(self.path).path}?{qs}>; rel="{rel}"')
            headers["Link"] = ", ".join(links)
        payload = {"total_count": len(items), wrap: chunk} if wrap else chunk
        self._send(200, payload, headers)

    def _raw(self) -> bytes:
        """The request's body, read once and before any answer: an answer sent while the
        client is still writing closes the socket under it (a broken pipe when busy)."""
        if not hasattr(self, "_raw_body"):
            length = int(self.headers.get("Content-Length") or 0)
            self._raw_body = self.rfile.read(length) if length else b""
        return self._raw_body

    def _body(self) -> dict[str, Any]:
        return json.loads(self._raw() or b"{}")

    def _fault(self) -> bool:
        for fault in self.state.faults:
            if fault.times > 0 and re.search(fault.pattern, self.path):
                fault.times -= 1
                if fault.hang:
                    self.state.released.wait()
                    self.close_connection = True
                elif fault.raw is not None:
                    self.send_response(fault.status)
                    self.send_header("Content-Type", fault.content_type)
                    self.send_header("Content-Length", str(len(fault.raw)))
                    self.end_headers()
                    self.wfile.write(fault.raw)
                else:
                    self._send(fault.status, fault.body, fault.headers)
                return True
        return False

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _handle(self, method: str) -> None:
        self._raw()
        s = self.state
        url = urlparse(self.path)
        path = url.path
        query = parse_qs(url.query)
        if "/_uploads/" in path:  # the workflow harness's uploads: not a request infx made
            return self._upload_artifact(path)
        s.requests.append((method, self.path))
        if self._fault():
            return
        if self._results_route(method, path, query):
            return
        if method == "GET" and path in s.admin:
            answer = s.admin[path]
            if isinstance(answer, tuple):
                return self._page(answer[1], query, wrap=answer[0])
            return self._send(200, answer)
        prefix = f"/repos/{REPO}"
        if not path.startswith(prefix):
            return self._send(404, {"message": "Not Found"})
        rest = path[len(prefix) :]
        routes = [
            (
                "GET",
                r"/pulls/(\d+)",
                lambda m: self._pull(int(m[1])),
            ),
            (
                "GET",
                r"/pulls/(\d+)/commits",
                lambda m: self._page(
                    [
                        {"sha": sha, "parents": [{"sha": "p"}]}
                        for sha in self._synced(int(m[1])) and s.pull_commits.get(int(m[1]), [])
                    ],
                    query,
                ),
            ),
            ("PUT", r"/pulls/(\d+)/merge", lambda m: self._merge(int(m[1]))),
            (
                "GET",
                r"/pulls/(\d+)/files",
                lambda m: self._page(s.files.get(int(m[1]), []), query),
            ),
            (
                "GET",
                r"/pulls/(\d+)/reviews",
                lambda m: self._page(s.reviews.get(int(m[1]), []), query),
            ),
            ("GET", r"/contents/(.+)", lambda m: self._content(m[1], query)),
            (
                "GET",
                r"/issues/(\d+)",
                lambda m: self._send(200, s.issues.get(int(m[1]), {"number": int(m[1])})),
            ),
            (
                "GET",
                r"/issues/(\d+)/comments",
                lambda m: self._page(
                    [c for c in s.comments if c["issue_url"].endswith(f"/issues/{m[1]}")], query
                ),
            ),
            (
                "POST",
                r"/issues/(\d+)/comments",
                lambda m: self._send(
                    201,
                    s.add_comment(
                        int(m[1]), s.token_user[0], self._body()["body"], 900, s.token_user[1]
                    ),
                ),
            ),
            ("GET", r"/issues/comments/(\d+)", lambda m: self._comment(int(m[1]))),
            (
                "GET",
                r"/issues/comments/(\d+)/reactions",
                lambda m: self._page(s.reactions.get(int(m[1]), []), query),
            ),
            ("POST", r"/issues/comments/(\d+)/reactions", lambda m: self._react(int(m[1]))),
            (
                "DELETE",
                r"/issues/comments/(\d+)/reactions/(\d+)",
                lambda m: self._unreact(int(m[1]), int(m[2])),
            ),
            (
                "GET",
                r"/issues/(\d+)/timeline",
                lambda m: self._page(s.timeline.get(int(m[1]), []), query),
            ),
            (
                "GET",
                r"/issues/(\d+)/events",
                lambda m: self._page(s.timeline.get(int(m[1]), []), query),
            ),
            (
                "GET",
                r"/collaborators/([^/]+)/permission",
                lambda m: self._send(
                    200, {"permission": s.permissions.get(m[1], "read"), "user": s.user(m[1])}
                ),
            ),
            (
                "GET",
                r"/commits/([0-9a-f]+)/pulls",
                lambda m: self._page(
                    [s.pulls[n] for n in s.commit_pulls.get(m[1], []) if self._synced(n)], query
                ),
            ),
            (
                "GET",
                r"/pulls",
                lambda m: self._page(
                    [
                        p
                        for p in s.pulls.values()
                        if query.get("state", ["open"])[0] in (p["state"], "all")
                        and p["base"]["ref"] == query.get("base", [p["base"]["ref"]])[0]
                        and query.get("head", [f"acme:{p['head']['ref']}"])[0]
                        == f"{p['head']['repo']['full_name'].split('/')[0]}:{p['head']['ref']}"
                    ],
                    query,
                ),
            ),
            (
                "GET",
                r"/commits/([0-9a-f]+)/statuses",
                lambda m: self._page(s.statuses.get(m[1], s.default_statuses), query),
            ),
            ("POST", r"/statuses/([0-9a-f]{40})", lambda m: self._status(m[1])),
            (
                "GET",
                r"/commits/([0-9a-f]+)/check-runs",
                lambda m: self._page(
                    s.check_runs.get(m[1], s.default_checks), query, wrap="check_runs"
                ),
            ),
            ("GET", r"/actions/workflows/([^/]+)/runs", lambda m: self._runs(m[1], query)),
            ("GET", r"/actions/runs/(\d+)", lambda m: self._run(int(m[1]))),
            (
                "GET",
                r"/actions/runs/(\d+)/artifacts",
                lambda m: self._page(
                    [self.with_digest(a) for a in s.artifacts.get(int(m[1]), [])],
                    query,
                    wrap="artifacts",
                ),
            ),
            ("GET", r"/attestations/(sha256:[0-9a-f]{64})", lambda m: self._attestations(m[1])),
            ("POST", r"/attestations", lambda m: self._attest()),
            (
                "POST",
                r"/dispatches",
                lambda m: (s.dispatches.append(self._body()), self._send(204)),
            ),
            ("GET", r"/actions/runs/(\d+)/jobs", lambda m: self._jobs(int(m[1]), query)),
            ("POST", r"/actions/runs/(\d+)/cancel", lambda m: self._cancel(int(m[1]))),
            (
                "GET",
                r"/actions/runs/(\d+)/approvals",
                lambda m: self._send(200, s.approvals.get(int(m[1]), [])),
            ),
            (
                "GET",
                r"/environments/([^/]+)",
                lambda m: (
                    self._send(200, s.environments[unquote(m[1])])
                    if unquote(m[1]) in s.environments
                    else self._send(404, {"message": "Not Found"})
                ),
            ),
            ("GET", r"/actions/jobs/(\d+)/logs", lambda m: self._log(int(m[1]))),
            (
                "POST",
                r"/actions/workflows/([^/]+)/dispatches",
                lambda m: (
                    s.workflow_dispatches.append({"workflow": m[1], **self._body()}),
                    self._send(204),
                ),
            ),
        ]
        for verb, pattern, action in routes:
            match = re.fullmatch(pattern, rest)
            if verb == method and match:
                return action(match)
        return self._send(404, {"message": f"no route for {method} {rest}"})

    def _upload_artifact(self, path: str) -> None:
        """An artifact a simulated job uploaded (tests/actions/harness.py), for a run this
        state knows; one of the same name is replaced."""
        blob = self._raw()
        found = re.fullmatch(rf"/repos/{REPO}/_uploads/(\d+)/([^/]+)", path)
        run = next((r for r in self.state.runs if found and r["id"] == int(found[1])), None)
        if found is None or run is None:
            return self._send(404, {"message": "no such run"})
        name = unquote(found[2])
        held = self.state.artifacts.setdefault(run["id"], [])
        held[:] = [a for a in held if a["name"] != name]
        self.state.next_id += 1
        artifact = self.state.artifact(run, run["id"] * 1000 + self.state.next_id, name)
        held.append(artifact)
        self.state.blobs[artifact["id"]] = blob
        return self._send(201, artifact)

    def with_digest(self, artifact: dict[str, Any]) -> dict[str, Any]:
        """An artifact as the listings show it: with the sha256 of its zip, as GitHub gives
        it for artifacts upload-artifact v4 made, once its bytes are there."""
        blob = self.state.blobs.get(artifact["id"])
        if blob is None:
            return artifact
        return {**artifact, "digest": "sha256:" + hashlib.sha256(blob).hexdigest()}

    def _attestations(self, digest: str) -> None:
        found = self.state.attestations.get(digest)
        if not found:
            return self._send(404, {"message": "Not Found"})
        listed = [{"bundle": b, "repository_id": 1, "bundle_url": None} for b in found]
        return self._send(200, {"attestations": listed})

    def _attest(self) -> None:
        bundle = self._body()["bundle"]
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        for subject in statement["subject"]:
            digest = "sha256:" + subject["digest"]["sha256"]
            self.state.attestations.setdefault(digest, []).append(bundle)
        self.state.next_id += 1
        return self._send(201, {"id": self.state.next_id})

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        if not self.state.git_remote:
            raise AssertionError("this request needs State.git_remote")
        return subprocess.run(["git", *args], cwd=self.state.git_remote, capture_output=True)

    def _rev(self, ref: str) -> str | None:
        proc = self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return proc.stdout.decode().strip() or None

    def _compare(self, base_ref: str, head_ref: str) -> None:
        """base...head as GitHub answers it, commits only: those head has and base lacks."""
        base, head = self._rev(base_ref), self._rev(head_ref)
        if not base or not head:
            return self._send(404, {"message": "Not Found"})
        merge_base = self._git("merge-base", base, head).stdout.decode().strip()
        log = self._git("rev-list", "--reverse", "--parents", f"{merge_base}..{head}")
        commits = [
            {
                "sha": shas[0],
                "parents": [{"sha": p} for p in shas[1:]],
                "commit": {
                    "message": self._git("log", "-1", "--format=%B", shas[0]).stdout.decode()
                },
            }
            for shas in (line.split() for line in log.stdout.decode().splitlines())
        ]
        if base == head:
            status = "identical"
        elif merge_base == head:
            status = "behind"
        elif merge_base == base:
            status = "ahead"
        else:
            status = "diverged"
        self._send(
            200,
            {
                "status": status,
                "ahead_by": len(commits),
                "total_commits": len(commits),
                "base_commit": {"sha": base},
                "merge_base_commit": {"sha": merge_base},
                "commits": commits,
            },
        )

    def _results_route(self, method: str, path: str, query: dict[str, list[str]]) -> bool:
        return False

    def _pull(self, number: int) -> None:
        pull = self.state.pulls.get(number)
        if pull is None:
            return self._send(404, {"message": "Not Found"})
        self._sync_head(pull)
        files = len(self.state.files.get(number, []))
        return self._send(200, {"changed_files": files, **pull})

    def _content(self, path: str, query: dict[str, list[str]]) -> None:
        import base64

        key = (unquote(path), query.get("ref", [""])[0])
        if key not in self.state.contents:
            return self._send(404, {"message": "Not Found"})
        data = base64.b64encode(self.state.contents[key]).decode()
        return self._send(200, {"type": "file", "encoding": "base64", "content": data})

    def _synced(self, number: int) -> bool:
        if number in self.state.pulls:
            self._sync_head(self.state.pulls[number])
        return True

    def _sync_head(self, pull: dict[str, Any]) -> None:
        """Like GitHub, the PR head follows its branch in the repository, and its commits are
        those of the branch that its base lacks."""
        if self.state.git_remote:
            sha = self._rev(f"refs/heads/{pull['head']['ref']}")
            if sha:
                pull["head"]["sha"] = sha
                log = self._git("rev-list", "--reverse", f"{pull['base']['ref']}..{sha}")
                self.state.pull_commits[pull["number"]] = log.stdout.decode().split()

    def _status(self, sha: str) -> None:
        body = self._body()
        self.state.next_id += 1
        status = {
            "id": self.state.next_id,
            "state": body["state"],
            "context": body.get("context", "default"),
            "description": body.get("description"),
            "target_url": body.get("target_url"),
            "created_at": stamp(1100),
            "creator": self.state.user(self.state.token_user[0]),
        }
        self.state.statuses.setdefault(sha, []).insert(0, status)
        self._send(201, status)

    def _comment(self, comment_id: int) -> None:
        for comment in self.state.comments:
            if comment["id"] == comment_id:
                return self._send(200, comment)
        return self._send(404, {"message": "Not Found"})

    def _react(self, comment_id: int) -> None:
        self.state.next_id += 1
        reaction = {
            "id": self.state.next_id,
            "content": self._body()["content"],
            "user": self.state.user("github-actions[bot]"),
            "created_at": stamp(999),
        }
        self.state.reactions.setdefault(comment_id, []).append(reaction)
        self._send(201, reaction)

    def _unreact(self, comment_id: int, reaction_id: int) -> None:
        self.state.reactions[comment_id] = [
            r for r in self.state.reactions.get(comment_id, []) if r["id"] != reaction_id
        ]
        self._send(204)

    def _runs(self, workflow: str, query: dict[str, list[str]]) -> None:
        runs = [r for r in self.state.runs if r["path"].endswith(f"/{workflow}")]
        for key in ("branch", "event", "status"):
            if key in query:
                field_name = "head_branch" if key == "branch" else key
                runs = [r for r in runs if r[field_name] == query[key][0]]
        if "created" in query:  # only ">=<ISO time>", the form infx sends
            since = query["created"][0].removeprefix(">=")
            runs = [r for r in runs if r["created_at"] >= since]
        runs.sort(key=lambda r: r["created_at"], reverse=True)
        self._page(runs, query, wrap="workflow_runs")

    def _run(self, run_id: int) -> None:
        for run in self.state.runs:
            if run["id"] == run_id:
                return self._send(200, run)
        return self._send(404, {"message": "Not Found"})

    def _cancel(self, run_id: int) -> None:
        """Cancel a run that has not finished (202); a finished one answers 409."""
        for run in self.state.runs:
            if run["id"] == run_id:
                if run["status"] == "completed":
                    return self._send(
                        409, {"message": "Cannot cancel a workflow run that is completed."}
                    )
                run["status"], run["conclusion"] = "completed", "cancelled"
                return self._send(202, {})
        return self._send(404, {"message": "Not Found"})

    def _jobs(self, run_id: int, query: dict[str, list[str]]) -> None:
        """A run's jobs, the latest attempt's unless filter=all, as GitHub lists them."""
        found = self.state.jobs.get(run_id, [])
        if query.get("filter", ["latest"])[0] != "all" and found:
            latest = max(job.get("run_attempt", 1) for job in found)
            found = [job for job in found if job.get("run_attempt", 1) == latest]
        self._page(found, query, wrap="jobs")

    def _log(self, job_id: int) -> None:
        """A job's log: a redirect to storage (another host), or 404 when none was kept."""
        if job_id not in self.state.logs:
            return self._send(404, {"message": "Not Found"})
        key = 10**9 + job_id
        self.state.blobs[key] = self.state.logs[job_id]
        storage = self.base.replace("127.0.0.1", "localhost")
        return self._send(302, None, {"Location": f"{storage}/_blobs/{key}"})

    def _merge(self, number: int) -> None:
        body = self._body()
        pull = self.state.pulls[number]
        self._sync_head(pull)
        if body.get("sha") and body["sha"] != pull["head"]["sha"]:
            return self._send(
                409, {"message": "Head branch was modified. Review and try the merge again."}
            )
        self.state.merges.append({"number": number, **body})
        pull["merged_at"] = stamp(1000)
        pull["state"] = "closed"
        return self._send(
            200, {"sha": "c" * 40, "merged": True, "message": "Pull Request successfully merged"}
        )


class ResultsHandler(Handler):
    """Endpoints the results commands add: runs on main filtered by conclusion, artifacts
    across runs, artifact downloads (a 302 to a storage host, as GitHub answers), and
    comment edits. Downloads land on `/_blobs/<id>`, outside the API prefix."""

    def _results_route(self, method: str, path: str, query: dict[str, list[str]]) -> bool:
        prefix = f"/repos/{REPO}"
        rest = path[len(prefix) :] if path.startswith(prefix) else None
        routes = [
            ("GET", r"/_blobs/(\d+)", path, lambda m: self._blob(int(m[1]))),
            (
                "GET",
                r"/actions/workflows/([^/]+)/runs",
                rest,
                lambda m: self._runs_by_conclusion(m[1], query),
            ),
            ("GET", r"/actions/artifacts", rest, lambda m: self._all_artifacts(query)),
            (
                "GET",
                r"/actions/runs/(\d+)/artifacts",
                rest,
                lambda m: self._page(
                    [a for a in self._artifacts_of(int(m[1])) if a["name"] == query["name"][0]],
                    query,
                    wrap="artifacts",
                ),
            ),
            ("GET", r"/actions/artifacts/(\d+)/zip", rest, lambda m: self._zip(int(m[1]))),
            ("PATCH", r"/issues/comments/(\d+)", rest, lambda m: self._edit(int(m[1]))),
            ("POST", r"/check-runs", rest, lambda m: self._create_check()),
            (
                "GET",
                r"/compare/([^/.]+)\.\.\.([^/.]+)",
                rest,
                lambda m: self._compare(m[1], m[2]),
            ),
            ("GET", r"/issues", rest, lambda m: self._list_issues(query)),
            ("POST", r"/issues", rest, lambda m: self._create_issue()),
        ]
        for verb, pattern, target, action in routes:
            if verb != method or target is None:
                continue
            match = re.fullmatch(pattern, target)
            if not match:
                continue
            if "runs/" in pattern and "artifacts" in pattern and "name" not in query:
                return False
            if "workflows" in pattern and query.get("status", [""])[0] in ("", "completed"):
                return False
            action(match)
            return True
        return False

    def _artifacts_of(self, run_id: int) -> list[dict[str, Any]]:
        run = next(r for r in self.state.runs if r["id"] == run_id)
        created = datetime.strptime(run["created_at"], "%Y-%m-%dT%H:%M:%SZ")
        return [
            {
                **self.with_digest(artifact),
                "created_at": (created + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "archive_download_url": f"{self.base}/repos/{REPO}/actions/artifacts/"
                f"{artifact['id']}/zip",
                "workflow_run": {
                    "id": run_id,
                    "head_branch": run["head_branch"],
                    "head_sha": run["head_sha"],
                },
            }
            for artifact in self.state.artifacts.get(run_id, [])
        ]

    def _runs_by_conclusion(self, workflow: str, query: dict[str, list[str]]) -> None:
        runs = [r for r in self.state.runs if r["path"].endswith(f"/{workflow}")]
        for key, field_name in (("branch", "head_branch"), ("event", "event")):
            if key in query:
                runs = [r for r in runs if r[field_name] == query[key][0]]
        runs = [r for r in runs if r["conclusion"] == query["status"][0]]
        runs.sort(key=lambda r: r["created_at"], reverse=True)
        self._page(runs, query, wrap="workflow_runs")

    def _all_artifacts(self, query: dict[str, list[str]]) -> None:
        found = [a for r in self.state.runs for a in self._artifacts_of(r["id"])]
        if "name" in query:
            found = [a for a in found if a["name"] == query["name"][0]]
        found.sort(key=lambda a: (a["created_at"], a["id"]), reverse=True)
        self._page(found, query, wrap="artifacts")

    def _zip(self, artifact_id: int) -> None:
        for artifacts in self.state.artifacts.values():
            for artifact in artifacts:
                if artifact["id"] == artifact_id:
                    if artifact["expired"]:
                        return self._send(410, {"message": "Artifact has expired"})
                    # Another host name for the same server, as storage is another host.
                    storage = self.base.replace("127.0.0.1", "localhost")
                    location = f"{storage}/_blobs/{artifact_id}"
                    return self._send(302, None, {"Location": location})
        return self._send(404, {"message": "Not Found"})

    def _blob(self, artifact_id: int) -> None:
        self.state.blob_auth.append(self.headers.get("Authorization"))
        data = self.state.blobs.get(artifact_id)
        if data is None:
            return self._send(404, {"message": "no such blob"})
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _create_check(self) -> None:
        body = self._body()
        self.state.next_id += 1
        run = {"id": self.state.next_id, "status": body.get("status", "queued"), **body}
        self.state.check_runs.setdefault(body["head_sha"], []).append(run)
        self._send(201, run)

    def _list_issues(self, query: dict[str, list[str]]) -> None:
        wanted = set(query.get("labels", [""])[0].split(",")) - {""}
        found = [
            i
            for i in self.state.issues.values()
            if i.get("state", "open") == "open"
            and wanted <= {label["name"] for label in i.get("labels", [])}
        ]
        self._page(found, query)

    def _create_issue(self) -> None:
        body = self._body()
        number = max([*self.state.issues, 100]) + 1
        issue = {
            "number": number,
            "state": "open",
            "title": body["title"],
            "body": body.get("body", ""),
            "labels": [{"name": n} for n in body.get("labels", [])],
            "user": self.state.user(self.state.token_user[0]),
        }
        self.state.issues[number] = issue
        self._send(201, issue)

    def _edit(self, comment_id: int) -> None:
        body = self._body()
        for comment in self.state.comments:
            if comment["id"] == comment_id:
                comment["body"] = body["body"]
                comment["updated_at"] = stamp(1200)
                return self._send(200, comment)
        return self._send(404, {"message": "Not Found"})


class FakeGitHub:
    """Start with `with FakeGitHub() as api:`; `api.url` goes into GITHUB_API_URL."""

    def __init__(self) -> None:
        self.state = State()
        handler = type("BoundHandler", (ResultsHandler,), {"state": self.state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        handler.base = self.url
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True
        )

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.state.released.set()
        self.server.shutdown()
        self.server.server_close()
