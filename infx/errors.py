"""Domain exceptions. The CLI turns each into a one-line message and an exit code."""

from __future__ import annotations

EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
# Every command's help ends with this sentence (infx/cli adds it); the README says the same.
EXIT_CODES = (
    "Exit codes: 0 ok, 1 a rule is broken, 2 usage or environment error, 3 internal error "
    "(a bug in infx; the traceback goes to ~/.cache/infx/infx.log)."
)


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


class InternalError(InfxError):
    """infx contradicted itself (e.g. a plan that fails its own schema): a bug to report."""

    exit_code = EXIT_INTERNAL


class ResultsError(InfxError):
    """Benchmark client output or a results file is missing what a result needs."""

    exit_code = EXIT_VIOLATION

    def __init__(self, message: str, *, internal: bool = False) -> None:
        super().__init__(f"internal error: {message}" if internal else message)
        if internal:
            self.exit_code = EXIT_INTERNAL


class HistoryError(InfxError):
    """The results history database cannot be opened, migrated or written (environment)."""


class ReuseError(InfxError):
    """A reuse request that cannot be decided safely (e.g. several PRs claim one commit)."""

    exit_code = EXIT_VIOLATION


class MergeError(InfxError):
    """The merge helper stops: the PR, its checks or its branch break a rule."""

    exit_code = EXIT_VIOLATION


class LabelError(InfxError):
    """Labels that contradict each other; the PR author must fix them."""

    exit_code = EXIT_VIOLATION


class ReviewError(InfxError):
    """A maintainer check cannot decide on what it was given (an unreadable CODEOWNERS, a
    run that is not main's, a table its receipt does not seal): fails closed."""

    exit_code = EXIT_VIOLATION


def printable(text: str) -> str:
    """`text` safe to print on a terminal: control characters other than newline and tab
    (ESC, CR, backspace, DEL, the C1 set) as `\\x1b` and the like. A file name, config key or
    field value in a message is the input's, and raw it could rewrite the terminal."""
    return "".join(
        f"\\x{ord(ch):02x}"
        if ch not in "\n\t" and (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F)
        else ch
        for ch in text
    )
