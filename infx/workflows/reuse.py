"""Reusing a PR's green sweep at merge: who may ask, which run, and whether it still stands.

Fail closed: every doubt ends in "no reuse" with a reason; API failures raise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from infx.changelog import CHANGELOG_FILE
from infx.errors import GitHubError, InfxError
from infx.github.client import Artifact, ChangedFile, Comment, GitHub, LabelEvent, Pull, Run
from infx.workflows.commands import ReuseCommand, reuse_command
from infx.workflows.labels import PRIMARY

FULL_SWEEP_LABELS = tuple(name for name, shape in PRIMARY.items() if not shape.trim_conc)
INCOMPATIBLE_LABELS = ("evals-only", "agentx-fast")
PREFILTER_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
WRITE_PERMISSIONS = ("admin", "maintain", "write")
_PATCH_LINE = re.compile(r"^[+-](?![+-]{2} )")
_PR_LINK_LINE = re.compile(r"^[+-]\s*pr-link:")


class ReuseError(InfxError):
    """A reuse request that cannot be decided safely (e.g. several PRs claim one commit)."""

    exit_code = 1


@dataclass(frozen=True)
class Request:
    """A reuse request; `comment` is None for the merge helper's own (unposted) request."""

    comment: Comment | None
    command: ReuseCommand


@dataclass
class Verdict:
    ok: bool
    reason: str
    run: Run | None = None
    pull: Pull | None = None
    request: Request | None = None
    artifacts: list[Artifact] = field(default_factory=list)


def authorized(gh: GitHub, comment: Comment) -> bool:
    """author_association is only a cheap pre-filter; the collaborator permission decides."""
    if comment.association not in PREFILTER_ASSOCIATIONS:
        return False
    return gh.permission(comment.author) in WRITE_PERMISSIONS


def newest_request(gh: GitHub, comments: Iterable[Comment]) -> Request | None:
    """The last command line of the newest authorized comment carrying one."""
    for comment in sorted(comments, key=lambda c: (c.created_at, c.id), reverse=True):
        command = reuse_command(comment.body)
        if command is not None and authorized(gh, comment):
            return Request(comment, command)
    return None


def label_active_at(
    events: Iterable[LabelEvent], labels: Iterable[str], when: datetime
) -> set[str]:
    """Which of `labels` were on the PR at `when`, replayed from labeled/unlabeled events."""
    wanted = set(labels)
    active: set[str] = set()
    for event in sorted(events, key=lambda e: e.created_at):
        if event.created_at > when:
            break
        if event.label in wanted:
            (active.add if event.action == "labeled" else active.discard)(event.label)
    return active


def result_artifacts(artifacts: Iterable[Artifact]) -> list[Artifact]:
    return [
        a
        for a in artifacts
        if not a.expired
        and (a.name in ("results_bmk", "eval_results_all") or a.name.startswith("bmk_agentic_"))
    ]


def only_pr_link_changes(files: Iterable[ChangedFile]) -> list[str]:
    """Files whose change goes beyond perf-changelog.yaml pr-link lines (empty: none)."""
    offending = []
    for f in files:
        if f.filename != CHANGELOG_FILE:
            offending.append(f.filename)
            continue
        changed = [line for line in f.patch.splitlines() if _PATCH_LINE.match(line)]
        if not f.patch or any(not _PR_LINK_LINE.match(line) for line in changed):
            offending.append(f"{f.filename} (beyond pr-link lines)")
    return offending


def _workflow_path(path: str) -> str:
    return path.split("@", 1)[0]


def check_run(run: Run, commits: set[str], workflow: str, pinned: bool) -> str | None:
    """Why `run` cannot be a source run (None: it can), from the run alone."""
    if run.event != "pull_request":
        return f"run {run.id} was triggered by {run.event}, not pull_request"
    if run.status != "completed":
        return f"run {run.id} is {run.status}, not completed"
    allowed = ("success", "failure", "cancelled") if pinned else ("success",)
    if run.conclusion not in allowed:
        return f"run {run.id} concluded {run.conclusion}"
    if _workflow_path(run.path) != f".github/workflows/{workflow}":
        return f"run {run.id} belongs to {run.path}, not .github/workflows/{workflow}"
    if run.head_sha not in commits:
        return f"run {run.id} ran {run.head_sha[:12]}, which is not one of the PR's commits"
    return None


