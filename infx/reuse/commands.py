"""The comment commands' syntax: pure functions over comment bodies."""

from __future__ import annotations

import re
from dataclasses import dataclass

from infx.numbers import RUN_ID

# The command alone on a line (surrounding blanks allowed); an inline mention does not count.
_REUSE = re.compile(
    rf"^[ \t]*/(?:reuse-sweep-run(?:[ \t]+{RUN_ID})?|use[ \t]+{RUN_ID})[ \t]*\r?$", re.M
)
_STAGE = re.compile(rf"/stage-results(?:[ \t]+{RUN_ID})?")
STAGE_USAGE = "usage: /stage-results [<run_id>] alone in the comment"


@dataclass(frozen=True)
class ReuseCommand:
    """`/reuse-sweep-run` (run_id None: newest valid run) or a pinned run id."""

    run_id: int | None


def reuse_command(body: str) -> ReuseCommand | None:
    """The last reuse command line of a comment, if any."""
    found = None
    for match in _REUSE.finditer(body or ""):
        number = match.group(1) or match.group(2)
        found = ReuseCommand(int(number) if number else None)
    return found


def mentions_stage(body: str) -> bool:
    return (body or "").strip().startswith("/stage-results")


def stage_command(body: str) -> tuple[bool, int | None]:
    """(valid, run_id) for a /stage-results comment; the whole trimmed body must be the command."""
    match = _STAGE.fullmatch((body or "").strip())
    if not match:
        return False, None
    return True, int(match.group(1)) if match.group(1) else None
