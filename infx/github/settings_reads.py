"""The repository and organization settings `infx security check` reads, and the deployment
environment that holds an over-budget sweep with a run's reviews of it.

Most need a token that may administer the repository (or the organization's runners):
GitHub answers 403 or 404 otherwise. PyGithub has no class for the Actions permission
endpoints or runner groups, so their answers are read raw (transport.Answer) and checked
field by field like every other.
"""

from __future__ import annotations

from urllib.parse import quote

from infx.errors import GitHubError
from infx.github import reading
from infx.github.transport import Answer, Pages, Transport, doing
from infx.github.values import (
    Approval,
    Environment,
    PrivateForkPolicy,
    RunnerGroup,
    SelfHostedRunner,
)


class SettingsReads:
    """The settings reads of infx.github.client.GitHub, which sets these attributes."""

    slug: str
    _transport: Transport
    _base: str

    def _answer(self, url: str) -> reading.Json:
        return Answer(self._transport, url=url).json

    def repository_owner(self) -> tuple[bool, str, str]:
        """(private, owner login, owner type: User or Organization)."""
        with doing(f"reading {self.slug}"):
            item = self._answer(self._base)
            owner = item.obj("owner")
            return item.flag("private"), owner.text("login"), owner.text("type")

    def fork_approval_policy(self) -> str:
        """Which outside contributors' fork PR runs wait for approval (public repositories)."""
        with doing("reading the fork pull request approval policy"):
            url = f"{self._base}/actions/permissions/fork-pr-contributor-approval"
            return self._answer(url).text("approval_policy")

    def private_fork_policy(self) -> PrivateForkPolicy:
        with doing("reading the fork pull request policy of a private repository"):
            url = f"{self._base}/actions/permissions/fork-pr-workflows-private-repos"
            return reading.private_fork_policy(self._answer(url))

    def workflow_token_permissions(self) -> tuple[str, bool]:
        """The workflow token's default permissions (read or write), and whether workflows
        may approve pull requests."""
        with doing("reading the default workflow permissions"):
            item = self._answer(f"{self._base}/actions/permissions/workflow")
            return item.text("default_workflow_permissions"), item.flag(
                "can_approve_pull_request_reviews"
            )

    def self_hosted_runners(self, organization: str | None = None) -> list[SelfHostedRunner]:
        """The repository's self-hosted runners, or the organization's."""
        where = f"/orgs/{organization}" if organization else self._base
        with doing(f"listing the self-hosted runners of {organization or self.slug}"):
            pages = Pages(self._transport, f"{where}/actions/runners", key="runners")
            return [reading.runner(item) for item in pages.items()]

    def runner_groups(self, organization: str) -> list[RunnerGroup]:
        with doing(f"listing the runner groups of {organization}"):
            url = f"/orgs/{organization}/actions/runner-groups"
            pages = Pages(self._transport, url, key="runner_groups")
            return [reading.runner_group(item) for item in pages.items()]

    def environment(self, name: str) -> Environment | None:
        """A deployment environment's protection (None: the repository has no environment of
        that name; a job that names one creates it, unprotected). Anyone who may read the
        repository may read it (GITHUB_TOKEN: actions: read)."""
        try:
            with doing(f"reading the environment {name}"):
                item = self._answer(f"{self._base}/environments/{quote(name, safe='')}")
                return reading.environment(item)
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise

    def run_approvals(self, run_id: int) -> list[Approval]:
        """The reviews of a run's pending deployments (who approved which environments)."""
        with doing(f"reading the deployment approvals of run {run_id}"):
            pages = Pages(self._transport, f"{self._base}/actions/runs/{run_id}/approvals")
            return [reading.approval(item) for item in pages.items()]
