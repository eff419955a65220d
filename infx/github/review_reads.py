"""The reads a code-owner sign-off needs: a pull request's scope (author, base commit, how
many files it changes), its changed files, its reviews, a file at a commit (CODEOWNERS at
the base), and the members of a team. PyGithub's typed classes would fetch again for any
field an answer leaves out, so each answer is read raw and checked field by field.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import quote

from infx.errors import GitHubError
from infx.github import reading
from infx.github.transport import Answer, Pages, Transport, doing
from infx.github.values import ChangedFile, PullScope, Review

_BOTS = ("Bot",)


def pull_scope(item: reading.Json) -> PullScope:
    user = item.obj("user")
    return PullScope(
        number=item.number("number"),
        state=item.text("state"),
        draft=item.flag("draft"),
        author=user.text("login"),
        head_sha=item.obj("head").sha("sha"),
        base_sha=item.obj("base").sha("sha"),
        base_ref=item.obj("base").text("ref"),
        changed_files=item.number("changed_files"),
    )


def changed_file(item: reading.Json) -> ChangedFile:
    return ChangedFile(path=item.text("filename"), previous=item.maybe_text("previous_filename"))


def review(item: reading.Json) -> Review:
    user = item.maybe_obj("user")  # a deleted account's review names no one
    login = user.text("login") if user is not None else ""
    kind = user.maybe_text("type") if user is not None else None
    return Review(
        id=item.number("id"),
        author=login,
        bot=kind in _BOTS or login.endswith("[bot]"),
        state=item.text("state"),
        commit=item.maybe_text("commit_id"),
        submitted_at=item.maybe_time("submitted_at"),
    )


class ReviewReads:
    """The sign-off reads of infx.github.client.GitHub, which sets these attributes."""

    slug: str
    _transport: Transport
    _base: str

    def pull_scope(self, number: int) -> PullScope:
        with doing(f"reading PR #{number}"):
            return pull_scope(Answer(self._transport, url=f"{self._base}/pulls/{number}").json)

    def pull_files(self, number: int) -> list[ChangedFile]:
        """Every file the PR changes (GitHub lists at most 3,000; the caller compares the
        count with the PR's `changed_files`)."""
        with doing(f"listing the files of PR #{number}"):
            pages = Pages(self._transport, f"{self._base}/pulls/{number}/files")
            return [changed_file(item) for item in pages.items()]

    def pull_reviews(self, number: int) -> list[Review]:
        """Every review of the PR, oldest first."""
        with doing(f"listing the reviews of PR #{number}"):
            pages = Pages(self._transport, f"{self._base}/pulls/{number}/reviews")
            return [review(item) for item in pages.items()]

    def file_at(self, path: str, ref: str) -> bytes | None:
        """A file's bytes at a commit (None: no such file there)."""
        what = f"reading {path} at {ref[:12]}"
        try:
            with doing(what):
                url = f"{self._base}/contents/{quote(path)}?ref={quote(ref, safe='')}"
                item = Answer(self._transport, url=url).json
                kind, encoding = item.text("type"), item.maybe_text("encoding")
                text = item.maybe_text("content")
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        if kind != "file" or encoding != "base64" or text is None:
            raise GitHubError(f"{what}: GitHub answered a {kind}, not a file's content")
        try:
            return base64.b64decode(text, validate=False)
        except (binascii.Error, ValueError) as exc:
            raise GitHubError(f"{what}: the content is not base64 ({exc})") from None

    def team_members(self, organization: str, team: str) -> frozenset[str] | None:
        """The logins (lower case) of a team's members, or None when the token cannot see the
        team (GitHub answers 404 or 403: a workflow token cannot read organization teams)."""
        url = f"/orgs/{quote(organization)}/teams/{quote(team)}/members"
        try:
            with doing(f"listing the members of @{organization}/{team}"):
                items = Pages(self._transport, url).items()
                return frozenset(item.text("login").lower() for item in items)
        except GitHubError as exc:
            if exc.status in (403, 404):
                return None
            raise
