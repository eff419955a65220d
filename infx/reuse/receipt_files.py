"""The I/O edge of receipts: the bytes a collect job seals, the run it belongs to, the
images its jobs recorded, and the members of an artifact downloaded to check a receipt."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from infx import git
from infx.errors import UsageError
from infx.matrix.manifest import sha256
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.reuse.receipt import RunFacts, parse
from infx.settings import SWEEP_WORKFLOW_PATH

# Written by benchmark-tmpl.yml into a job's result folder after its recipe pulled the
# image: the image's repository digest (`docker image inspect`), or nothing.
IMAGE_DIGEST_FILE = "image-digest.txt"
RESULT_FILE = "infx-result.json"


def members(path: Path) -> dict[str, str]:
    """Every file of an artifact as upload-artifact stores it: a folder's files by their path
    below it, a single file by its name; each with the sha256 of its bytes."""
    if path.is_file():
        return {path.name: sha256(path.read_bytes())}
    if not path.is_dir():
        return {}
    return {
        p.relative_to(path).as_posix(): sha256(p.read_bytes())
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def zip_members(data: bytes, where: str) -> dict[str, str]:
    """The members of an artifact archive, each with the sha256 of its bytes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {
                info.filename: sha256(archive.read(info))
                for info in archive.infolist()
                if not info.is_dir()
            }
    except zipfile.BadZipFile:
        raise UsageError(f"{where}: not a zip archive") from None


def job_images(layers: Mapping[str, Path]) -> list[dict[str, Any]]:
    """Each job folder holding results (an `infx-result.json` with rows) below the layers:
    the image its rows name and the digest its job recorded (None when it recorded none)."""
    found: list[dict[str, Any]] = []
    for layer, root in sorted(layers.items()):
        if not root.is_dir():
            continue
        for result in sorted(root.rglob(RESULT_FILE)):
            folder = result.parent
            try:
                rows = json.loads(result.read_bytes()).get("rows") or []
            except (ValueError, AttributeError):
                rows = []
            images = sorted(
                {
                    str(row["recipe"]["image"])
                    for row in rows
                    if isinstance(row, dict)
                    and isinstance(row.get("recipe"), dict)
                    and row["recipe"].get("image")
                }
            )
            recorded = folder / IMAGE_DIGEST_FILE
            text = recorded.read_text("utf-8", "replace").strip() if recorded.is_file() else ""
            job = f"{layer}/{folder.relative_to(root).as_posix()}".rstrip("/.")
            found += [{"job": job, "image": image, "digest": text or None} for image in images]
    return found


def actions_run(environ: Mapping[str, str], payload: Mapping[str, Any]) -> RunFacts:
    """The run a step runs in, from the Actions environment and its event payload."""
    missing = [
        name
        for name in ("GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_SHA")
        if not environ.get(name)
    ]
    if missing:
        raise UsageError(f"not in a GitHub Actions run: {', '.join(missing)} unset")
    sha = environ["GITHUB_SHA"]
    head = ((payload.get("pull_request") or {}).get("head") or {}).get("sha") or sha
    ref = environ.get("GITHUB_WORKFLOW_REF", "").split("@", 1)[0]
    workflow = ref.split("/", 2)[2] if ref.count("/") >= 2 else ""
    return RunFacts(
        repository=environ["GITHUB_REPOSITORY"],
        id=actions_number(environ, "GITHUB_RUN_ID"),
        attempt=actions_number({"GITHUB_RUN_ATTEMPT": "1", **environ}, "GITHUB_RUN_ATTEMPT"),
        event=environ.get("GITHUB_EVENT_NAME", ""),
        workflow=workflow or SWEEP_WORKFLOW_PATH,
        sha=sha,
        head_sha=str(head),
        ref=environ.get("GITHUB_REF", ""),
    )


def actions_number(environ: Mapping[str, str], name: str) -> int:
    """A run id or attempt as Actions sets it: a whole number from 1 (else a usage error, not
    a ValueError, nor a receipt its own check refuses), below the history's INTEGER bound:
    receipts are stored beside its rows."""
    text = environ[name] or "1"
    number = decimal(text, below=SQLITE_INTEGER_END)
    if number is None or number < 1:
        raise UsageError(f"{name} must be a whole number from 1, not {text!r}")
    return number


def checkout_code(root: Path, workflow: str) -> dict[str, str | None]:
    """The digests of the code that ran, at the job's checkout (HEAD)."""
    from infx.matrix.inputs import code_of

    return code_of(root, git.resolve("HEAD", root), workflow, strict=False)


def artifact_folders(specs: Sequence[str]) -> dict[str, Path]:
    """`NAME=PATH` pairs as the receipt command takes them."""
    found: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--artifact takes NAME=PATH, not {spec!r}")
        found[name] = Path(path)
    return found


def sealed_run(
    root: Path,
    environ: Mapping[str, str],
    payload: Mapping[str, Any],
    artifacts: Sequence[str],
    previous: Sequence[str],
    manifest: Path | None,
) -> tuple[
    RunFacts,
    dict[str, str | None],
    bytes | None,
    dict[str, dict[str, str]],
    dict[str, dict[str, str]],
    list[dict[str, Any]],
]:
    """What `run_receipt` seals, in its order: the run, the code at `root`, the manifest's
    bytes (None: no file), the members of the artifacts and earlier layers (`NAME=PATH`;
    one not there is left out) and the image digests their jobs recorded."""
    facts = actions_run(environ, payload)
    published, earlier = artifact_folders(artifacts), artifact_folders(previous)
    sealed = manifest.read_bytes() if manifest is not None and manifest.is_file() else None
    images = job_images({**published, **{f"previous/{k}": v for k, v in earlier.items()}})
    return (
        facts,
        checkout_code(root, facts.workflow),
        sealed,
        {name: members(path) for name, path in published.items() if path.exists()},
        {name: members(path) for name, path in earlier.items() if path.exists()},
        images,
    )


def folder_members(specs: Sequence[str]) -> dict[str, dict[str, str]]:
    """The members of each downloaded artifact (`NAME=PATH`)."""
    return {name: members(path) for name, path in artifact_folders(specs).items()}


def read_receipts(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The receipts in `paths` (files, or folders holding them), each checked."""
    files = [
        p for path in paths for p in (sorted(path.rglob("*.json")) if path.is_dir() else [path])
    ]
    return [parse(f.read_bytes(), str(f)) for f in files]


def history_location(explicit: str | None) -> str:
    """The history the receipt commands read and write (relative paths: from the current
    folder)."""
    import os

    from infx import settings
    from infx.history.database import location

    root = Path.cwd()
    return location(explicit, os.environ, settings.load(root), root)
