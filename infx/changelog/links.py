"""The forms a `pr-link` may take."""

from __future__ import annotations

import re
from dataclasses import dataclass

from infx.settings import DEFAULT_SERVER

PLACEHOLDER = "XXX"


@dataclass(frozen=True)
class LinkPolicy:
    """Which repository links point at, and which PR (if any) this change belongs to.

    `pr` set: a pull request's check (placeholders or that PR's link). `branch`: a
    contributor's branch before it has a PR number (placeholders or any canonical link).
    Neither: main, where every link must be canonical.
    """

    repo: str
    server: str = DEFAULT_SERVER
    pr: int | None = None
    branch: bool = False

    @property
    def base(self) -> str:
        return f"{self.server.rstrip('/')}/{self.repo}/pull/"

    def canonical(self, number: int) -> str:
        return f"{self.base}{number}"

    @property
    def placeholders(self) -> tuple[str, str]:
        return (PLACEHOLDER, f"{self.base}{PLACEHOLDER}")

    def is_placeholder(self, value: object) -> bool:
        return isinstance(value, str) and value in self.placeholders

    def is_canonical(self, value: object) -> bool:
        return (
            isinstance(value, str)
            and re.fullmatch(re.escape(self.base) + r"[1-9][0-9]*", value) is not None
        )

    def accepted_forms(self) -> list[str]:
        if self.pr is not None:
            return [*self.placeholders, self.canonical(self.pr)]
        if self.branch:
            return [*self.placeholders, f"{self.base}<number>"]
        return [f"{self.base}<number>"]

    def accepts(self, value: object) -> bool:
        """Whether an appended entry may carry this link."""
        if self.pr is not None:
            return self.is_placeholder(value) or value == self.canonical(self.pr)
        if self.branch:
            return self.is_placeholder(value) or self.is_canonical(value)
        return self.is_canonical(value)

    def situation(self) -> str:
        """Why these forms, in the words of a message."""
        if self.pr is not None:
            return f"this is PR #{self.pr}"
        if self.branch:
            return "a branch keeps the XXX placeholder until its PR merges"
        return "on main every pr-link must be the canonical link of a pull request"


@dataclass(frozen=True)
class Links:
    """Where pr-links point, and the note to print when that was guessed."""

    policy: LinkPolicy
    note: str | None = None
