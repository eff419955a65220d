"""Recover a main run's missing ingest from its own artifacts: no GPU runs again.

The rules, each checked before anything is written:

- the run is a completed `push` run of the sweep workflow on the main branch, on this
  repository's own commits (a pull request's run, a fork's, another workflow's, or one
  still running is refused);
- every benchmark job of its latest attempt passed: the history takes what the ingest job
  would have taken, and that job runs only when no benchmark job failed or was cancelled
  (a failed job's upload may hold a score below its floor);
- it published `results_bmk` (its collect or republish job finished) and its run receipt
  (`sweep-receipt`), unexpired, and the receipt seals exactly that table; a republished
  run (a reused PR sweep) also needs its merge receipt naming the run that measured it;
- the table names the run its run receipt was written by (this run, or the one it
  republished), and that run's commit (the ingest's own check,
  `infx.history.rows.main_table`).

Then the rows go in (a newer attempt replaces the points it measured again) and the
receipts beside them. A run the history already holds at this attempt with its run
receipt is left as it is; one held without receipts gets them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infx.errors import ReviewError, UsageError
from infx.github.values import Artifact, Job, Run
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.review.success import hardware

if TYPE_CHECKING:
    from infx.github.client import GitHub

TABLE = ("results_bmk", "results.json")
RUN_RECEIPT = ("sweep-receipt", "receipt.json")
MERGE_RECEIPT = ("reuse-receipt", "reuse-receipt.json")
MAX_TABLE_BYTES = 256 << 20
MAX_RECEIPT_BYTES = 16 << 20
_FAILED = frozenset({"failure", "cancelled", "timed_out", "startup_failure", "action_required"})


def check_run(run: Run, workflow: str, branch: str, repo: str) -> None:
    """A completed push to the main branch, by the sweep workflow, on this repository."""
    where = f"run {run.id}"
    if not run.path.endswith(f".github/workflows/{workflow}"):
        raise ReviewError(f"{where} is a run of {run.path}, not of {workflow}")
    if run.head_repo != repo:
        raise ReviewError(
            f"{where} ran {run.head_repo or 'an unknown repository'}'s commit, not {repo}'s"
        )
    if run.event != "push" or run.head_branch != branch:
        raise ReviewError(
            f"{where} is a {run.event} run on {run.head_branch or 'an unknown branch'}: only "
            f"pushes to {branch} go into the history"
        )
    if run.status != "completed":
        raise ReviewError(f"{where} is {run.status}: recover it once it has finished")


def failed_jobs(jobs: Iterable[Job]) -> list[Job]:
    """The benchmark jobs (self-hosted runner labels) that did not pass."""
    return [j for j in jobs if hardware(j.labels, {}) is not None and j.conclusion in _FAILED]


def newest(artifacts: Sequence[Artifact], name: str, run_id: int) -> Artifact:
    """The run's newest artifact of that name (a re-run's replaces the first attempt's)."""
    found = sorted(
        (a for a in artifacts if a.name == name),
        key=lambda a: (a.created_at is not None, a.created_at, a.id),
    )
    if not found:
        raise ReviewError(f"run {run_id} published no {name}: its collect job did not finish")
    if found[-1].expired:
        raise ReviewError(f"run {run_id}'s {name} has expired: nothing is left to recover")
    return found[-1]


@dataclass(frozen=True)
class Artifacts:
    table: bytes
    receipts: list[dict[str, Any]]


