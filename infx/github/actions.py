"""Read what GitHub Actions hands a step (event payload) and write what it takes back (outputs)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from infx.errors import UsageError


def event() -> tuple[str, dict[str, Any]]:
    """GITHUB_EVENT_NAME and the parsed GITHUB_EVENT_PATH payload."""
    name = os.environ.get("GITHUB_EVENT_NAME")
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not name or not path:
        raise UsageError(
            "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set (run inside GitHub Actions)"
        )
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    return name, payload


def set_outputs(values: dict[str, str]) -> None:
    """Append step outputs to GITHUB_OUTPUT, using a heredoc delimiter so values may span lines."""
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            delimiter = f"infx_{uuid.uuid4().hex}"
            fh.write(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")


def append_summary(markdown: str) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(markdown)
