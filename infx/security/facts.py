"""What `infx security check` reads: the settings, each as GitHub answers it or as unread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from infx.errors import GitHubError
from infx.github.values import Environment, PrivateForkPolicy, RunnerGroup, SelfHostedRunner

if TYPE_CHECKING:
    from infx.github.client import GitHub

T = TypeVar("T")


@dataclass(frozen=True)
class Unread:
    """A setting the API would not show this token, with GitHub's answer."""

    reason: str


@dataclass(frozen=True)
class Facts:
    repo: str
    private: bool
    organization: str | None  # the owner, when it is an organization
    fork_approval: str | PrivateForkPolicy | Unread
    token_permissions: tuple[str, bool] | Unread  # default permissions, may approve PRs
    runners: list[SelfHostedRunner] | Unread
    groups: list[RunnerGroup] | Unread | None  # None: a user's repository has no groups
    # The environment that holds an over-budget sweep (None: the repository has none).
    budget_environment: Environment | Unread | None = None
    environment_name: str = "gpu-budget"


def _readable(fetch: Callable[[], T]) -> T | Unread:
    """GitHub answers 403 or 404 to a token without the admin permission a setting needs."""
    try:
        return fetch()
    except GitHubError as exc:
        if exc.status in (403, 404):
            return Unread(str(exc))
        raise


def read_facts(gh: GitHub, environment: str = "gpu-budget") -> Facts:
    private, owner, owner_type = gh.repository_owner()
    organization = owner if owner_type == "Organization" else None
    fork_approval: str | PrivateForkPolicy | Unread
    if private:
        fork_approval = _readable(gh.private_fork_policy)
    else:
        fork_approval = _readable(gh.fork_approval_policy)
    listed = [_readable(gh.self_hosted_runners)]
    groups: list[RunnerGroup] | Unread | None = None
    if organization is not None:
        listed.append(_readable(lambda: gh.self_hosted_runners(organization)))
        groups = _readable(lambda: gh.runner_groups(organization))
    readable = [runner for found in listed if isinstance(found, list) for runner in found]
    runners = readable if readable or not isinstance(listed[-1], Unread) else listed[-1]
    return Facts(
        repo=gh.slug,
        private=private,
        organization=organization,
        fork_approval=fork_approval,
        token_permissions=_readable(gh.workflow_token_permissions),
        runners=runners,
        groups=groups,
        budget_environment=_readable(lambda: gh.environment(environment)),
        environment_name=environment,
    )


def repository_facts(repo: str | None, environment: str, root: Path) -> Facts:
    """The settings of the repository --repo names (by the settings at `root`), read as
    one metered decision."""
    import os

    from infx.context import repo_slug
    from infx.errors import UsageError
    from infx.github.client import GitHub

    slug = repo_slug(repo, root)
    if not (os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")):
        raise UsageError(
            f"security check reads {slug}'s settings, which GitHub shows only to a token: "
            "set GH_TOKEN (a repository admin's, to read them all)"
        )
    gh = GitHub(slug)
    return gh.decide(lambda: read_facts(gh, environment))
