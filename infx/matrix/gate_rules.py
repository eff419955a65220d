"""What the master configs tell the changelog gate: the keys they define, and the planner's
own verdict on whether an entry selects a job. The gate (`infx.changelog`) sits below the
planner and never imports it; the commands hand it these rules as a value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from infx.changelog.gate import ConfigRules
from infx.matrix.load import MasterConfigs
from infx.matrix.selection import nothing_selected
from infx.matrix.sources import masters_from, read_masters


def of_masters(masters: MasterConfigs, globs: Sequence[str]) -> ConfigRules:
    """The rules of indexed master configs read through `globs` (named in messages)."""
    return ConfigRules(
        masters.keys(), ", ".join(globs), lambda entry: nothing_selected(entry.data, masters)
    )


def at_tree(files: Mapping[str, bytes], globs: Sequence[str], tree: str | None) -> ConfigRules:
    """The rules of master files already read at `tree` (None: the working tree); none at all
    is a usage error naming the globs."""
    return of_masters(masters_from(dict(files), globs, tree), globs)


def in_work_tree(root: Path, globs: Sequence[str], optional: bool = False) -> ConfigRules | None:
    """The rules of the working tree's master configs; when there are none, None if they are
    `optional` (`fix` then checks no keys), else the usage error."""
    files = read_masters(root, None, globs)
    if optional and not files:
        return None
    return at_tree(files, globs, None)