def read_artifacts(gh: GitHub, run_id: int) -> Artifacts:
    """The run's results table and receipts, each from its newest unexpired artifact."""
    from infx.reuse.receipt import parse

    table_artifact = newest(gh.run_artifacts_named(run_id, TABLE[0]), TABLE[0], run_id)
    table = gh.artifact_member(table_artifact.id, TABLE[1], MAX_TABLE_BYTES)
    receipt = newest(gh.run_artifacts_named(run_id, RUN_RECEIPT[0]), RUN_RECEIPT[0], run_id)
    receipts = [
        parse(gh.artifact_member(receipt.id, RUN_RECEIPT[1], MAX_RECEIPT_BYTES), RUN_RECEIPT[0])
    ]
    merges = gh.run_artifacts_named(run_id, MERGE_RECEIPT[0])
    if merges:
        merge = newest(merges, MERGE_RECEIPT[0], run_id)
        data = gh.artifact_member(merge.id, MERGE_RECEIPT[1], MAX_RECEIPT_BYTES)
        receipts.append(parse(data, MERGE_RECEIPT[0]))
    return Artifacts(table, receipts)


def issued_receipts(
    gh: GitHub, run_id: int, found: Sequence[Mapping[str, Any]], main_branch: str
) -> list[Mapping[str, Any]]:
    """The receipts that vouch for the run: its merge receipt as it uploaded it, and the
    issuer's receipt of it (and of the run a merge republished) in place of its own claim,
    which vouches for nothing."""
    from infx.reuse.issue_facts import read_issued

    docs = [d for d in found if d["kind"] != "run"]
    runs = {run_id} | {d["source"]["run"] for d in docs if d["kind"] == "merge"}
    for rid in sorted(runs):
        issued = read_issued(gh, gh.run(rid), main_branch)
        if issued.receipt is None:
            raise ReviewError(issued.problem)
        docs.append(issued.receipt)
    return docs


def recover(gh: GitHub, run_id: int, where: str | None, workflow: str) -> list[str]:
    """Store main run `run_id`'s results and receipts from its artifacts; the lines to say."""
    import json

    from infx.history import open_history
    from infx.history.database import shown
    from infx.history.receipts import store_receipts, stored_run
    from infx.history.rows import main_table
    from infx.history.sources import history_url
    from infx.reuse.receipt import to_store

    url, found = history_url(where)
    run = gh.run(run_id)
    check_run(run, workflow, found.main_branch, gh.slug)
    stored = stored_run(url, run_id)
    current = stored is not None and stored.run["attempt"] >= run.run_attempt
    if current and stored is not None and "run" in stored.receipts:
        return [
            f"run {run_id} attempt {run.run_attempt} is in the history with its receipts already"
        ]
    bad = failed_jobs(gh.jobs(run_id))
    if bad:
        names = ", ".join(f"{j.name} ({j.conclusion})" for j in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise ReviewError(
            f"run {run_id}: {len(bad)} benchmark job(s) did not pass: {names}{more}. The history "
            "takes a run whose every benchmark job passed; run them again first"
        )
    got = read_artifacts(gh, run_id)
    receipts = to_store(
        run_id, got.table, issued_receipts(gh, run_id, got.receipts, found.main_branch)
    )
    try:
        doc = json.loads(got.table)
    except (ValueError, UnicodeDecodeError):
        raise ReviewError(f"run {run_id}: its {TABLE[1]} is not JSON") from None
    if not isinstance(doc, dict):
        raise ReviewError(f"run {run_id}: its {TABLE[1]} is not a results table")
    table = main_table(doc, run, found.main_branch)
    lines = []
    if not current:
        with open_history(url) as history:
            lines.append(f"{history.store(table).describe()} -> {shown(url)}")
    lines += store_receipts(url, run_id, receipts)
    return lines


_RUN_URL = re.compile(r"https://[^/]+/[^/]+/[^/]+/actions/runs/(\d+)(?:/.*)?")


def run_number(text: str) -> int:
    """A run id, or the URL of a run (or of one of its jobs)."""
    found = _RUN_URL.fullmatch(text.strip())
    value = found.group(1) if found else text.strip()
    number = decimal(value, below=SQLITE_INTEGER_END)  # the history stores what it recovers
    if number is None or number < 1:
        raise UsageError(f"not a workflow run id or URL: {text[:80]!r}")
    return number
