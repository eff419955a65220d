"""Code-owner sign-off: which owners must sign off a pull request, whether they did, and the
advisory verdict (with the Pareto escalation) that goes beside the status.

The rules, on values read elsewhere (`infx.review.facts`):

- the owners of a path are the last matching line of CODEOWNERS **as committed at the PR's
  base**: a PR that edits CODEOWNERS changes nothing for itself;
- every path the PR touches counts, and for a rename its old path too (moving a file out
  of an owned folder still needs that folder's owners);
- a path needs a sign-off when one of its owners is not exempt: exempt are the owners
  `[review] exempt` names (a core team) and users with admin permission;
- a sign-off is an approving review on the PR's current head, by a user with write or
  admin permission who is not the PR's author and not a bot, and whose newest review
  (approve, request changes, dismissed) is that approval. Comments never count; an
  approval of an earlier head, a dismissed one, one withdrawn by a later "request
  changes" do not either;
- a path is signed off when someone who owns it signed off: a user owner by their login
  (any case), a team owner by a member the token can see (a team it cannot read is
  satisfied by no one), never an email owner;
- the status is success when every path that needs a sign-off has one, failure otherwise.

Pure: `infx.review.facts` reads the PR, its files and reviews, CODEOWNERS at the base,
permissions and team members.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from infx.github.values import ChangedFile, PullScope, Review
from infx.markdown import Md, code, table, text
from infx.review.codeowners import CodeOwners, is_team, is_user

STATUS_CONTEXT = "codeowner-signoff-verify"
MARKER = "<!-- infx:codeowner-signoff -->"
PARETO_CHECK = "infx/pareto-coverage"
WRITERS = frozenset({"admin", "write"})  # GitHub's permission: maintain reads as write
_DECIDING = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
_EPOCH = datetime.min


@dataclass(frozen=True)
class SignoffFacts:
    pull: PullScope
    files: tuple[ChangedFile, ...]
    codeowners: CodeOwners | None  # None: the base has no CODEOWNERS file
    reviews: tuple[Review, ...]
    permissions: Mapping[str, str]  # login (lower case) -> admin | write | read | none
    teams: Mapping[str, frozenset[str] | None]  # @org/team (lower) -> members; None: unreadable
    exempt: frozenset[str]  # owners (lower case) whose sign-off is never required
    changelog: str  # the changelog path: a PR touching it is performance-affecting
    pareto: str | None  # the conclusion of the head's Pareto check; None: none ran


@dataclass(frozen=True)
class Group:
    """The paths one owner list owns, and what became of them."""

    owners: tuple[str, ...]
    paths: tuple[str, ...]
    required: bool
    signed_by: tuple[str, ...]

    @property
    def missing(self) -> bool:
        return self.required and not self.signed_by


@dataclass(frozen=True)
class Verdict:
    number: int
    head_sha: str
    groups: tuple[Group, ...]
    counted: tuple[str, ...]  # approvers whose sign-off counts
    ignored: tuple[str, ...]  # reviews that do not count, each with why
    notes: tuple[str, ...]  # owners no approval can satisfy, and why
    pareto: str  # pass | warn | unverified | n/a
    codeowners: str | None

    @property
    def required(self) -> bool:
        return any(g.required for g in self.groups)

    @property
    def passed(self) -> bool:
        return not any(g.missing for g in self.groups)

    @property
    def state(self) -> str:
        return "success" if self.passed else "failure"

    @property
    def description(self) -> str:
        """The status line (GitHub keeps 140 characters)."""
        if not self.required:
            return "No changed file needs a code-owner sign-off"
        if self.passed:
            return "Every owned file is signed off on this commit"
        waiting = sorted({o for g in self.groups if g.missing for o in g.owners})
        line = f"Waiting for a sign-off from {', '.join(waiting)}"
        return line if len(line) <= 140 else line[:137] + "..."


def owner_key(owner: str) -> str:
    return owner.lower()


def changed_paths(files: tuple[ChangedFile, ...]) -> list[str]:
    """Every path a PR touches: each file's path and, for a rename, its old one."""
    return sorted({f.path for f in files} | {f.previous for f in files if f.previous})


def owners_by_path(
    files: tuple[ChangedFile, ...], rules: CodeOwners | None
) -> dict[str, tuple[str, ...]]:
    if rules is None:
        return {path: () for path in changed_paths(files)}
    return {path: rules.owners_of(path) for path in changed_paths(files)}


def latest_reviews(reviews: tuple[Review, ...]) -> dict[str, Review]:
    """Each reviewer's newest approving, change-requesting or dismissed review (comments
    and pending reviews change no one's state), by login in lower case."""
    newest: dict[str, Review] = {}
    ordered = sorted(reviews, key=lambda r: (r.submitted_at or _EPOCH, r.id))
    for item in ordered:
        if item.state in _DECIDING and item.author:
            newest[owner_key(item.author)] = item
    return newest


def candidates(reviews: tuple[Review, ...], head_sha: str, author: str) -> list[str]:
    """Logins (lower case) whose newest deciding review approves the head, before any
    permission is read: who may count, and whose permission to read."""
    return sorted(
        login
        for login, item in latest_reviews(reviews).items()
        if item.state == "APPROVED"
        and item.commit == head_sha
        and not item.bot
        and login != owner_key(author)
    )


