"""Reading master config files: a mapping config-key -> recipe, spread over several files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from infx import git
from infx.errors import ConfigError
from infx.yamlio import fast_loader, yaml_error_line, yaml_error_text


@dataclass
class MasterConfigs:
    """Every config key with its recipe and the file that defines it."""

    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    texts: dict[str, bytes] = field(default_factory=dict)

    def keys(self) -> list[str]:
        return list(self.configs)


def parse_masters(files: Mapping[str, bytes]) -> MasterConfigs:
    """Parse master files (name -> bytes); a key defined twice, or holding `*`, is an error."""
    result = MasterConfigs()
    loader = fast_loader()
    for name in sorted(files):
        data = files[name]
        result.texts[name] = data
        try:
            doc = loader.load(data)
        except YAMLError as exc:
            line = yaml_error_line(exc)
            where = f"{name}:{line}" if line else name
            raise ConfigError(f"{where}: invalid YAML: {yaml_error_text(exc)}") from None
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ConfigError(f"{name}: a master config file must be a mapping of config keys")
        for key, value in doc.items():
            key = str(key)
            if "*" in key:
                raise ConfigError(f"{name}: config key {key!r} may not contain '*'")
            if key in result.sources:
                raise ConfigError(
                    f"{name}: config key {key!r} is already defined in {result.sources[key]}"
                )
            result.configs[key] = value
            result.sources[key] = name
    return result


def read_masters_at(commit: str | None, pattern: str, root: Path) -> dict[str, bytes]:
    """Master file bytes at a commit, or in the working tree when commit is None."""
    if commit is None:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob(pattern))}
    files = {}
    for name in git.list_files(commit, pattern, root):
        data = git.read_at(commit, name, root)
        if data is not None:
            files[name] = data
    return files
