"""The I/O edge of sweep planning: which files are master configs, and their bytes at a
git tree or in the working tree.

A pattern matches path segment by segment (`*` never crosses `/`), and the same
matcher decides at a commit and in the working tree, so `configs/*-master.yaml`
means the same files in both and never reaches into `configs/deprecated/`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from infx import git
from infx.errors import ConfigError, UsageError
from infx.matrix.expand import Hardware, hardware_table
from infx.matrix.load import MasterConfigs, load_yaml, parse_masters, yaml_error, yaml_problem
from infx.matrix.validate import ConfigProblem, Runners, validate_runners

_WILD = frozenset("*?[")


def matches(path: str, pattern: str) -> bool:
    """Segment-wise glob: same number of segments, each matching its pattern segment."""
    parts, wanted = path.split("/"), pattern.split("/")
    return len(parts) == len(wanted) and all(
        fnmatch.fnmatchcase(part, want) for part, want in zip(parts, wanted, strict=True)
    )


def _fixed_prefix(pattern: str) -> str:
    """The folders before the first segment holding a wildcard ('' for the root)."""
    fixed = []
    for segment in pattern.split("/")[:-1]:
        if _WILD & set(segment):
            break
        fixed.append(segment)
    return "/".join(fixed)


def _work_tree_files(root: Path, folder: str, depth: int) -> list[str]:
    """Files under `folder`, at most `depth` segments deep (1: the folder's own files)."""
    base = root / folder if folder else root
    found = []
    for current, dirs, files in os.walk(base):
        here = Path(current)
        if len(here.relative_to(base).parts) + 1 >= depth:
            dirs.clear()
        else:
            dirs[:] = [d for d in dirs if d != ".git"]
        rel = here.relative_to(root).as_posix()
        prefix = "" if rel == "." else f"{rel}/"
        found.extend(prefix + name for name in files)
    return found


def find_files(root: Path, tree: str | None, patterns: Sequence[str]) -> list[str]:
    """Paths matching any pattern, sorted, at a tree (None: the working tree)."""
    found: set[str] = set()
    for pattern in patterns:
        folder = _fixed_prefix(pattern)
        depth = pattern.count("/") + 1 - (folder.count("/") + 1 if folder else 0)
        if tree is None:
            candidates = _work_tree_files(root, folder, depth)
        else:
            candidates = git.list_files(tree, folder or ".", root)
        found.update(path for path in candidates if matches(path, pattern))
    return sorted(found)


def read_masters(root: Path, tree: str | None, patterns: Sequence[str]) -> dict[str, bytes]:
    names = find_files(root, tree, patterns)
    if tree is None:
        found = {name: git.read_at(None, name, root) for name in names}
    else:
        found = git.read_blobs(tree, names, root)
    return {name: data for name, data in found.items() if data is not None}


def load_masters(root: Path, tree: str | None, patterns: Sequence[str]) -> MasterConfigs:
    files = read_masters(root, tree, patterns)
    if not files:
        shown = ", ".join(repr(p) for p in patterns)
        where = "in the working tree" if tree is None else f"at {tree[:12]}"
        raise UsageError(f"no master config files match {shown} {where}")
    return parse_masters(files)


@dataclass
class RunnerInfo:
    runners: Runners | None
    problems: list[ConfigProblem] = field(default_factory=list)

    @property
    def hardware(self) -> dict[str, Hardware]:
        if self.runners is None:
            return {}
        return hardware_table(self.runners.hardware)


def load_runners(root: Path, tree: str | None, path: str) -> RunnerInfo:
    data = git.read_at(tree, path, root)
    if data is None:
        return RunnerInfo(
            None, [ConfigProblem(path, None, "runners", "runners file not found", "warning")]
        )
    try:
        doc = load_yaml(data)
    except yaml_error() as exc:
        raise yaml_problem(path, exc) from None
    runners, problems = validate_runners(doc, path, data)
    if problems:
        raise ConfigError("; ".join(p.text() for p in problems))
    return RunnerInfo(runners)
