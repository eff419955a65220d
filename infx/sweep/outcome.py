"""What a command does once it has decided, as a value: the files it writes, its step
outputs and step summary, its lines on stdout and stderr, and the error it ends with.

Use cases return one; the command line writes it (`infx.cli.options.emit`), so every
decision can be tested without a terminal, a runner or a file system.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from infx.errors import InfxError


@dataclass
class Outcome:
    files: dict[Path, bytes] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""  # Markdown for the step summary, written with infx.markdown
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    error: InfxError | None = None  # raised once everything else is written
    make_folders: bool = False  # create the folders the files go to


def json_bytes(value: object) -> bytes:
    """A JSON file as infx writes them: indented, ending in a newline."""
    return (json.dumps(value, indent=2) + "\n").encode("utf-8")
