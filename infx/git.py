"""The git edge: every subprocess call infx makes to git lives here."""

from __future__ import annotations

import subprocess
from pathlib import Path

from infx.errors import GitError


def _run(
    args: list[str], cwd: Path | None = None, *, check: bool = True, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True)
    except FileNotFoundError as exc:
        raise GitError("git is not installed") from exc
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else proc.returncode}")
    return proc


def root(cwd: Path | None = None) -> Path:
    proc = _run(["rev-parse", "--show-toplevel"], cwd, check=False)
    if proc.returncode != 0:
        raise GitError("not inside a git repository")
    return Path(proc.stdout.decode().strip())


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def resolve(ref: str, cwd: Path | None = None) -> str:
    """The tree id a ref names (a commit, a tag, or the empty tree); a clear error otherwise."""
    proc = _run(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{tree}}"],
        cwd,
        check=False,
    )
    if proc.returncode != 0:
        raise GitError(f"unknown git ref {ref!r}")
    return proc.stdout.decode().strip()


def read_file(commit: str, path: str, cwd: Path | None = None) -> bytes | None:
    """A file's bytes at a commit, or None when the file does not exist there."""
    proc = _run(["cat-file", "blob", f"{commit}:{path}"], cwd, check=False)
    return proc.stdout if proc.returncode == 0 else None


def read_blobs(tree: str, paths: list[str], cwd: Path | None = None) -> dict[str, bytes | None]:
    """Several files at one tree through one `git cat-file --batch` (None: no such file)."""
    if not paths:
        return {}
    request = "".join(f"{tree}:{path}\n" for path in paths).encode()
    out = _run(["cat-file", "--batch"], cwd, stdin=request).stdout
    found: dict[str, bytes | None] = {}
    offset = 0
    for path in paths:
        end = out.index(b"\n", offset)
        header = out[offset:end].split(b" ")
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found[path] = out[end + 1 : end + 1 + size]
            offset = end + 1 + size + 1
        else:
            found[path] = None
            offset = end + 1
    return found


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


def remote_url(name: str = "origin", cwd: Path | None = None) -> str | None:
    proc = _run(["remote", "get-url", name], cwd, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def stage(path: str, number: int, cwd: Path | None = None) -> bytes | None:
    """The bytes at index stage 1 (ancestor), 2 (ours) or 3 (theirs) of a conflicted path."""
    proc = _run(["cat-file", "blob", f":{number}:{path}"], cwd, check=False)
    return proc.stdout if proc.returncode == 0 else None


def unmerged(path: str, cwd: Path | None = None) -> bool:
    return bool(_run(["ls-files", "--unmerged", "--", path], cwd).stdout.strip())


def add(path: str, cwd: Path | None = None) -> None:
    _run(["add", "--", path], cwd)


def run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git without raising; the caller reads the return code."""
    return _run(args, cwd, check=False)


def git(args: list[str], cwd: Path | None = None) -> str:
    """Run any git command and return its stdout as text (for the merge helper)."""
    return _run(args, cwd).stdout.decode("utf-8", "replace")
