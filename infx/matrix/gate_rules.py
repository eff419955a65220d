"""What the master configs tell the changelog gate: the keys they define, and the planner's
own verdict on whether an entry selects a job. The gate (`infx.changelog`) sits below the
planner and never imports it; the commands hand it these rules as a value."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from infx.changelog import facts
from infx.changelog.gate import ConfigRules, GateFacts
from infx.changelog.links import LinkPolicy, Links
from infx.changelog.model import Entry, Violation
from infx.changelog.rules import Rule
from infx.context import branch_base
from infx.formats import FORMATS, Format, by_name
from infx.matrix.era import choose
from infx.matrix.load import MasterConfigs, check_syntax
from infx.matrix.selection import nothing_selected
from infx.matrix.sources import masters_from, read_change, read_inside, read_masters
from infx.settings import load as load_settings


def format_violations(entry: Entry, fmt: Format) -> list[Violation]:
    """The keys of an entry that another format knows and the repository's does not, each at
    its line (a key no format knows is the schema's to name)."""
    found = []
    for key in entry.data:
        knowing = [f.name for f in FORMATS if key in f.entry_keys]
        if key in fmt.entry_keys or not knowing:
            continue
        newer = [name for name in knowing if FORMATS.index(by_name(name)) > FORMATS.index(fmt)]
        suggested = (newer or knowing)[0]
        found.append(
            Violation(
                entry.line_of(str(key)),
                Rule.FORMAT,
                f"{key}: not a key of InferenceX format {fmt}",
                f"remove it, or set format = {suggested!r} in infx.toml if the repository "
                "is on that format",
            )
        )
    return found


def of_masters(
    masters: MasterConfigs, globs: Sequence[str], fmt: Format | None = None
) -> ConfigRules:
    """The rules of indexed master configs read through `globs` (named in messages), in
    format `fmt` (None: chosen from the configs alone)."""
    fmt = fmt or choose(masters).format
    return ConfigRules(
        masters.keys(),
        ", ".join(globs),
        lambda entry: nothing_selected(entry.data, masters, fmt=fmt),
        lambda entry: format_violations(entry, fmt),
    )


def at_tree(
    files: Mapping[str, bytes],
    globs: Sequence[str],
    tree: str | None,
    changelog: bytes | None = None,
    pinned: str | None = None,
    runners: tuple[bytes | None, str] = (None, "configs/runners.yaml"),
) -> ConfigRules:
    """The rules of master files already read at `tree` (None: the working tree), in the
    format the configs, the `changelog`, the `runners` file (bytes, path) and the `pinned`
    setting say; none at all is a usage error naming the globs."""
    masters = masters_from(dict(files), globs, tree)
    choice = choose(masters, changelog, pinned, runners=runners[0], runners_path=runners[1])
    return of_masters(masters, globs, choice.format)


def in_work_tree(
    root: Path, globs: Sequence[str], optional: bool = False, changelog: bytes | None = None
) -> ConfigRules | None:
    """The rules of the working tree's master configs; when there are none, None if they are
    `optional` (`fix` then checks no keys), else the usage error."""
    files = read_masters(root, None, globs)
    if optional and not files:
        return None
    settings = load_settings(root)
    runners = (read_inside(root, None, settings.runners), settings.runners)
    return at_tree(files, globs, None, changelog, settings.format, runners)


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
    settings = load_settings(root)
    change = read_change(root, base_ref, head, target, globs, settings.runners)
    files = (change.changelog_base, change.changelog_head)
    policy = said(facts.links(*link_to, root, base is None, files[0]))
    inputs = facts.gate_facts(root, (target, path), (base_ref, head), files, policy, merging)
    if not inputs.changed:
        # Nothing appended needs the configs, but a config file that is not YAML breaks
        # every plan: the gate (and the hook, which runs it when a config changes) says so.
        for name, data in change.masters.items():
            check_syntax(name, data)
        return inputs, None
    runners = (change.runners, settings.runners)
    # The format is the repository's before this change (the configs at head, the changelog
    # at base): a key an appended entry takes from another era fails the rule `format` at
    # its line, rather than leaving no format that accepts the repository.
    return inputs, at_tree(
        change.masters, globs, change.head_tree, files[0], settings.format, runners
    )