def pull_problem(pull: Pull, repo: str, require_merged: bool) -> str | None:
    if pull.head_repo != repo:
        return f"PR #{pull.number} comes from a fork"
    full = [label for label in pull.labels if label in FULL_SWEEP_LABELS]
    if not full:
        return f"PR #{pull.number} has no full-sweep label"
    bad = [label for label in pull.labels if label in INCOMPATIBLE_LABELS]
    if bad:
        return f"PR #{pull.number} has label {bad[0]}, whose runs are not reusable"
    if require_merged and pull.merged_at is None:
        return f"PR #{pull.number} is not merged"
    return None


def resolve(
    gh: GitHub, pull: Pull, request: Request, workflow: str, *, require_merged: bool
) -> Verdict:
    """Pick and validate the source run for an authorized request on `pull`."""
    problem = pull_problem(pull, gh.slug, require_merged)
    if problem:
        return Verdict(False, problem, pull=pull, request=request)
    commits = gh.pull_commits(pull.number)
    commit_set = set(commits)
    pinned = request.command.run_id is not None
    chosen: Run | None = None
    artifacts: list[Artifact] = []
    if pinned:
        try:
            chosen = gh.run(request.command.run_id)
        except GitHubError as exc:
            if exc.status != 404:
                raise
            return Verdict(
                False,
                f"run {request.command.run_id} does not exist in {gh.slug}",
                pull=pull,
                request=request,
            )
        why = check_run(chosen, commit_set, workflow, pinned=True)
        if why:
            return Verdict(False, why, chosen, pull, request)
        artifacts = result_artifacts(gh.artifacts(chosen.id))
        if not artifacts:
            return Verdict(
                False, f"run {chosen.id} has no unexpired result artifacts", chosen, pull, request
            )
    else:
        for run in gh.runs(workflow, pull.head_ref):
            if check_run(run, commit_set, workflow, pinned=False):
                continue
            artifacts = result_artifacts(gh.artifacts(run.id))
            if artifacts:
                chosen = run
                break
        if chosen is None:
            return Verdict(
                False,
                f"no completed, successful {workflow} run of PR #{pull.number}'s commits "
                "with unexpired result artifacts",
                pull=pull,
                request=request,
            )
    active = label_active_at(gh.label_events(pull.number), FULL_SWEEP_LABELS, chosen.created_at)
    if not active:
        return Verdict(
            False,
            f"run {chosen.id} started without a full-sweep label on the PR",
            chosen,
            pull,
            request,
        )
    if chosen.head_sha != pull.head_sha:
        changed = changes_since(gh, chosen.head_sha, pull.head_sha)
        if changed:
            return Verdict(
                False,
                f"commits after run {chosen.id} change {', '.join(changed)}",
                chosen,
                pull,
                request,
            )
    return Verdict(
        True, f"reusing run {chosen.id} of PR #{pull.number}", chosen, pull, request, artifacts
    )


def changes_since(gh: GitHub, run_sha: str, head_sha: str) -> list[str]:
    """What the PR changed after the source run besides pr-link lines; merges of main are allowed."""
    comparison = gh.compare(run_sha, head_sha)
    if all(parents < 2 for _, parents in comparison.commits):
        return only_pr_link_changes(comparison.files)
    offending: list[str] = []
    for sha, parents in comparison.commits:
        if parents < 2:
            offending += only_pr_link_changes(gh.commit_files(sha))
    return sorted(set(offending))


@dataclass
class GateResult:
    reuse_enabled: bool = False
    skip_pr_sweep: bool = False
    reason: str = ""
    verdict: Verdict | None = None

    def outputs(self) -> dict[str, str]:
        run = self.verdict.run if self.verdict and self.verdict.ok else None
        pull = self.verdict.pull if self.verdict else None
        return {
            "reuse-enabled": str(self.reuse_enabled).lower(),
            "skip-pr-sweep": str(self.skip_pr_sweep).lower(),
            "reuse-source-run-id": str(run.id) if run else "",
            "reuse-source-run-attempt": str(run.run_attempt) if run else "",
            "reuse-source-run-url": run.html_url if run else "",
            "reuse-source-pr-number": str(pull.number) if pull and run else "",
            "reuse-source-head-sha": run.head_sha if run else "",
            "reuse-reason": self.reason,
        }


