"""The git edge: every subprocess call infx makes to git lives here.

Each call runs git without the variables that point git at another repository or
index (GIT_DIR, GIT_INDEX_FILE, ...): infx is often started by git itself (hooks,
merge drivers) with those set, and must act on the repository its cwd names.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from infx.errors import GitError

# The repository-local variables git itself drops before it runs git in another repository
# (`git rev-parse --local-env-vars`), plus GIT_NAMESPACE and GIT_QUARANTINE_PATH.
REDIRECTING_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_CONFIG",
    "GIT_DIR",
    "GIT_GRAFT_FILE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_NAMESPACE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_OBJECT_DIRECTORY",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_WORK_TREE",
)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in REDIRECTING_ENV}


def _run(
    args: list[str],
    cwd: Path | None = None,
    *,
    check: bool = True,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, input=stdin, capture_output=True, env={**_env(), **(env or {})}
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    if check and proc.returncode != 0:
        raise GitError(f"git {args[0]} failed: {_last_line(proc)}")
    return proc


def _last_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return message[-1] if message else str(proc.returncode)


def root(cwd: Path | None = None) -> Path:
    return _root(str(Path(cwd or Path.cwd()).resolve()))


@functools.lru_cache(maxsize=16)
def _root(where: str) -> Path:
    """Cached per folder: a command asks more than once (settings, then the command itself)."""
    proc = _run(["rev-parse", "--show-toplevel"], Path(where), check=False)
    if proc.returncode != 0:
        raise GitError("not inside a git repository")
    return Path(proc.stdout.decode().strip())


def _peel(ref: str, kind: str, cwd: Path | None) -> str | None:
    """The id of the `kind` (tree, commit) a ref names, or None when it names none."""
    proc = _run(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{{kind}}}"],
        cwd,
        check=False,
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def resolve(ref: str, cwd: Path | None = None) -> str:
    """The TREE id a ref names (a commit, a tag, or a tree such as the empty tree); a clear
    error otherwise. Name what it returns `..._tree`, not `..._commit`."""
    found = _peel(ref, "tree", cwd)
    if found is None:
        raise GitError(f"unknown git ref {ref!r}")
    return found


def resolve_all(refs: list[str], cwd: Path | None = None) -> list[str]:
    """The tree ids of several refs in one `git rev-parse`; the first unknown one is named."""
    if any(ref.startswith("-") for ref in refs):
        return [resolve(ref, cwd) for ref in refs]
    proc = _run(["rev-parse", *(f"{ref}^{{tree}}" for ref in refs)], cwd, check=False)
    # On failure git echoes the unknown ref, in whatever bytes it was given (not UTF-8 maybe).
    ids = proc.stdout.decode("utf-8", "replace").split()
    if proc.returncode != 0 or len(ids) != len(refs):
        return [resolve(ref, cwd) for ref in refs]
    return ids


def rev_parse(ref: str, cwd: Path | None = None) -> str:
    """The commit id a ref names."""
    found = _peel(ref, "commit", cwd)
    if found is None:
        raise GitError(f"unknown git commit {ref!r}")
    return found


def merge_base(first: str, second: str, cwd: Path | None = None) -> str | None:
    """The best common ancestor of two commits, or None when they share no history."""
    proc = _run(["merge-base", first, second], cwd, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def has_ref(ref: str, cwd: Path | None = None) -> bool:
    proc = _run(["rev-parse", "--verify", "--quiet", "--end-of-options", ref], cwd, check=False)
    return proc.returncode == 0


def current_branch(cwd: Path | None = None) -> str | None:
    """The branch HEAD is on (`refs/heads/...`), None when HEAD is detached."""
    proc = _run(["symbolic-ref", "--quiet", "HEAD"], cwd, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def commits(refs: list[str], cwd: Path | None = None) -> dict[str, str]:
    """The commit id of each ref that names one (refs naming nothing are left out)."""
    found = {}
    for ref in refs:
        commit = _peel(ref, "commit", cwd)
        if commit is not None:
            found[ref] = commit
    return found


def in_progress(state: str, cwd: Path | None = None) -> bool:
    """Whether git's state file or folder `state` (MERGE_HEAD, rebase-merge, ...) exists."""
    proc = _run(["rev-parse", "--git-path", state], cwd, check=False)
    path = Path(proc.stdout.decode().strip())
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return proc.returncode == 0 and path.exists()


def read_file(commit: str, path: str, cwd: Path | None = None) -> bytes | None:
    """A file's bytes at a commit, or None when the file does not exist there."""
    proc = _run(["cat-file", "blob", f"{commit}:{path}"], cwd, check=False)
    return proc.stdout if proc.returncode == 0 else None


