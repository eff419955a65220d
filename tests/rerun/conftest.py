"""The rerun replays share the workflow tests' session API server (tests/actions)."""

from tests.actions.conftest import api, api_server

__all__ = ["api", "api_server"]
