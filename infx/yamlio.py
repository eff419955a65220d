"""What every YAML reader shares, and atomic file writes.

The changelog is read with ruamel (YAML 1.2, positions from its parser events), master
configs with PyYAML (YAML 1.1, as InferenceX reads them); both libraries' errors carry
the same marks, so one pair of helpers words them.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any


def yaml_error_line(exc: Exception) -> int | None:
    """1-based line of a ruamel or PyYAML error, when it has one."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else None


def yaml_error_text(exc: Exception) -> str:
    """The error's own words on one line, without the library's source excerpt."""
    parts: list[Any] = [
        p for p in (getattr(exc, "context", None), getattr(exc, "problem", None)) if p
    ]
    if parts:
        return "; ".join(" ".join(str(p).split()) for p in parts)
    first = str(exc).strip().splitlines()
    return first[0] if first else type(exc).__name__


def _umask() -> int:
    """The process's umask; reading it means setting it, so it is set back at once."""
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file in the same directory, then rename, so readers never see half a
    file. The file keeps its mode, or takes `mode` when given; a new file gets what the
    umask leaves of 0666, as `open` would give it (the temp file alone is 0600)."""
    path = Path(path)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    import tempfile  # only commands that write pay for it

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file asked for, not the temp file beside it
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
