"""The command line as Python hands it over: arguments that are not text.

On Linux, Python passes bytes that are not UTF-8 to a program as lone surrogates
(`surrogateescape`). A command that prints, writes or matches them crashes or misreads
them (a glob matching nothing passed a check), so infx's entry refuses them once, for
every command, before any of them runs.
"""

from __future__ import annotations

from collections.abc import Sequence


def not_utf8(args: Sequence[str]) -> str | None:
    """The first argument that is not UTF-8 text, as the bytes the shell passed with the bad
    ones escaped (`'caf\\xe9'`), for a one-line message; None when every argument is text."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:
                raw = arg.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a surrogate no byte makes (not from a shell)
                raw = arg.encode("utf-8", "backslashreplace")
            return repr(raw)[1:]
    return None