def _why_not(item: Review, head_sha: str, author: str, permission: str | None) -> str | None:
    who = f"@{item.author}"
    if item.state == "DISMISSED":
        return f"{who}: the approval was dismissed"
    if item.state == "CHANGES_REQUESTED":
        return f"{who}: requested changes"
    if item.bot:
        return f"{who}: a bot"
    if owner_key(item.author) == owner_key(author):
        return f"{who}: the PR's author"
    if item.commit != head_sha:
        return f"{who}: approved an earlier commit ({(item.commit or '?')[:7]})"
    if permission not in WRITERS:
        return f"{who}: {permission or 'no'} permission on the repository"
    return None


def decide(facts: SignoffFacts) -> Verdict:
    pull = facts.pull
    counted: list[str] = []
    ignored: list[str] = []
    for login, item in sorted(latest_reviews(facts.reviews).items()):
        why = _why_not(item, pull.head_sha, pull.author, facts.permissions.get(login))
        if why is None:
            counted.append(login)
        else:
            ignored.append(why)
    exempt = set(facts.exempt) | {
        owner_key(f"@{login}")
        for login, permission in facts.permissions.items()
        if permission == "admin"
    }
    notes: set[str] = set()
    grouped: dict[tuple[str, ...], list[str]] = {}
    for path, owners in owners_by_path(facts.files, facts.codeowners).items():
        grouped.setdefault(owners, []).append(path)
    groups = []
    for owners, paths in sorted(grouped.items()):
        required = any(owner_key(o) not in exempt for o in owners)
        signed = sorted({login for o in owners for login in _signers(o, counted, facts, notes)})
        groups.append(Group(owners, tuple(paths), required, tuple(f"@{s}" for s in signed)))
    touched = facts.changelog in changed_paths(facts.files)
    if not touched:
        pareto = "n/a"
    elif facts.pareto is None:
        pareto = "unverified"
    else:
        pareto = "pass" if facts.pareto == "success" else "warn"
    return Verdict(
        pull.number,
        pull.head_sha,
        tuple(groups),
        tuple(f"@{c}" for c in counted),
        tuple(ignored),
        tuple(sorted(notes)),
        pareto,
        facts.codeowners.path if facts.codeowners else None,
    )


def _signers(owner: str, counted: list[str], facts: SignoffFacts, notes: set[str]) -> list[str]:
    key = owner_key(owner)
    if is_user(owner):
        return [login for login in counted if f"@{login}" == key]
    if is_team(owner):
        members = facts.teams.get(key)
        if members is None:
            notes.add(f"{owner}: the token cannot read this team's members, so no one signs for it")
            return []
        return [login for login in counted if login in members]
    notes.add(f"{owner}: an email owner, which no GitHub review can sign for")
    return []


def comment(verdict: Verdict, escalate: tuple[str, ...], points: int) -> str:
    """The advisory verdict: Markdown, every value escaped; mentions only of the maintainers
    `[review] escalate` names (the settings, not the PR, say who)."""
    if not verdict.required:
        head = "➖ no changed file needs a code-owner sign-off"
    elif verdict.passed:
        head = "✅ signed off"
    else:
        head = "❌ waiting for a code-owner sign-off"
    lines = [MARKER, f"### Code-owner sign-off: {head}", ""]
    lines.append(f"Assessed commit {code(verdict.head_sha)}; the status is `{STATUS_CONTEXT}`.")
    if verdict.codeowners is None:
        lines.append("The base commit has no CODEOWNERS file: no file has an owner.")
    else:
        lines.append(f"Owners are read from {code(verdict.codeowners)} at the PR's base.")
    lines.append("")
    rows = [
        (
            Md(" ".join(text(o) for o in g.owners)) if g.owners else text("(no owner)"),
            Md("<br>".join(code(p) for p in g.paths[:20]) + (" …" if len(g.paths) > 20 else "")),
            "yes" if g.required else "no",
            Md(", ".join(text(s) for s in g.signed_by)) if g.signed_by else text("–"),
        )
        for g in verdict.groups
    ]
    if rows:
        lines.append(table(("owners", "files", "needs a sign-off", "signed off by"), rows))
    for title, items in (("Not counted", verdict.ignored), ("Note", verdict.notes)):
        for item in items:
            lines.append(f"- {title}: {text(item)}")
    lines.append("")
    lines.append(_pareto_line(verdict.pareto, escalate, points))
    return "\n".join(lines).rstrip() + "\n"


def _pareto_line(pareto: str, escalate: tuple[str, ...], points: int) -> str:
    if pareto == "n/a":
        return "Pareto coverage: not applicable (the PR does not change the changelog)."
    if pareto == "pass":
        return f"Pareto coverage: every curve of the sweep has at least {points} frontier points."
    why = (
        f"a curve of the sweep has fewer than {points} frontier points"
        if pareto == "warn"
        else f"no `{PARETO_CHECK}` check ran on this commit"
    )
    who = " ".join(Md(name) for name in escalate)
    ask = f" Needs another look: {who}." if who else ""
    return f"⚠️ Pareto coverage: {why}.{ask} Advisory: the sign-off status does not depend on it."
