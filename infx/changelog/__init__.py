"""Reading, checking and rewriting perf-changelog.yaml."""

CHANGELOG_FILE = "perf-changelog.yaml"
ENTRY_START = b"- config-keys:"
