"""Who may speak for a repository: GitHub's author associations and collaborator permissions.

`author_association` on a comment is cheap (it comes with the comment) but coarse, so it
only pre-filters; the collaborator permission, one request per author, decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from infx.github.values import Comment

PREFILTER_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
WRITE_PERMISSIONS = ("admin", "maintain", "write")


def authorized(comment: Comment, permissions: Mapping[str, str]) -> bool:
    """author_association is only a cheap pre-filter; the collaborator permission decides."""
    return (
        comment.association in PREFILTER_ASSOCIATIONS
        and permissions.get(comment.author) in WRITE_PERMISSIONS
    )
