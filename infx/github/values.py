"""What the GitHub API answers, as infx's own values: the edge maps responses onto these.

Plain frozen dataclasses, so the rules that decide on them never see a response, a
PyGithub object or a guess: every field was checked where the answer was read
(infx/github/reading.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


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
    title: str | None = None  # display_title: the workflow's run-name, as GitHub made it


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
    # The runner group GitHub names for the job's runner (`runner_group_name`); None: not said
    runner_group: str | None = None

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
    digest: str | None = None  # sha256:<hex> of its zip archive, when GitHub says


@dataclass(frozen=True)
class LabelEvent:
    action: str  # labeled | unlabeled
    label: str
    created_at: datetime
    actor: str = ""  # who added or removed it ("": GitHub names no one)


@dataclass(frozen=True)
class SelfHostedRunner:
    name: str
    labels: tuple[str, ...]
    ephemeral: bool | None  # None: the API did not say
    group_id: int | None  # None: registered to the repository, or not said


@dataclass(frozen=True)
class RunnerGroup:
    id: int
    name: str
    restricted_to_workflows: bool
    selected_workflows: tuple[str, ...]


@dataclass(frozen=True)
class PrivateForkPolicy:
    run_workflows: bool
    send_write_tokens: bool
    send_secrets: bool
    require_approval: bool


@dataclass(frozen=True)
class Environment:
    """A deployment environment's protection, as far as a job that names it waits."""

    name: str
    reviewers: tuple[str, ...]  # required reviewers (user logins, team slugs); (): none


@dataclass(frozen=True)
class Approval:
    """One review of a run's pending deployments: who approved or rejected which
    environments."""

    state: str  # approved | rejected | pending
    user: str
    environments: tuple[str, ...]
    comment: str = ""


@dataclass(frozen=True)
class PullScope:
    """What a code-owner sign-off reads of a pull request."""

    number: int
    state: str
    draft: bool
    author: str
    head_sha: str
    base_sha: str  # the base commit GitHub compares the head with
    base_ref: str
    changed_files: int  # how many files GitHub says it changes


@dataclass(frozen=True)
class ChangedFile:
    path: str
    previous: str | None = None  # the path before a rename


@dataclass(frozen=True)
class Review:
    """One review of a pull request."""

    id: int
    author: str  # "": a deleted account
    bot: bool
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | DISMISSED | PENDING
    commit: str | None  # the head it reviewed
    submitted_at: datetime | None
