"""What the review commands read from GitHub, all through infx.github's client (metered,
strict about shapes): a pull request's sign-off facts, and the check that carries a sweep's
Pareto coverage. The rules that decide on them are pure (`signoff`, `pareto`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from infx.errors import GitHubError, ReviewError
from infx.review import codeowners
from infx.review.signoff import (
    PARETO_CHECK,
    SignoffFacts,
    candidates,
    owner_key,
    owners_by_path,
)

if TYPE_CHECKING:  # PyGithub loads only when a command talks to GitHub
    from infx.github.client import GitHub
    from infx.github.values import PullScope
    from infx.settings import Settings


def find_pull(gh: GitHub, number: int | None, sha: str | None, base: str) -> int:
    """The PR a run is about: its number, or the one open PR into `base` whose head is
    `sha` (a review of a fork's PR reaches the sign-off through workflow_run, which names
    only the commit)."""
    if number is not None:
        return number
    if not sha:
        raise ReviewError("name the pull request (--pr) or its head commit (--sha)")
    found = [p.number for p in gh.open_pulls(base) if p.head_sha == sha]
    if len(found) != 1:
        raise ReviewError(
            f"{len(found)} open pull requests into {base} have head {sha[:12]}: name one with --pr"
        )
    return found[0]


def _codeowners(gh: GitHub, ref: str) -> codeowners.CodeOwners | None:
    for path in codeowners.LOCATIONS:
        data = gh.file_at(path, ref)
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ReviewError(f"{path} at {ref[:12]} is not UTF-8 text") from None
        return codeowners.parse(text, path)
    return None


def pareto_conclusion(gh: GitHub, sha: str) -> str | None:
    """The conclusion of the newest completed Pareto coverage check on a commit, if any."""
    found = [
        c
        for name, status, c in gh.check_runs(sha)
        if name == PARETO_CHECK and status == "completed"
    ]
    return found[-1] if found else None


def signoff_facts(gh: GitHub, number: int, settings: Settings) -> SignoffFacts:
    """Everything the sign-off decides on, read as one decision (metered, capped); fails
    closed when GitHub lists fewer files than the PR changes or the PR moves meanwhile."""

    def read() -> SignoffFacts:
        pull = gh.pull_scope(number)
        files = tuple(gh.pull_files(number))
        if len(files) != pull.changed_files:
            raise ReviewError(
                f"PR #{number} changes {pull.changed_files} files but GitHub listed {len(files)}: "
                "the sign-off cannot see every file"
            )
        rules = _codeowners(gh, pull.base_sha)
        reviews = tuple(gh.pull_reviews(number))
        owners = {o for found in owners_by_path(files, rules).values() for o in found}
        users = {owner_key(o)[1:] for o in owners if codeowners.is_user(o)}
        logins = users | set(candidates(reviews, pull.head_sha, pull.author))
        permissions = {login: _permission(gh, login) for login in sorted(logins)}
        teams = {}
        for owner in sorted(o for o in owners if codeowners.is_team(o)):
            org, team = owner[1:].split("/", 1)
            teams[owner_key(owner)] = gh.team_members(org, team)
        pareto = pareto_conclusion(gh, pull.head_sha)
        _unmoved(pull, gh.pull_scope(number))
        return SignoffFacts(
            pull,
            files,
            rules,
            reviews,
            permissions,
            teams,
            frozenset(owner_key(o) for o in settings.review.exempt),
            settings.changelog,
            pareto,
        )

    return gh.decide(read)


def _permission(gh: GitHub, login: str) -> str:
    """A user's permission; one GitHub does not know (a deleted account CODEOWNERS still
    names) has none."""
    try:
        return gh.permission(login)
    except GitHubError as exc:
        if exc.status == 404:
            return "none"
        raise


def _unmoved(before: PullScope, after: PullScope) -> None:
    if (before.head_sha, before.base_sha) != (after.head_sha, after.base_sha):
        raise ReviewError(
            f"PR #{before.number} moved while it was read (head {before.head_sha[:7]} -> "
            f"{after.head_sha[:7]}, base {before.base_sha[:7]} -> {after.base_sha[:7]}): "
            "the event its move sends checks it again"
        )


def upsert_comment(gh: GitHub, number: int, body: str, bot_login: str) -> None:
    """Edit the bot's verdict comment (only when it says something new), else post one."""
    from infx.review.signoff import MARKER

    mine = [c for c in gh.comments(number) if c.author == bot_login and c.body.startswith(MARKER)]
    if not mine:
        gh.create_comment(number, body)
    elif mine[0].body != body:
        gh.edit_comment(mine[0].id, body)


def planned_curves(plan: Path) -> list[dict[str, object]]:
    """The throughput points a sweep's plan (sweep.json) planned, as result identities."""
    from infx.matrix.rows import jobs_of, read_plan
    from infx.results.ingest.process import identity

    rows = jobs_of(read_plan(plan.read_bytes(), str(plan)))
    return [
        dict(identity(row, 0)) for row, is_eval in rows if not is_eval and not row.get("eval-only")
    ]
