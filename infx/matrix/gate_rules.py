"""What the master configs tell the changelog gate: the keys they define, and the planner's
own verdict on whether an entry selects a job. The gate (`infx.changelog`) sits below the
planner and never imports it; the commands hand it these rules as a value."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from infx.changelog import facts
from infx.changelog.gate import ConfigRules, GateFacts
from infx.changelog.links import LinkPolicy, Links
from infx.context import branch_base
from infx.matrix.load import MasterConfigs
from infx.matrix.selection import nothing_selected
from infx.matrix.sources import masters_from, read_change, read_masters


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


def gate_inputs(
    root: Path,
    refs: tuple[str | None, str | None],
    path: str,
    globs: Sequence[str],
    link_to: tuple[str | None, int | None],
    said: Callable[[Links], LinkPolicy],
) -> tuple[GateFacts, ConfigRules | None]:
    """What `changelog check` judges: the changelog at BASE and HEAD (None: where this
    branch left main, and the working tree; during a merge, main's side against the working
    tree), its link rules for `link_to` (--repo, --pr; `said` notes a guessed repository),
    and the master configs' rules when entries were appended."""
    base, head = refs
    target = facts.target(root, path, in_work_tree=head is None)
    merging = facts.merge_in_progress(root, target) if base is None and head is None else None
    base_ref = merging.main if merging else branch_base(root) if base is None else base
    change = read_change(root, base_ref, head, target, globs)
    files = (change.changelog_base, change.changelog_head)
    policy = said(facts.links(*link_to, root, base is None, files[0]))
    inputs = facts.gate_facts(root, (target, path), (base_ref, head), files, policy, merging)
    masters = (change.masters, globs, change.head_tree)
    return inputs, at_tree(*masters) if inputs.changed else None