def gate(
    gh: GitHub,
    *,
    event_name: str,
    commit_sha: str,
    ref: str,
    workflow: str,
    event_action: str | None = None,
    pr_number: int | None = None,
) -> GateResult:
    """The reuse decision for one workflow run of the sweep."""
    if event_name == "pull_request":
        if event_action != "synchronize" or pr_number is None:
            return GateResult(reason="only a pull_request synchronize can skip the PR sweep")
        request = newest_request(gh, gh.comments(pr_number))
        if request is None:
            return GateResult(reason=f"no authorized /reuse-sweep-run on PR #{pr_number}")
        verdict = resolve(gh, gh.pull(pr_number), request, workflow, require_merged=False)
        if not verdict.ok:
            return GateResult(reason=f"PR sweep runs: {verdict.reason}", verdict=verdict)
        return GateResult(
            skip_pr_sweep=True,
            reason=f"PR sweep skipped: {verdict.reason} at merge",
            verdict=verdict,
        )
    if event_name != "push" or ref != "refs/heads/main":
        return GateResult(reason=f"{event_name} to {ref} never reuses")
    pulls = gh.pulls_for_commit(commit_sha)
    if not pulls:
        return GateResult(reason=f"commit {commit_sha[:12]} belongs to no PR")
    if len(pulls) > 1:
        claimed = [p.number for p in pulls if newest_request(gh, gh.comments(p.number))]
        if claimed:
            raise ReuseError(
                f"commit {commit_sha[:12]} belongs to PRs "
                f"{', '.join('#' + str(p.number) for p in pulls)} and #{claimed[0]} asks for "
                "reuse; refusing to guess which sweep to publish"
            )
        return GateResult(
            reason=f"commit {commit_sha[:12]} belongs to several PRs, none asks for reuse"
        )
    pull = pulls[0]
    request = newest_request(gh, gh.comments(pull.number))
    if request is None:
        return GateResult(reason=f"no authorized /reuse-sweep-run on PR #{pull.number}")
    verdict = resolve(gh, pull, request, workflow, require_merged=True)
    if not verdict.ok:
        return GateResult(reason=f"no reuse: {verdict.reason}", verdict=verdict)
    return GateResult(
        reuse_enabled=True, skip_pr_sweep=False, reason=verdict.reason, verdict=verdict
    )


@dataclass
class AckResult:
    reaction: str | None  # "+1", "-1" or None (event ignored)
    reason: str


def ack(gh: GitHub, payload: dict, workflow: str) -> AckResult:
    """Acknowledge a /reuse-sweep-run comment (issue_comment created/edited) with a reaction."""
    issue = payload.get("issue") or {}
    event_comment = payload.get("comment") or {}
    if not issue.get("pull_request"):
        return AckResult(None, "comment is on an issue, not a pull request")
    if reuse_command(event_comment.get("body", "")) is None:
        return AckResult(None, "comment carries no /reuse-sweep-run line")
    comment = gh.comment(int(event_comment["id"]))
    if comment.body != event_comment.get("body") or _stamp(comment.updated_at) != event_comment.get(
        "updated_at"
    ):
        return AckResult(
            None, f"comment {comment.id} changed since this event; a newer event decides"
        )
    if not authorized(gh, comment):
        return AckResult("-1", f"{comment.author} lacks write, maintain or admin permission")
    number = int(issue["number"])
    request = newest_request(gh, gh.comments(number))
    if request is None or request.comment.id != comment.id:
        newer = request.comment.id if request else "none"
        return AckResult(
            "-1", f"comment {comment.id} is not the newest authorized request (newest: {newer})"
        )
    pull = gh.pull(number)
    if pull.state != "open":
        return AckResult("-1", f"PR #{number} is {pull.state}")
    verdict = resolve(gh, pull, request, workflow, require_merged=False)
    return AckResult("+1" if verdict.ok else "-1", verdict.reason)


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")
