"""The I/O edge of reruns, triage and job timings: read artifacts, jobs and log tails of a
run through the GitHub client, files from a folder the workflow downloaded; decide nothing.

Every read is bounded: artifacts are size-capped downloads of named files, at most
MAX_LOGS log tails of MAX_LOG_BYTES are read per run (failed jobs first, in job order,
then cancelled benchmark jobs, longest first), and the client's request, page and time
limits hold (`GitHub.decide`).
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from infx.errors import GitHubError, InfxError, UsageError
from infx.github.client import GitHub, Job, Run
from infx.matrix import origins
from infx.matrix.rows import checked_matrix, read_plan
from infx.matrix.timings import Timings, parse_timings
from infx.rerun.rules import (
    MAX_LOGS,
    PLAN_FILE,
    SOURCE_PLAN_FILE,
    TIMINGS_FILE,
    PlanFiles,
)
from infx.results.table.rows import Table
from infx.sweep.record import PLAN_ARTIFACT, RECORD_FILE, RunRecord

MAX_LOG_BYTES = 64 * 1024
MAX_ARTIFACT_BYTES = 50 * 1024 * 1024
RESULTS_ARTIFACT = "results_bmk"


def _json(data: bytes, name: str) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name} is not JSON: {exc}") from None


def plan_files(files: Mapping[str, bytes], where: str) -> PlanFiles:
    """A sweep-plan artifact's files, each checked against its schema where it enters."""
    if PLAN_FILE not in files:
        raise UsageError(f"{where} has no {PLAN_FILE}")
    plan = read_plan(files[PLAN_FILE], f"{where}/{PLAN_FILE}")
    record = None
    if RECORD_FILE in files:
        record = RunRecord.from_json(
            _json(files[RECORD_FILE], RECORD_FILE), f"{where}/{RECORD_FILE}"
        )
    source = None
    if SOURCE_PLAN_FILE in files:
        name = f"{where}/{SOURCE_PLAN_FILE}"
        source = checked_matrix(_json(files[SOURCE_PLAN_FILE], name), name)
    timings = Timings()
    if TIMINGS_FILE in files:
        timings = parse_timings(files[TIMINGS_FILE], f"{where}/{TIMINGS_FILE}")
    found: dict[str, str] = {}
    if origins.FILE in files:
        read = origins.read(_json(files[origins.FILE], origins.FILE))
        if read is None:
            raise UsageError(f"{where}/{origins.FILE} is not a map of plan rows to master configs")
        found = read
    return PlanFiles(plan, record, source, timings, found)


def read_manifest(path: Path) -> dict[str, Any]:
    """A source run's sweep-manifest.json; anything else is a one-line usage error."""
    from infx import schemas

    doc = _json(path.read_bytes(), str(path))
    problems = schemas.errors("sweep-manifest", doc)
    if not isinstance(doc, dict) or problems:
        why = f": {problems[0].message}" if problems else ""
        raise UsageError(f"{path} is not a sweep manifest{why}")
    return doc


def folder_files(folder: Path) -> dict[str, bytes]:
    """The files directly in a folder a download-artifact step filled."""
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder (was the artifact downloaded?)")
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


# --- through the API -------------------------------------------------------------------------


def artifact_files(gh: GitHub, run_id: int, name: str) -> dict[str, bytes] | None:
    """The files of a run's artifact (None: the run has no unexpired artifact of that name)."""
    found = [a for a in gh.run_artifacts_named(run_id, name) if not a.expired]
    if not found:
        return None
    artifact = max(found, key=lambda a: a.id)
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "artifact.zip"
        gh.download_artifact(artifact.id, target, MAX_ARTIFACT_BYTES)
        try:
            with zipfile.ZipFile(target) as archive:
                return {
                    Path(info.filename).name: archive.read(info)
                    for info in archive.infolist()
                    if not info.is_dir() and info.file_size <= MAX_ARTIFACT_BYTES
                }
        except zipfile.BadZipFile:
            raise GitHubError(f"artifact {name} of run {run_id} is not a zip archive") from None


