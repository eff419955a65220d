"""Reading, checking and rewriting perf-changelog.yaml."""

from infx.settings import CHANGELOG_FILE

__all__ = ["CHANGELOG_FILE", "ENTRY_START"]

ENTRY_START = b"- config-keys:"
