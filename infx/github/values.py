"""What the GitHub API answers, as infx's own values: the edge maps responses onto these."""

from __future__ import annotations

from dataclasses import dataclass


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
