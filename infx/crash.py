"""What an exception infx did not expect turns into: exit 3, one line, a log to report.

A traceback on the terminal reads like the user's fault and buries the one line that
matters; the details go to a log file instead (the newest crash, written whole), and
INFX_DEBUG=1 prints them too. Inside GitHub Actions the runner's home is gone when the job
ends, so the traceback goes into the job's log as a folded group.
"""

from __future__ import annotations

import os
import platform
import sys
import traceback
from pathlib import Path

from infx import __version__
from infx.errors import EXIT_INTERNAL, printable


def log_path() -> Path:
    """$XDG_CACHE_HOME/infx/infx.log, else ~/.cache/infx/infx.log."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "infx" / "infx.log"


def _details(exc: BaseException) -> str:
    command = " ".join(["infx", *sys.argv[1:]])
    trace = "".join(traceback.format_exception(exc))
    return (
        f"infx {__version__}, Python {platform.python_version()} on {platform.platform()}\n"
        f"command: {command}\ndirectory: {os.getcwd()}\n\n{trace}"
    )


def report(exc: BaseException) -> int:
    """Say what happened in one line on stderr, keep the details, return the exit code."""
    from infx.yamlio import atomic_write

    details = _details(exc)
    summary = printable("".join(traceback.format_exception_only(exc)).strip().splitlines()[0])
    target = log_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, details.encode("utf-8", "replace"))
        where = f"the traceback is in {target}"
    except OSError as err:
        where = f"could not write {target} ({err.strerror or err})"
    debug = os.environ.get("INFX_DEBUG", "") not in ("", "0")
    actions = os.environ.get("GITHUB_ACTIONS") == "true"
    if debug and not actions:
        sys.stderr.write(printable(details))  # the log file keeps it as it was
    sys.stderr.write(
        f"infx: internal error: {summary} ({where}; INFX_DEBUG=1 prints it): "
        "a bug in infx, please report it\n"
    )
    if actions:
        # Text from the exception may hold workflow commands; stop-commands keeps them text.
        token = os.urandom(16).hex()
        sys.stderr.write(
            f"::group::infx traceback\n::stop-commands::{token}\n{printable(details.rstrip())}\n"
            f"::{token}::\n::endgroup::\n"
        )
    return EXIT_INTERNAL