def run_plan_files(gh: GitHub, run_id: int) -> PlanFiles | None:
    files = artifact_files(gh, run_id, PLAN_ARTIFACT)
    return None if files is None else plan_files(files, f"run {run_id}'s {PLAN_ARTIFACT}")


def run_results(gh: GitHub, run_id: int) -> list[Table]:
    """A run's results table (results_bmk/results.json), if it has one."""
    from infx.results.ingest.files import load_results

    files = artifact_files(gh, run_id, RESULTS_ARTIFACT)
    if not files or "results.json" not in files:
        return []
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "results.json"
        path.write_bytes(files["results.json"])
        return [load_results(path)]


def job_logs(gh: GitHub, jobs: Sequence[Job], limit: int = MAX_LOGS) -> dict[int, str | None]:
    """Log tails of the jobs that failed, then of benchmark jobs cancelled after running,
    longest first, at most `limit` in all. GitHub reports a job that ran past its
    timeout-minutes as cancelled, like one fail-fast stopped: only its log tells them apart
    (a timeout is never retried as fail-fast collateral), and it ran longest."""
    from infx.matrix.timings import job_slot

    failed = [
        job
        for job in jobs
        if job.conclusion not in (None, "success", "skipped", "cancelled", "neutral")
    ]
    stopped = sorted(
        (
            job
            for job in jobs
            if job.conclusion == "cancelled" and job.seconds and job_slot(job.name) is not None
        ),
        key=lambda job: -(job.seconds or 0.0),
    )
    return {job.id: gh.job_log_tail(job.id, MAX_LOG_BYTES) for job in (failed + stopped)[:limit]}


def newer_sweeps(gh: GitHub, run: Run) -> list[int]:
    """Runs on the run's branch that uploaded a sweep plan since it started."""
    found = gh.artifacts_since(PLAN_ARTIFACT, run.created_at)
    return sorted(
        {a.run_id for a in found if a.run_id is not None and a.head_branch == run.head_branch}
    )


# --- files of the checkout ----------------------------------------------------------------------


def changed_files(root: Path, manifest: Mapping[str, Any], ref: str = "HEAD") -> list[str]:
    """The files a sweep's jobs read (its manifest's recipes and job files) whose bytes at
    `ref` differ from what the sweep read."""
    from infx.matrix.inputs import digests_at

    recorded = manifest.get("measured", {}).get("files", {})
    names = sorted(recorded)
    now = digests_at(root, ref, names) if names else {}
    return [name for name in names if now.get(name) != recorded[name]]


def results_below(folders: Sequence[Path]) -> tuple[list[Table], list[str]]:
    """Every results document below the folders (tables first, then job files), and the
    files skipped because they are not valid results (named, as warnings)."""
    from infx.results.ingest.files import load_results
    from infx.results.ingest.process import RESULT_FILE, TABLE_FILE

    tables: list[Table] = []
    jobs: list[Table] = []
    skipped: list[str] = []
    for folder in folders:
        if not folder.exists():
            continue
        for path in sorted(folder.rglob("*.json")):
            if path.name not in (TABLE_FILE, RESULT_FILE):
                continue
            try:
                doc = load_results(path)
            except InfxError as exc:
                skipped.append(str(exc))
                continue
            (tables if path.name == TABLE_FILE else jobs).append(doc)
    return tables + jobs, skipped


_ATTEMPT = {"run": int, "attempt": int, "pool": str, "node": str}
_MAYBE = {"conclusion": str, "class": str}  # present, a string or null


def read_attempts(path: Path) -> list[dict[str, Any]]:
    """The attempts a source run's triage.json recorded; a file of another shape is refused."""
    doc = _json(path.read_bytes(), str(path))
    attempts = doc.get("attempts") if isinstance(doc, dict) else None
    if not isinstance(attempts, list) or doc.get("format") != "infx-sweep-triage/1":
        raise UsageError(f"{path} is not a triage file")
    for item in attempts:
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), kind) for k, kind in _ATTEMPT.items()
        ):
            raise UsageError(f"{path} is not a triage file: an attempt lacks run, pool or node")
        if not all(k in item and isinstance(item[k], kind | None) for k, kind in _MAYBE.items()):
            raise UsageError(f"{path} is not a triage file: an attempt lacks conclusion or class")
    return attempts
