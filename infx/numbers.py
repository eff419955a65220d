"""Whole numbers given as text (run ids, attempts, PR numbers) and the bound a stored one
keeps under.

Python's own parsing is too kind for numbers a user or a workflow hands infx: `isdigit()`
takes `²`, which `int()` then refuses; `int()` takes `+1`, ` 1`, `1_0` and other scripts'
digits (`١`); and `int()` of a few thousand digits raises. Each command that reads such
a number builds on `decimal` and keeps its own wording and extra rules.
"""

from __future__ import annotations

# One past the largest INTEGER SQLite stores (a signed 64-bit value; PostgreSQL's BIGINT
# is the same): a run id, attempt or concurrency the history keeps must be below it.
SQLITE_INTEGER_END = 1 << 63
# The pull request numbers infx takes (a command's PR option, a verdict the site links):
# positive (the pages' router takes digits only), and exact in JavaScript (a number past
# 2**53 arrived rounded: its link opened nothing). A run id stands in for a number no table
# names, so not GitHub's 2**31.
PR_NUMBERS = range(1, 1 << 53)
# A run id a comment command names, as a regular expression group: ASCII digits (`\d` and
# `int()` take any script's, so Bengali or full-width digits would name a run the comment
# does not show), and no more than a 64-bit id holds (`int()` refuses past 4,300 digits:
# one comment would stop every decision on the PR).
RUN_ID = r"([0-9]{1,20})"


def decimal(text: str, *, below: int) -> int | None:
    """`text` as a whole number when it is ASCII decimal digits only (leading zeros
    allowed) and its value is below `below`; None otherwise, for the caller to word."""
    if not (text.isascii() and text.isdigit()):
        return None
    significant = text.lstrip("0") or "0"
    if len(significant) > len(str(below)):  # far too large: int() of it may raise
        return None
    value = int(significant)
    return value if value < below else None
