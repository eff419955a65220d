"""The I/O edge of a sweep's manifest: every input its jobs read at a tree, as digests.

A job reads more than its recipe: the workflow that ran it (and every template and local
action that workflow calls), infx itself where infx lives in the repository, the
`job-files` of the settings, the settings and their accuracy floors, `.gitattributes`
(which decides the bytes a checkout writes), and the commits of submodules. `Snapshot`
reads a tree (or the working tree) once; paths resolve the way a checkout resolves them:
a symbolic link, to a file or to a folder, anywhere along a path, is followed inside the
repository, and one that leaves it is refused in one line, since no record of the
repository can vouch for bytes outside it.

Digests are `sha256:<hex>` of a file's bytes (a link counts by its own text under its own
path, and by the bytes it reaches under the path the job uses), `commit:<id>` for a
submodule, and None for a path that does not exist. `manifest_of` builds a plan's manifest
from them (it reads the plan through `infx.matrix.sources`, which imports nothing here).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infx import git
from infx.errors import ConfigError
from infx.matrix.manifest import SweepOptions, build, file_digest, recipe_files
from infx.matrix.sources import Planned, matches
from infx.paths import outside_repository
from infx.settings import SETTINGS_FILE, SWEEP_WORKFLOW_PATH, table_of

# Symbolic links followed along one path before it counts as a loop.
LINK_HOPS = 8
# Folders a listing descends through links before it stops (a link to an ancestor loops).
MAX_DEPTH = 32
# What makes infx itself, where it lives in the repository (infx/ beside pyproject.toml):
# a job installs it from the checkout (`uses: ./`) and processes its results with it. The
# `infx` command is infx_launcher.py (pyproject's [project.scripts], built into the wheel
# beside infx/): it runs before any infx module does.
INFX_CODE = (
    "infx/**",
    "infx_launcher.py",
    "schemas/**",
    "requirements/**",
    "pyproject.toml",
    "action.yml",
)
# Always an input, recorded even when absent: adding one changes what a checkout writes.
ALWAYS = (".gitattributes", ".gitmodules")
_WILD = frozenset("*?[")


@dataclass(frozen=True)
class Entry:
    """What a path is in a snapshot: a file, a link (with its text), a submodule (with its
    commit)."""

    kind: str  # file | link | commit
    oid: str = ""  # git: the blob or the submodule's commit
    text: str = ""  # a link's target


@dataclass
class Snapshot:
    """Every file, link and submodule of a git tree, or of the working tree (`tree` None)."""

    root: Path
    tree: str | None
    entries: dict[str, Entry] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)
    _index: dict[str, set[str]] | None = None

    @classmethod
    def at(cls, root: Path, tree: str | None) -> Snapshot:
        found = cls(root, tree)
        if tree is None:
            found._read_work_tree()
        else:
            links: dict[str, str] = {}
            for item in git.tree_entries(tree, root):
                if item.mode == git.GITLINK_MODE:
                    found.entries[item.path] = Entry("commit", item.oid)
                elif item.mode == git.LINK_MODE:
                    links[item.path] = item.oid
                    found.entries[item.path] = Entry("link", item.oid)
                else:
                    found.entries[item.path] = Entry("file", item.oid)
            texts = git.read_objects(list(links.values()), root)
            for path, oid in links.items():
                text = (texts.get(oid) or b"").decode("utf-8", "surrogateescape")
                found.entries[path] = Entry("link", oid, text)
        for path in found.entries:
            parts = path.split("/")[:-1]
            found.folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return found

    def _read_work_tree(self) -> None:
        """The files git knows or would add (ignored files left out), as they are on disk."""
        gitlinks = git.index_gitlinks(self.root)
        listed = git.git(
            ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], self.root
        )
        for path in filter(None, listed.split("\0")):
            where = self.root / path
            if where.is_symlink():
                self.entries[path] = Entry("link", text=os.readlink(where))
            elif path in gitlinks:
                commit = git.checked_out_commit(where) if where.is_dir() else None
                self.entries[path] = Entry("commit", commit or gitlinks[path])
            elif where.is_file():
                self.entries[path] = Entry("file")

    # --- resolving paths as a checkout does ---------------------------------------------

    def resolve(self, path: str) -> tuple[str, list[str]]:
        """The real path `path` reaches through every link along it (the last component's
        too) and the links it crossed; a link leaving the repository, or a loop, is a
        ConfigError naming the path and the link."""
        parts = [p for p in path.split("/") if p not in ("", ".")]
        done: list[str] = []
        crossed: list[str] = []
        hops = 0
        while parts:
            here = "/".join([*done, parts[0]])
            entry = self.entries.get(here)
            if entry is None or entry.kind != "link":
                done.append(parts.pop(0))
                continue
            hops += 1
            if hops > LINK_HOPS:
                raise ConfigError(
                    f"{path}: more than {LINK_HOPS} symbolic links along it (a loop?)"
                )
            crossed.append(here)
            target = posixpath.normpath(posixpath.join(posixpath.dirname(here), entry.text))
            if outside_repository(target):
                raise ConfigError(
                    f"{path}: the symbolic link {here} points outside the repository "
                    f"({entry.text}); a job's inputs must be in the repository"
                )
            parts = [p for p in target.split("/") if p not in ("", ".")] + parts[1:]
            done = []
        return "/".join(done), crossed

    def kind(self, real: str) -> str | None:
        """file, link (dangling or not followed), commit, folder, or None (nothing there)."""
        entry = self.entries.get(real)
        if entry is not None:
            return entry.kind
        return "folder" if real in self.folders or real == "" else None

    def listing(self, folder: str) -> list[str]:
        """Every path below `folder` as a job sees it: links to folders inside the
        repository are descended under their own names, submodules are one path each."""
        found: list[str] = []
        self._list(folder.strip("/"), 0, found, frozenset())
        return sorted(set(found))

    def _list(self, logical: str, depth: int, found: list[str], chain: frozenset[str]) -> None:
        real, _ = self.resolve(logical)
        if depth > MAX_DEPTH or real in chain:
            return
        for child in sorted(self._children().get(real, ())):
            name = f"{logical}/{child}" if logical else child
            target, _ = self.resolve(name)
            if self.kind(target) == "folder":
                self._list(name, depth + 1, found, chain | {real})
            else:
                found.append(name)  # a file, a submodule, or a link reaching no file

    def _children(self) -> dict[str, set[str]]:
        if self._index is None:
            self._index = {}
            for path in [*self.entries, *self.folders]:
                parent, _, name = path.rpartition("/")
                self._index.setdefault(parent, set()).add(name)
        return self._index

    # --- bytes ------------------------------------------------------------------------

    def digests(self, names: Iterable[str]) -> dict[str, str | None]:
        """The digest of each path as a job reads it, of the real file it reaches, and of
        each link crossed on the way (by its own text): `sha256:...`, `commit:...` for a
        submodule, None when no file is there."""
        resolved = {name: self.resolve(name) for name in names}
        data = self.read({real for real, _ in resolved.values() if self.kind(real) == "file"})
        links: dict[str, str | None] = {}
        named: dict[str, str | None] = {}
        for name, (real, crossed) in resolved.items():
            for link in crossed:
                links[link] = file_digest(
                    self.entries[link].text.encode("utf-8", "surrogateescape")
                )
            kind = self.kind(real)
            if kind == "file":
                named[name] = named[real] = file_digest(data[real])
            elif kind == "commit":
                named[name] = f"commit:{self.entries[real].oid}"
            else:
                named.setdefault(name, None)
        # A path that reaches no file but is itself a link counts by the link's text.
        return {**links, **{k: v for k, v in named.items() if v is not None or k not in links}}

    def read(self, paths: set[str]) -> dict[str, bytes | None]:
        """The bytes of real file paths (as `resolve` gives them)."""
        if self.tree is None:
            return {p: (self.root / p).read_bytes() for p in paths}
        blobs = git.read_objects([self.entries[p].oid for p in paths], self.root)
        return {p: blobs.get(self.entries[p].oid) for p in paths}


# --- which paths ----------------------------------------------------------------------


def normalize(pattern: str, snapshot: Snapshot | None = None) -> str:
    """A job-files pattern as the matcher reads it: `./` and doubled slashes dropped, and a
    folder (written `benchmarks/`, or `benchmarks` naming a folder) meaning every file
    below it (`benchmarks/**`)."""
    folder = pattern.endswith("/")
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    text = "/".join(parts)
    if folder and parts and parts[-1] != "**":
        return f"{text}/**"
    if snapshot is not None and text and not _WILD & set(text):
        real, _ = snapshot.resolve(text)
        if snapshot.kind(real) == "folder":
            return f"{text}/**"
    return text


def _fixed(pattern: str) -> str:
    fixed = []
    for segment in pattern.split("/")[:-1]:
        if _WILD & set(segment) or segment == "**":
            break
        fixed.append(segment)
    return "/".join(fixed)


def matching(snapshot: Snapshot, patterns: Sequence[str]) -> tuple[list[str], list[str]]:
    """The paths matching the patterns (links to folders followed) and the patterns, as
    written, that match nothing."""
    found: set[str] = set()
    unmatched = []
    for written in patterns:
        pattern = normalize(written, snapshot)
        folder = _fixed(pattern)
        real, _ = snapshot.resolve(folder)
        candidates = snapshot.listing(folder) if snapshot.kind(real) == "folder" else []
        hits = {path for path in candidates if matches(path, pattern)}
        if not _WILD & set(pattern) and snapshot.kind(snapshot.resolve(pattern)[0]) is not None:
            hits.add(pattern)
        if not hits:
            unmatched.append(written)
        found |= hits
    return sorted(found), unmatched


@dataclass(frozen=True)
class Calls:
    """What a workflow runs from the repository and beyond: its files (the workflow, the
    reusable workflows and local actions it calls, followed through those, every file of a
    local action's folder), the remote refs and images it uses (each pinned), and what it
    runs that no record can hold (one line each)."""

    files: tuple[str, ...]
    remote: tuple[str, ...] = ()
    unrecorded: tuple[str, ...] = ()


def workflow_calls(snapshot: Snapshot, workflow: str) -> Calls:
    """Every file the workflow runs, read as YAML (`infx.matrix.workflow_uses`): a call
    written as a flow mapping or through an anchor counts as one written out. A local action
    in a folder counts by every file below it (its scripts, its Dockerfile); the action in
    the repository's root by its metadata file (what it runs from the root is job-files',
    and infx's code where infx lives here)."""
    from infx.matrix.workflow_uses import uses_of

    files: dict[str, None] = {}
    remote: list[str] = []
    unrecorded: list[str] = []
    parsed: set[str] = set()
    todo: list[tuple[str, bool]] = [(workflow, False)]
    while todo:
        name, action = todo.pop(0)
        files.setdefault(name)
        if name in parsed:
            continue
        parsed.add(name)
        real, _ = snapshot.resolve(name)
        if snapshot.kind(real) != "file":
            continue
        uses = uses_of(name, snapshot.read({real})[real] or b"", action=action)
        remote += [*uses.remote, *uses.images]
        unrecorded += uses.unrecorded
        todo += [(used, False) for used in uses.workflows]
        for folder in uses.actions:
            base = f"{folder}/" if folder else ""
            meta = [f"{base}action.yml", f"{base}action.yaml"]
            todo += [(m, True) for m in meta]
            if folder:
                for path in snapshot.listing(folder):
                    files.setdefault(path)
    return Calls(tuple(files), tuple(dict.fromkeys(remote)), tuple(dict.fromkeys(unrecorded)))


def unrecorded_error(calls: Calls) -> ConfigError | None:
    """The one-line error for what a workflow runs that no record holds (None: nothing)."""
    if not calls.unrecorded:
        return None
    more = len(calls.unrecorded) - 1
    return ConfigError(calls.unrecorded[0] + (f" (and {more} more)" if more else ""))


def infx_here(snapshot: Snapshot) -> bool:
    """Whether infx itself lives in this repository (infx/ beside pyproject.toml)."""
    return snapshot.kind("infx") == "folder" and snapshot.kind("pyproject.toml") == "file"


def provenance_files(snapshot: Snapshot, workflow: str = SWEEP_WORKFLOW_PATH) -> list[str]:
    """What ran besides the recipes, whatever `job-files` says: the workflow and what it
    calls, `.gitattributes` and `.gitmodules` (every submodule too), and infx's own code
    where it lives in the repository."""
    names = {*code_files(snapshot, workflow, strict=False), *ALWAYS}
    names.update(path for path, entry in snapshot.entries.items() if entry.kind == "commit")
    names.update(path for path in snapshot.entries if path.endswith("/.gitattributes"))
    return sorted(names)


def digests_at(root: Path, ref: str, names: Iterable[str]) -> dict[str, str | None]:
    """The digests of `names` as a job reads them at a commit (`ref`)."""
    return Snapshot.at(root, git.resolve(ref, root)).digests(sorted(set(names)))


def code_files(
    snapshot: Snapshot, workflow: str = SWEEP_WORKFLOW_PATH, *, strict: bool = True
) -> list[str]:
    """The code that runs a sweep and writes its results: the workflow and what it calls,
    and infx's own code where it lives in the repository. With `strict`, a workflow that
    runs anything no record can hold (`workflow_calls`) is a ConfigError in one line."""
    calls = workflow_calls(snapshot, workflow)
    error = unrecorded_error(calls) if strict else None
    if error is not None:
        raise error
    names = set(calls.files)
    if infx_here(snapshot):
        names.update(matching(snapshot, INFX_CODE)[0])
    return sorted(names)


def unrecorded_inputs(snapshot: Snapshot, workflow: str = SWEEP_WORKFLOW_PATH) -> list[str]:
    """What the workflow runs that no record can hold, one line each."""
    return list(workflow_calls(snapshot, workflow).unrecorded)


def code_of(
    root: Path, tree: str, workflow: str = SWEEP_WORKFLOW_PATH, *, strict: bool = True
) -> dict[str, str | None]:
    """The digests of the code that runs a sweep at a tree (`code_files`); with `strict`, a
    workflow that runs anything unrecorded is a ConfigError naming it."""
    snapshot = Snapshot.at(root, tree)
    return snapshot.digests(code_files(snapshot, workflow, strict=strict))


# --- a plan's manifest ------------------------------------------------------------------


def settings_files(root: Path, tree: str | None) -> list[str]:
    """The settings the jobs read at a tree, whatever `job-files` says: the eval jobs pass
    or fail against its accuracy floors. infx.toml (recorded even when absent, so adding
    one counts), else the pyproject.toml holding [tool.infx], and the floors file the
    settings name."""
    data = git.read_at(tree, SETTINGS_FILE, root)
    names = [SETTINGS_FILE]
    if data is None:
        data = git.read_at(tree, "pyproject.toml", root)
        if data is None:
            return names
        tool = table_of(data, "pyproject.toml").get("tool")
        table = tool.get("infx") if isinstance(tool, dict) else None
        if table is None:
            return names
        names.append("pyproject.toml")
    else:
        table = table_of(data, SETTINGS_FILE)
    floors = table.get("accuracy-floors") if isinstance(table, dict) else None
    if isinstance(floors, str):
        names.append(posixpath.normpath(floors))
    return names


def changed_job_inputs(planned: Planned, job_files: Sequence[str]) -> list[str]:
    """What the plan's jobs read that differs between the diff's base and head: each row's
    recipe script (on every node of its label) and the files `job_files` matches at either
    tree. An append-only sweep must find none (`plan.check_append_only_inputs`)."""
    runners = planned.runner_info.runners
    nodes = runners.labels if runners is not None else {}
    base = Snapshot.at(planned.root, planned.change.base_tree)
    head = Snapshot.at(planned.root, planned.change.head_tree)
    names = sorted(
        {
            *recipe_files(planned.result.plan.as_json(), nodes),
            *matching(base, job_files)[0],
            *matching(head, job_files)[0],
        }
    )
    before, after = base.digests(names), head.digests(names)
    return [name for name in names if before[name] != after[name]]


def manifest_of(
    planned: Planned,
    options: SweepOptions,
    job_files: Sequence[str],
    workflow: str | None = None,
) -> dict[str, Any]:
    """The manifest of a plan: its rows, the selected configs as parsed, the runner labels
    it uses, and the digest of every input its jobs read (recipes, `job_files` globs, the
    settings, the workflow that runs them and what it calls, `.gitattributes`, submodules,
    infx's own code where it lives here), all read at the plan's head."""
    plan = planned.result.plan
    tree = planned.change.head_tree
    runners = planned.runner_info.runners
    nodes = runners.labels if runners is not None else {}
    snapshot = Snapshot.at(planned.root, tree)
    if workflow is None:
        # In the sweep workflow's own run (the planning job), the workflow that runs it.
        ref = os.environ.get("GITHUB_WORKFLOW_REF", "").split("@", 1)[0]
        path = ref.split("/", 2)[2] if ref.count("/") >= 2 else ""
        workflow = path if path.startswith(".github/workflows/") else SWEEP_WORKFLOW_PATH
    jobs, unmatched = matching(snapshot, job_files)
    names = {
        *recipe_files(plan.as_json(), nodes),
        *jobs,
        *settings_files(planned.root, tree),
        *provenance_files(snapshot, workflow),
    }
    files = snapshot.digests(sorted(names))
    masters = planned.inputs.head.masters
    configs = {key: masters.config(key) for key in plan.selected}
    unrecorded = unrecorded_inputs(snapshot, workflow)
    return build(plan, configs, nodes, files, options, planned.inputs.refs, unmatched, unrecorded)
