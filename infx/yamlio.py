"""YAML loading shared by every reader, and atomic file writes.

InferenceX files are read with YAML 1.1 semantics (its tooling relies on
`2_063_837` being an int). The fast path uses ruamel's C parser; the
round-trip loader is used only where line numbers are needed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.resolver import VersionedResolver

YAML_VERSION = (1, 1)


class _Yaml11Resolver(VersionedResolver):
    """Pins YAML 1.1 and caches the resolver table.

    The stock resolver asks the scanner for the document version on every
    scalar, which costs an exception per scalar under the C parser.
    """

    @property
    def processing_version(self) -> Any:
        return YAML_VERSION

    @property
    def versioned_resolver(self) -> Any:
        cached = self.__dict__.get("_infx_table")
        if cached is None:
            cached = VersionedResolver.versioned_resolver.fget(self)  # type: ignore[attr-defined]
            self.__dict__["_infx_table"] = cached
        return cached


def fast_loader() -> YAML:
    """Plain-data loader on the C parser; duplicate keys are errors."""
    yaml = YAML(typ="safe", pure=False)
    yaml.Resolver = _Yaml11Resolver
    yaml.allow_duplicate_keys = False
    return yaml


def line_loader(*, yaml11: bool = True) -> YAML:
    """Round-trip loader whose maps and lists carry `.lc` line/column data.

    `yaml11=False` reads strict YAML 1.2, where only true/false are booleans.
    """
    yaml = YAML(typ="rt")
    if yaml11:
        yaml.version = YAML_VERSION
    yaml.allow_duplicate_keys = False
    return yaml


def strict_loader() -> YAML:
    """Plain-data loader on the C parser with YAML 1.2 semantics (changelog entries)."""
    yaml = YAML(typ="safe", pure=False)
    yaml.allow_duplicate_keys = False
    return yaml


def load_fast(data: bytes | str) -> Any:
    return fast_loader().load(data)


def load_with_lines(data: bytes | str, *, yaml11: bool = True) -> Any:
    return line_loader(yaml11=yaml11).load(data)


def yaml_error_line(exc: YAMLError) -> int | None:
    """1-based line of a ruamel error, when it has one."""
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        if mark is not None:
            return mark.line + 1
    return None


def yaml_error_text(exc: YAMLError) -> str:
    """The error's own words on one line, without ruamel's source excerpt."""
    if isinstance(exc, MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        if parts:
            return "; ".join(" ".join(str(p).split()) for p in parts)
    first = str(exc).strip().splitlines()
    return first[0] if first else type(exc).__name__


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory, then rename, so readers never see half a file."""
    path = Path(path)
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
