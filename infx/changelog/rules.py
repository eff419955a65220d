"""The gate's rules, by the id each problem is reported under (`file:line: RULE: message`).

One registry: every `Violation` names a member of `Rule`, and docs/gate.md explains each
under the heading "Rule `<id>`" (its anchor `#rule-<id>`); tests/test_house_rules.py holds
code, registry and page in step.
"""

from __future__ import annotations

from enum import StrEnum

DOCS = "docs/gate.md"


class Rule(StrEnum):
    """A rule of the gate; its value is the id the output prints."""

    # bytes
    ENCODING = "encoding"
    CHARACTERS = "characters"
    CONFLICT_MARKER = "conflict-marker"
    FILE_ENDING = "file-ending"
    SIZE = "size"
    # layout
    ROOT = "root"
    ENTRY_START = "entry-start"
    ENTRY_SHAPE = "entry-shape"
    YAML = "yaml"
    NUMBER = "number"
    SCHEMA = "schema"
    # history
    MISSING = "missing"
    HISTORY = "history"
    SEPARATOR = "separator"
    INSERTED = "inserted"
    ENTRIES = "entries"
    MERGE = "merge"
    # the appended entries' values
    PR_LINK = "pr-link"
    PR_LINK_CORRECTION = "pr-link-correction"
    CONFIG_KEYS = "config-keys"
    SELECTION = "selection"
    FORMAT = "format"

    @property
    def anchor(self) -> str:
        """Where docs/gate.md explains the rule."""
        return f"{DOCS}#rule-{self.value}"
