"""Domain exceptions. The CLI turns each into a one-line message and an exit code."""

from __future__ import annotations

import unicodedata

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
    """`text` safe to print on a terminal or in a job log: control characters other than
    newline and tab (ESC, CR, backspace, DEL, the C1 set) as `\\x1b` and the like, and the
    invisible format characters (Unicode's Cf: the bidirectional overrides and isolates
    U+202A-U+202E and U+2066-U+2069, the marks U+200E/U+200F, zero-width ones) and the line
    and paragraph separators U+2028/U+2029 as `\\u202e`. A file name, config key or field
    value in a message is the input's: raw, a control could rewrite the terminal, and a
    bidirectional one make the line read otherwise than what it names ("Trojan Source").
    Letters of any script (é, 中) stay as they are."""
    if text.isprintable():  # the common case, and what Markdown cells ask for by the thousand
        return text  # (no Cc, Cf, Zl or Zp character: none that _shown changes)
    return "".join(_shown(ch) for ch in text)


def escape_message(exc: BaseException) -> None:
    """Show `exc`'s `message` (click's errors keep theirs there) as `printable` shows text:
    click quotes some arguments raw ("Got unexpected extra argument (...)")."""
    message = getattr(exc, "message", None)
    if isinstance(message, str):
        exc.message = printable(message)  # type: ignore[attr-defined]


def os_error_line(exc: OSError) -> str:
    """The system's error as one printable line: its reason, then the file it names."""
    return printable(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))


def _shown(ch: str) -> str:
    code = ord(ch)
    if ch in "\n\t" or 0x20 <= code < 0x7F:
        return ch
    if code <= 0x9F:  # C0 (but newline and tab), DEL, C1
        return f"\\x{code:02x}"
    if unicodedata.category(ch) in _INVISIBLE:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return ch


# Format characters, and the line and paragraph separators (a line break to some readers).
_INVISIBLE = frozenset({"Cf", "Zl", "Zp"})
