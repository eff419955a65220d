"""Master configs and their expansion into a GitHub Actions benchmark matrix."""

from infx.settings import MASTER_GLOB, RUNNERS_FILE

__all__ = ["MASTER_GLOB", "RUNNERS_FILE"]
