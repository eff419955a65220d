from __future__ import annotations

from tests.github.conftest import api

__all__ = ["api"]
