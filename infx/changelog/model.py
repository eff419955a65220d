"""Values passed between the changelog's parse, diff, check and rewrite steps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from infx.changelog.rules import Rule

# Enough to show the pattern of a repeated mistake; the rest are counted, not listed, so
# output stays readable (and small) when one rule fails thousands of times.
MAX_PER_RULE = 20


def clip(line: bytes, width: int = 60) -> str:
    """A line of the file, decoded and shortened for a one-line message."""
    text = line.decode("utf-8", "replace")
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True, order=True)
class Violation:
    """One broken rule, located at a 1-based line (and character column) of the head file.

    `line=None` means the whole file.
    """

    line: int | None
    rule: Rule
    message: str
    fix: str = ""
    column: int | None = None

    def text(self) -> str:
        return f"{self.message} (fix: {self.fix})" if self.fix else self.message

    def located(self) -> str:
        """`line N: ` and the text; the text alone for a problem of the whole file."""
        return self.text() if self.line is None else f"line {self.line or 1}: {self.text()}"

    def shifted(self, offset: int) -> Violation:
        if self.line is None or offset == 0:
            return self
        return replace(self, line=self.line + offset)


def more(rule: Rule, count: int, what: str, line: int | None = None) -> Violation:
    """The line that stands for `count` further violations nobody needs to read one by one."""
    return Violation(line, rule, f"and {count:,} more {what}")


def summarized(violations: Iterable[Violation], limit: int = MAX_PER_RULE) -> list[Violation]:
    """The first `limit` violations of each rule, then one line with the count of the rest."""
    kept: list[Violation] = []
    shown: Counter[Rule] = Counter()
    hidden: Counter[Rule] = Counter()
    first_hidden: dict[Rule, int | None] = {}
    for v in violations:
        if shown[v.rule] < limit:
            shown[v.rule] += 1
            kept.append(v)
        else:
            hidden[v.rule] += 1
            first_hidden.setdefault(v.rule, v.line)
    for rule, count in hidden.items():
        kept.append(more(rule, count, f"{rule} problem(s) like the ones above", first_hidden[rule]))
    return kept


@dataclass
class Entry:
    """One top-level changelog entry with the positions needed to report on it and rewrite it.

    `value_pos` maps a key to the line of its value and the value's byte offset in that line;
    `inline` holds the keys whose value is a plain or quoted scalar written whole on its key's
    line, the only values a rewrite may splice.
    """

    data: dict[str, Any]
    line: int
    key_lines: dict[str, int] = field(default_factory=dict)
    value_pos: dict[str, tuple[int, int]] = field(default_factory=dict)
    item_lines: dict[str, list[int]] = field(default_factory=dict)
    text: bytes = b""
    inline: frozenset[str] = frozenset()

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)

    def item_line(self, key: str, index: int) -> int:
        lines = self.item_lines.get(key, [])
        return lines[index] if index < len(lines) else self.line_of(key)

    def shifted(self, offset: int) -> Entry:
        """The same entry with every line moved by `offset` (region-relative to file lines)."""
        return Entry(
            data=self.data,
            line=self.line + offset,
            key_lines={k: v + offset for k, v in self.key_lines.items()},
            value_pos={k: (ln + offset, col) for k, (ln, col) in self.value_pos.items()},
            item_lines={k: [ln + offset for ln in v] for k, v in self.item_lines.items()},
            text=self.text,
            inline=self.inline,
        )

    @property
    def pr_link(self) -> Any:
        return self.data.get("pr-link")

    @property
    def config_keys(self) -> list[str]:
        keys = self.data.get("config-keys")
        return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []

    def content(self) -> dict[str, Any]:
        """What the entry says apart from its link: two entries with equal content are copies."""
        return {k: v for k, v in self.data.items() if k != "pr-link"}


@dataclass
class Outcome:
    """What a changelog command does once it has decided: `notes` on stderr, `lines` on
    stdout, the file to `write`, `warnings` on stderr, a step-summary section, the exit code."""

    lines: list[str] = field(default_factory=list)
    write: bytes | None = None
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summary: str | None = None
