"""Domain exceptions. The CLI turns each into a one-line message and an exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2


class InfxError(Exception):
    """Base of every error infx reports to a user; never shown as a traceback."""

    exit_code = EXIT_USAGE


class UsageError(InfxError):
    """Bad arguments or environment: missing repository, unknown ref, unreadable file."""


class GitError(InfxError):
    """A git command failed (not a repository, unknown ref, no merge in progress)."""


class ChangelogError(InfxError):
    """The changelog breaks a rule in a way that stops the command from doing its job."""

    exit_code = EXIT_VIOLATION


class ConfigError(InfxError):
    """A master config or runners file is invalid."""

    exit_code = EXIT_VIOLATION


class GitHubError(InfxError):
    """The GitHub API failed or answered something we cannot trust."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ReuseError(InfxError):
    """A reuse request that cannot be decided safely (e.g. several PRs claim one commit)."""

    exit_code = EXIT_VIOLATION


class MergeError(InfxError):
    """The merge helper stops: the PR, its checks or its branch break a rule."""

    exit_code = EXIT_VIOLATION