def read_many(
    wanted: list[tuple[str, str]], cwd: Path | None = None
) -> dict[tuple[str, str], bytes | None]:
    """Files at trees, (tree, path) -> bytes, through one `git cat-file --batch` (None: no
    such file): one process however many files a command needs."""
    found = _cat_batch([f"{tree}:{path}" for tree, path in wanted], cwd)
    return dict(zip(wanted, found, strict=True))


def _cat_batch(specs: list[str], cwd: Path | None) -> list[bytes | None]:
    """Each object `git cat-file --batch` names by `specs`, in order: a blob's bytes, None
    for anything else or nothing."""
    if not specs:
        return []
    out = _run(["cat-file", "--batch"], cwd, stdin="".join(f"{s}\n" for s in specs).encode())
    found: list[bytes | None] = []
    offset, data = 0, out.stdout
    for _ in specs:
        end = data.index(b"\n", offset)
        header = data[offset:end].split(b" ")
        if len(header) == 3:
            # Any object found is followed by its content (a folder's listing too).
            size = int(header[2])
            found.append(data[end + 1 : end + 1 + size] if header[1] == b"blob" else None)
            offset = end + 1 + size + 1
        else:
            found.append(None)
            offset = end + 1
    return found


def read_blobs(tree: str, paths: list[str], cwd: Path | None = None) -> dict[str, bytes | None]:
    """Several files at one tree (None: no such file)."""
    found = read_many([(tree, path) for path in paths], cwd)
    return {path: found[(tree, path)] for path in paths}


def read_at(tree: str | None, path: str, root: Path) -> bytes | None:
    """A file's bytes at a tree, or in the working tree under `root` when tree is None."""
    if tree is None:
        target = root / path
        return target.read_bytes() if target.is_file() else None
    return read_file(tree, path, root)


def list_files(tree: str, folder: str, cwd: Path | None = None) -> list[str]:
    """Every file path under `folder` at a tree, recursively, relative to the root."""
    proc = _run(["ls-tree", "-r", "--name-only", "--full-tree", tree, "--", folder], cwd)
    return proc.stdout.decode("utf-8", "replace").splitlines()


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree listing: a file (mode 100644 or 100755), a symbolic link
    (120000, its blob is the link's text) or a submodule (160000, a gitlink: `oid` is the
    submodule's commit)."""

    mode: str
    oid: str
    path: str


LINK_MODE = "120000"
GITLINK_MODE = "160000"


def tree_entries(tree: str, cwd: Path | None = None) -> list[TreeEntry]:
    """Every file, link and submodule of a tree, recursively, in one `git ls-tree`."""
    listing = _run(["ls-tree", "-r", "-z", "--full-tree", tree], cwd).stdout
    found = []
    for item in listing.split(b"\0"):
        if item:
            meta, path = item.split(b"\t", 1)
            mode, _, oid = meta.decode().split(" ")
            found.append(TreeEntry(mode, oid, path.decode("utf-8", "surrogateescape")))
    return found


def index_gitlinks(cwd: Path | None = None) -> dict[str, str]:
    """The submodules of the index (path -> the commit it records)."""
    listing = _run(["ls-files", "--stage", "-z"], cwd).stdout
    found = {}
    for item in listing.split(b"\0"):
        if item.startswith(GITLINK_MODE.encode()):
            meta, path = item.split(b"\t", 1)
            found[path.decode("utf-8", "surrogateescape")] = meta.decode().split(" ")[1]
    return found


def checked_out_commit(path: Path) -> str | None:
    """The commit a submodule's checkout is at, or None when it is not checked out."""
    proc = _run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], path, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def read_objects(oids: list[str], cwd: Path | None = None) -> dict[str, bytes | None]:
    """Blobs by object id through one `git cat-file --batch` (None: no such blob)."""
    wanted = sorted(set(oids))
    return dict(zip(wanted, _cat_batch(wanted, cwd), strict=True))


def fetch_quietly(remote: str, refs: list[str], cwd: Path | None = None) -> bool:
    """Fetch `refs` (commit ids too, where the server allows it) without failing: True
    when git fetched them."""
    proc = _run(["fetch", "--quiet", "--no-tags", remote, *refs], cwd, check=False)
    return proc.returncode == 0


