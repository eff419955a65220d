"""The reads that say who made a run's bytes: the artifact attestations GitHub holds for a
digest, and, where a repository has none, the pull requests ever opened from a branch and
when each one's base changed (which pull request, into which base, a pull_request run of
that branch can have run for)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from infx.errors import GitHubError
from infx.github import reading
from infx.github.transport import Answer, Pages, Transport, doing
from infx.github.values import Pull


class TrustReads:
    """The trust reads of infx.github.client.GitHub, which sets these attributes."""

    slug: str
    _transport: Transport
    _base: str

    def attestations(self, digest: str) -> list[Any]:
        """The Sigstore bundles of the repository's attestations of `digest` (sha256:<hex>),
        as GitHub stores them; none: []. Checked by infx.reuse.attestation, not here."""
        try:
            with doing(f"reading the attestations of {digest[:19]}"):
                item = Answer(self._transport, url=f"{self._base}/attestations/{digest}").json
                listed = item.items("attestations")
        except GitHubError as exc:
            if exc.status == 404:
                return []
            raise
        return [
            entry.data["bundle"] for entry in listed if isinstance(entry.data.get("bundle"), dict)
        ]

    def on_branch(self, sha: str, branch: str) -> bool:
        """Whether commit `sha` is on `branch` (the branch's tip or behind it), as GitHub
        compares them; a commit GitHub does not know is not."""
        try:
            with doing(f"comparing {sha[:12]} with {branch}"):
                url = f"{self._base}/compare/{branch}...{sha}"
                status = Answer(self._transport, url=url).json.text("status")
        except GitHubError as exc:
            if exc.status == 404:
                return False
            raise
        return status in ("behind", "identical")

    def pulls_from(self, owner: str, branch: str) -> list[Pull]:
        """Every pull request ever opened from `owner`'s `branch`, open or closed (one page:
        the newest 100)."""
        params = {"head": f"{owner}:{branch}", "state": "all", "per_page": 100}
        with doing(f"listing the pull requests from {branch}"):
            page = Pages(self._transport, f"{self._base}/pulls", params).first_page()
            return [reading.pull(item) for item in page]

    def base_changes(self, number: int) -> list[datetime]:
        """When PR `number`'s base branch was changed (its timeline's base_ref_changed)."""
        with doing(f"reading the timeline of PR #{number}"):
            items = Pages(self._transport, f"{self._base}/issues/{number}/timeline").items()
            return [
                item.time("created_at")
                for item in items
                if item.maybe_text("event") == "base_ref_changed"
            ]
