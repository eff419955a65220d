"""The I/O edge of sweep planning: which files are master configs, and their bytes at a
git tree or in the working tree.

A pattern matches path segment by segment (`*` never crosses `/`; a `**` segment spans
any number of folders), and the same matcher decides at a commit and in the working
tree, so `configs/*-master.yaml` means the same files in both and never reaches into
`configs/deprecated/`.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from infx import git
from infx.errors import ConfigError, InfxError, UsageError
from infx.formats import layout_twin
from infx.matrix.load import MasterConfigs, parse_masters, read_plain, yaml_error, yaml_problem
from infx.paths import outside_repository

if TYPE_CHECKING:
    from infx.formats import Format
    from infx.matrix.era import Choice
    from infx.matrix.expand import Hardware
    from infx.matrix.options import PlanOptions
    from infx.matrix.pipeline import SweepInputs, SweepPlan
    from infx.matrix.recipes import RecipeReader
    from infx.matrix.validate import ConfigProblem, Runners

_WILD = frozenset("*?[")


def matches(path: str, pattern: str) -> bool:
    """Segment-wise glob: each path segment matches its pattern segment, and a `**`
    segment matches any number of segments (`benchmarks/**` is every file below it)."""
    return _segments(path.split("/"), pattern.split("/"))


def _segments(parts: list[str], wanted: list[str]) -> bool:
    if not wanted:
        return not parts
    if wanted[0] == "**":
        return any(_segments(parts[i:], wanted[1:]) for i in range(len(parts) + 1))
    return (
        bool(parts)
        and fnmatch.fnmatchcase(parts[0], wanted[0])
        and _segments(parts[1:], wanted[1:])
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
    found: list[str] = []
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
        if outside_repository(pattern) or "\\" in pattern:
            raise UsageError(
                f"master config glob {pattern!r} is not inside the repository: give it relative "
                "to the repository root, neither absolute nor through '..' nor with backslashes"
            )
        folder = _fixed_prefix(pattern)
        depth = pattern.count("/") + 1 - (folder.count("/") + 1 if folder else 0)
        if "**" in pattern.split("/"):
            depth = 1 << 16
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
    return masters_from(read_masters(root, tree, patterns), patterns, tree)


def masters_from(
    files: dict[str, bytes], patterns: Sequence[str], tree: str | None
) -> MasterConfigs:
    """Index master files already read; none at all is a usage error naming the patterns."""
    if not files:
        shown = ", ".join(repr(p) for p in patterns)
        where = "in the working tree" if tree is None else f"at {tree[:12]}"
        raise UsageError(f"no master config files match {shown} {where}")
    return parse_masters(files)


def read_inside(root: Path, tree: str | None, path: str) -> bytes | None:
    """A file of the repository at a tree (None: the working tree), never one outside it: a
    path through a symbolic link out of the working tree reads as absent."""
    if tree is not None:
        return git.read_at(tree, path, root)
    target = (root / path).resolve()
    if not target.is_relative_to(root.resolve()) or not target.is_file():
        return None
    return target.read_bytes()


@dataclass
class RunnerInfo:
    runners: Runners | None
    problems: list[ConfigProblem] = field(default_factory=list)
    # The file's bytes (None: missing), which tell the format (`infx.matrix.era`).
    data: bytes | None = None

    def in_format(self, fmt: Format, path: str) -> RunnerInfo:
        """This file with what `fmt` refuses in it (a section it does not read) as problems."""
        from infx.matrix.validate import runners_section_problems

        found = runners_section_problems(self.runners, fmt, path, self.data)
        return RunnerInfo(self.runners, [*self.problems, *found], self.data)

    @property
    def hardware(self) -> dict[str, Hardware]:
        from infx.matrix.expand import hardware_table

        if self.runners is None:
            return {}
        return hardware_table(self.runners.hardware)


def load_runners(root: Path, tree: str | None, path: str) -> RunnerInfo:
    """runners.yaml at a tree."""
    return runners_from(git.read_at(tree, path, root), path)


def node_gpus_at(
    root: Path, tree: str | None, path: str, read: Mapping[str, bytes | None] | None = None
) -> dict[str, int]:
    """GPUs per node of each runner label by runners.yaml at a tree: the base's prices a
    pull request's jobs beside the head's (the larger wins, `cost.priced_sizes`); none when
    the tree has no valid file or cannot be read. `read`: files already read at that tree
    (a Change's `base_files`), used when they hold `path`, else git is asked."""
    from infx.matrix.cost import node_gpus

    try:
        data = read[path] if read is not None and path in read else git.read_at(tree, path, root)
        runners = runners_from(data, path).runners
    except InfxError:
        return {}
    return node_gpus(runners.labels, runners.hardware) if runners is not None else {}


def working_tree(
    root: Path, config_globs: Sequence[str], runners_path: str
) -> tuple[MasterConfigs, RunnerInfo, Choice]:
    """The working tree's master configs and runners.yaml, read in the format in force
    (`infx sweep validate`)."""
    from infx.matrix.era import choose
    from infx.settings import load as load_settings

    masters = load_masters(root, None, config_globs)
    runners = load_runners(root, None, runners_path)
    pinned = load_settings(root).format
    choice = choose(masters, None, pinned, runners=runners.data, runners_path=runners_path)
    return masters, runners.in_format(choice.format, runners_path), choice


def runners_from(data: bytes | None, path: str) -> RunnerInfo:
    """Parse and validate runners.yaml's bytes (None: the file is missing, a warning). The
    planner's edge: the gate never imports what this needs."""
    from infx.matrix.validate import ConfigProblem, validate_runners

    if data is None:
        return RunnerInfo(
            None, [ConfigProblem(path, None, "runners", "runners file not found", "warning")]
        )
    try:
        doc = read_plain(data)
    except yaml_error() as exc:
        raise yaml_problem(path, exc) from None
    runners, problems = validate_runners(doc, path, data)
    if problems:
        raise ConfigError("; ".join(p.text() for p in problems))
    return RunnerInfo(runners, data=data)


@dataclass
class Change:
    """What the gate and the planner read for one diff: the changelog on both sides, and
    the master configs (and runners file) on the head side. `moved` is the changelog's path
    at base and at head when the diff moved it (`layout_twin`)."""

    base_tree: str
    head_tree: str | None
    changelog_base: bytes | None
    changelog_head: bytes | None
    masters: dict[str, bytes]
    runners: bytes | None = None
    base_files: dict[str, bytes | None] = field(default_factory=dict)  # `also_at_base`
    moved: tuple[str, str] | None = None

    def at_base(self, path: str) -> str:
        """Where a file of the head's layout was at base: moved with the changelog's folder
        when the diff moved the changelog (`inferencex-e2e/configs/runners.yaml` at base is
        `configs/runners.yaml` when `inferencex-e2e/perf-changelog.yaml` was
        `perf-changelog.yaml`), else where it is."""
        if self.moved is None:
            return path
        old, new = (posixpath.dirname(p) for p in self.moved)
        if old == new:
            return path
        inside = path if not new else path.removeprefix(f"{new}/")
        if new and inside == path:
            return path
        return posixpath.join(old, inside) if old else inside


def read_change(
    root: Path,
    base: str,
    head: str | None,
    changelog: str,
    patterns: Sequence[str],
    runners: str | None = None,
    also_at_base: Sequence[str] = (),
) -> Change:
    """Everything at once: one `git rev-parse` for both refs and one `git cat-file` for every
    file at a tree (the working tree is read from disk when `head` is None), `also_at_base`
    among them. A changelog found on one side only is looked for on the other in
    InferenceX's other layout (`layout_twin`): the diff moved it."""
    trees = git.resolve_all([base, head] if head else [base], root)
    base_tree, head_tree = trees[0], (trees[1] if head else None)
    names = find_files(root, head_tree, patterns)
    at_head = [changelog, *names, *([runners] if runners else [])]
    wanted = [(base_tree, changelog), *((base_tree, name) for name in also_at_base)]
    if head_tree is not None:
        wanted += [(head_tree, name) for name in at_head]
    blobs = git.read_many(wanted, root)
    if head_tree is None:
        files = {name: git.read_at(None, name, root) for name in at_head}
    else:
        files = {name: blobs[(head_tree, name)] for name in at_head}
    masters = {name: data for name in names if (data := files[name]) is not None}
    before, after = blobs[(base_tree, changelog)], files[changelog]
    moved = None
    if (before is None) != (after is None):
        twin = layout_twin(changelog)
        if before is None and (before := read_inside(root, base_tree, twin)) is not None:
            moved = (twin, changelog)
        elif after is None and (after := read_inside(root, head_tree, twin)) is not None:
            moved = (changelog, twin)
    return Change(
        base_tree,
        head_tree,
        before,
        after,
        masters,
        files[runners] if runners else None,
        {name: blobs[(base_tree, name)] for name in also_at_base},
        moved,
    )


@dataclass
class Planned:
    """A plan with everything it was made from, for the summary and the manifest."""

    root: Path
    change: Change
    runner_info: RunnerInfo
    inputs: SweepInputs
    result: SweepPlan


def plan_change(
    root: Path,
    base: str,
    head: str | None,
    changelog: str,
    patterns: Sequence[str],
    runners: str,
    options: PlanOptions,
    strict: bool = False,
    also_at_base: Sequence[str] = (),
) -> Planned:
    """Read a diff's inputs and plan it: the one way `sweep plan` and a reuse decision plan."""
    from infx.matrix.pipeline import SweepInputs, plan_sweep
    from infx.matrix.plan import Revision
    from infx.settings import load as load_settings

    def revision(tree: str | None) -> Revision:
        """The base revision, in the head's layout moved back when the diff moved it."""
        globs = [change.at_base(pattern) for pattern in patterns]
        info = load_runners(root, tree, change.at_base(runners))
        found = load_masters(root, tree, globs)
        return Revision(found, info.hardware, recipes=reader(tree, change.at_base(project)))

    def reader(tree: str | None, folder: str) -> RecipeReader:
        return lambda path: read_inside(root, tree, posixpath.join(folder, path))

    project = project_root(runners)
    change = read_change(root, base, head, changelog, patterns, runners, also_at_base)
    info = runners_from(change.runners, runners)
    head_masters = masters_from(change.masters, patterns, change.head_tree)
    inputs = SweepInputs(
        changelog_base=change.changelog_base,
        changelog_head=change.changelog_head,
        head=Revision(head_masters, info.hardware, recipes=reader(change.head_tree, project)),
        runners=info.runners,
        base=lambda: revision(change.base_tree),
        refs=(base, head or "WORKTREE"),
        notes=info.problems,
        format_setting=load_settings(root).format,
        changelog_path=changelog,
        runners_data=change.runners,
        runners_path=runners,
    )
    return Planned(root, change, info, inputs, plan_sweep(inputs, options, strict))


def project_root(runners: str) -> str:
    """The folder InferenceX's files hang from, which recipe paths are relative to: the one
    holding the runners file's `configs/` folder (`inferencex-e2e` for
    `inferencex-e2e/configs/runners.yaml`), else the repository's root."""
    folder = posixpath.dirname(posixpath.normpath(runners))
    if posixpath.basename(folder) != "configs":
        return ""
    return posixpath.dirname(folder)