def remote_url(name: str = "origin", cwd: Path | None = None) -> str | None:
    proc = _run(["remote", "get-url", name], cwd, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


@dataclass(frozen=True)
class IndexStages:
    """The sides of a conflicted path in the index; None where a side has no file."""

    ancestor: bytes | None
    ours: bytes | None
    theirs: bytes | None


def index_stages(path: str, cwd: Path | None = None) -> IndexStages | None:
    """Stages 1 (ancestor), 2 (ours) and 3 (theirs) of `path`, read by stage number;
    None when the path is not conflicted."""
    listing = _run(["ls-files", "--unmerged", "-z", "--", path], cwd).stdout
    blobs: dict[int, str] = {}
    for record in listing.split(b"\0"):
        if record:
            meta, _ = record.split(b"\t", 1)
            _, object_id, stage = meta.decode().split()
            blobs[int(stage)] = object_id
    if not blobs:
        return None

    def blob(stage: int) -> bytes | None:
        return _run(["cat-file", "blob", blobs[stage]], cwd).stdout if stage in blobs else None

    return IndexStages(blob(1), blob(2), blob(3))


def add(path: str, cwd: Path | None = None) -> None:
    _run(["add", "--", path], cwd)


def fetch(remote: str, refs: list[str], cwd: Path | None = None) -> None:
    _run(["fetch", "--quiet", remote, *refs], cwd)


def merge(ref: str, cwd: Path | None = None) -> bool:
    """Merge `ref` into HEAD: True when clean, False when it stopped on conflicts."""
    proc = _run(["merge", "--no-edit", "--quiet", ref], cwd, check=False)
    if proc.returncode == 0:
        return True
    if conflicted_paths(cwd):
        return False
    raise GitError(f"git merge failed: {_last_line(proc)}")


def conflicted_paths(cwd: Path | None = None) -> list[str]:
    listing = _run(["diff", "--name-only", "--diff-filter=U", "-z"], cwd).stdout
    return [name.decode("utf-8", "replace") for name in listing.split(b"\0") if name]


def commit(
    cwd: Path | None = None,
    message: str | None = None,
    *,
    all_tracked: bool = False,
    allow_empty: bool = False,
) -> str:
    """Commit and return the new commit id; without a message, git's prepared one (a merge)."""
    args = ["commit", "--quiet"]
    args += ["-m", message] if message is not None else ["--no-edit"]
    if all_tracked:
        args.append("--all")
    if allow_empty:
        args.append("--allow-empty")
    _run(args, cwd)
    return rev_parse("HEAD", cwd)


def push(remote: str, refspec: str, cwd: Path | None = None) -> None:
    """Push without force: a branch that moved on refuses the push."""
    _run(["push", "--quiet", remote, refspec], cwd)


@contextlib.contextmanager
def worktree(root: Path, commit: str) -> Iterator[Path]:
    """A throw-away detached worktree of `root` at `commit`, removed on exit."""
    import tempfile  # only the merge helper needs it; a gate run does not pay for it

    with tempfile.TemporaryDirectory(prefix="infx-worktree-") as tmp:
        path = Path(tmp) / "work"
        _run(["worktree", "add", "--quiet", "--detach", str(path), commit], root)
        try:
            yield path
        finally:
            _run(["worktree", "remove", "--force", str(path)], root, check=False)


def merge_file(
    current: Path,
    ancestor: Path,
    other: Path,
    labels: tuple[str, str, str],
    marker_size: int = 7,
) -> tuple[bytes, int]:
    """git's line merge of three files (diff3 style): the text and its count of conflicts."""
    args = ["merge-file", "--stdout", "--diff3", f"--marker-size={marker_size}"]
    for label in labels:
        args += ["-L", label]
    proc = _run([*args, str(current), str(ancestor), str(other)], check=False)
    if proc.returncode > 127:
        raise GitError(f"git merge-file failed: {_last_line(proc)}")
    return proc.stdout, proc.returncode


def merge_tree(ours: str, theirs: str, cwd: Path | None = None) -> tuple[str, list[str]]:
    """The tree merging two commits gives, without touching a worktree or the index, and
    the paths it left conflicted (their conflict markers are in that tree)."""
    proc = _run(["merge-tree", "--write-tree", "--name-only", "-z", ours, theirs], cwd, check=False)
    if proc.returncode not in (0, 1):
        raise GitError(f"git merge-tree failed: {_last_line(proc)}")
    head, _, rest = proc.stdout.partition(b"\0")
    names = rest.split(b"\0\0", 1)[0] if proc.returncode == 1 else b""
    conflicted = sorted({n.decode("utf-8", "replace") for n in names.split(b"\0") if n})
    return head.decode().strip(), conflicted


def tree_with(tree: str, path: str, data: bytes, cwd: Path | None = None) -> str:
    """`tree` with the file at `path` replaced by `data` (a new tree; nothing checked out)."""
    import tempfile  # only previews of a merge need it

    blob = _run(["hash-object", "-w", "--stdin"], cwd, stdin=data).stdout.decode().strip()
    with tempfile.TemporaryDirectory(prefix="infx-index-") as tmp:
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _run(["read-tree", tree], cwd, env=index)
        _run(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], cwd, env=index)
        return _run(["write-tree"], cwd, env=index).stdout.decode().strip()


def git(args: list[str], cwd: Path | None = None) -> str:
    """Run any git command and return its stdout as text."""
    return _run(args, cwd).stdout.decode("utf-8", "replace")
