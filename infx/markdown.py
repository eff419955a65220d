"""The one Markdown writer: every value infx puts into a comment, a step summary or a table
goes through here, escaped, unless the caller says it is Markdown infx wrote itself.

Data in these texts comes from places an outsider can write (config names, image tags,
exp-names, log lines, branch names), and GitHub renders comments and step summaries as
HTML. Escaping at each call site missed some; escaping here, once, by default, does not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from infx.errors import printable

# Punctuation that starts emphasis, code, links, tables, strike-through or headings.
_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#])")
Align = Literal["left", "right"]


class Md(str):
    """Markdown infx wrote itself (links, emphasis around escaped data): passed through as is."""

    __slots__ = ()


EMPTY = Md("")


def text(value: object) -> Md:
    """A data string as inert Markdown on one line: control and invisible format characters
    shown escaped as the error printer shows them (`\\u202e`: a bidirectional override
    made the text read otherwise than what it names), HTML special characters as entities
    (no tag, no `<!--`), Markdown punctuation and table pipes backslash-escaped, and a
    zero-width space after each `@` so no one is mentioned."""
    if isinstance(value, Md):
        return value
    out = _visible(value)
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _PUNCTUATION.sub(r"\\\1", out)
    return Md(out.replace("@", "@&#8203;"))


def code(value: object) -> Md:
    """A data string as an inline code span: fenced with one backtick more than its longest
    run of them, pipes escaped for tables, on one line. Mentions and tags are inert inside
    a code span already; control and invisible format characters shown escaped, as in text."""
    out = _visible(value).replace("|", "\\|")
    if not out:
        return Md("")
    longest = max((len(run) for run in re.findall(r"`+", out)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if out.startswith("`") or out.endswith("`") else ""
    return Md(f"{fence}{pad}{out}{pad}{fence}")


def _visible(value: object) -> str:
    """`value` on one line (every run of whitespace one space), its control and invisible
    format characters (bidi overrides and isolates, zero-width ones) as `\\x1b` or `\\u202e`
    (infx.errors.printable, one rule for the terminal and for Markdown)."""
    return printable(" ".join(str(value).split()))


def bold(value: object) -> Md:
    return Md(f"**{text(value)}**")


def link(label: object, url: str) -> Md:
    """A link whose label is escaped data; the URL must be one infx built (http or https)."""
    if not re.fullmatch(r"https?://[^\s()<>]+", url):
        return text(label)
    return Md(f"[{text(label)}]({url})")


def cell(value: object) -> Md:
    """A table cell: Markdown infx wrote passes on one line (its data parts are escaped
    already), anything else is data and is escaped."""
    if isinstance(value, Md):
        return Md(" ".join(value.split()))
    if value is None:
        return Md("")
    return text(value)


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    align: Sequence[Align] | None = None,
) -> str:
    """A GitHub-flavoured Markdown table, every cell through `cell`; ends with a newline."""
    marks = ["---:" if a == "right" else "---" for a in (align or ["left"] * len(headers))]
    lines = [_row([cell(h) for h in headers]), _row(marks)]
    for row in rows:
        cells = [cell(v) for v in row]
        cells += [Md("")] * (len(headers) - len(cells))
        lines.append(_row(cells))
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[str]) -> str:
    """One table line; an empty cell is `| |`, as GitHub writes it."""
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"
