"""Receipts: which run, which bytes, who approved, what the verdict was.

A **run receipt** is written by a sweep's collect job: the sha256 of every member of what
the run publishes (`results_bmk`, `eval_results_all`, `changelog-metadata`) and of the
earlier layers a rerun merged, the run and its commits, the digests of the code that ran,
its manifest, and the image digest each job recorded. A **merge receipt** is written by the
reuse gate when a push republishes a pull request's sweep: the source run, what git
derived for it, who asked and with which permission, the `infx/results` verdict that gated
the pull request, the budget approvals, the merging commit. Both follow
`schemas/receipt.schema.json`; the history stores them beside the rows.

Pure: the edges (`infx.reuse.receipt_files`, `infx.reuse.edge`) read what goes in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infx.errors import UsageError
from infx.github.values import Approval
from infx.matrix.manifest import digest, sha256
from infx.sweep.outcome import Outcome, json_bytes

FORMAT = "infx-receipt/1"
RUN_ARTIFACT = "sweep-receipt"
RUN_FILE = "receipt.json"
RESULTS_CHECK = "infx/results"
TABLE_ARTIFACT, TABLE_MEMBER = "results_bmk", "results.json"


@dataclass(frozen=True)
class RunFacts:
    """The run a collect job belongs to, as the Actions environment names it."""

    repository: str
    id: int
    attempt: int
    event: str
    workflow: str
    sha: str
    head_sha: str
    ref: str


def run_receipt(
    facts: RunFacts,
    code: Mapping[str, str | None],
    manifest: bytes | None,
    artifacts: Mapping[str, Mapping[str, str]],
    previous: Mapping[str, Mapping[str, str]],
    images: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The receipt of one run: `manifest` is its sweep-manifest.json as uploaded (None: the
    run has none), `artifacts` and `previous` map each artifact (or earlier layer) to its
    members' digests, `images` each job's image and recorded digest."""
    sealed = None
    if manifest is not None:
        try:
            own = json.loads(manifest)["digest"]
        except (ValueError, KeyError, TypeError):
            raise UsageError("the sweep manifest is not an infx sweep manifest") from None
        sealed = {"digest": own, "sha256": sha256(manifest)}
    return {
        "format": FORMAT,
        "kind": "run",
        "repository": facts.repository,
        "run": {
            "id": facts.id,
            "attempt": facts.attempt,
            "event": facts.event,
            "workflow": facts.workflow,
            "sha": facts.sha,
            "head_sha": facts.head_sha,
            "ref": facts.ref,
        },
        "code": dict(sorted(code.items())),
        "manifest": sealed,
        "artifacts": {name: dict(sorted(m.items())) for name, m in sorted(artifacts.items())},
        "previous": {name: dict(sorted(m.items())) for name, m in sorted(previous.items())},
        "images": sorted((dict(i) for i in images), key=lambda i: (i["job"], i["image"])),
    }


def run_outcome(out: Path, receipt: Mapping[str, Any]) -> Outcome:
    """`infx receipt run`: write the run receipt to `out` and say what it sealed."""
    count = sum(len(m) for m in receipt["artifacts"].values())
    run = receipt["run"]
    said = f"receipt of run {run['id']} attempt {run['attempt']}: {count} member(s) -> {out}"
    return Outcome(files={out: json_bytes(receipt)}, stdout=[said], make_folders=True)


@dataclass(frozen=True)
class MergeFacts:
    """What the reuse gate knows when a push republishes a pull request's sweep, and what it
    read for the receipt after deciding (the verdict's check run, the approvals)."""

    repository: str
    commit: str
    before: str
    pr: int
    run_id: int | None  # the sweep workflow run that decided (GITHUB_RUN_ID)
    source_run: int
    source_attempt: int
    source_head: str
    source_url: str
    source_conclusion: str | None
    manifest_digest: str
    receipt_sha: str | None
    reason: str
    comment: int | None
    author: str | None
    permission: str | None
    command: str
    asked_at: str | None
    checks: Sequence[tuple[str, str, str | None]]
    approvals: Sequence[Approval]


def merge_receipt(facts: MergeFacts) -> dict[str, Any]:
    """The receipt of a reused merge."""
    check = next((c for c in facts.checks if c[0] == RESULTS_CHECK), None)
    verdict = None
    if check is not None:
        verdict = {"check": check[0], "status": check[1], "conclusion": check[2]}
        verdict["sha"] = facts.source_head
    return {
        "format": FORMAT,
        "kind": "merge",
        "repository": facts.repository,
        "merge": {
            "commit": facts.commit,
            "before": facts.before,
            "pr": facts.pr,
            "run": facts.run_id,
        },
        "source": {
            "run": facts.source_run,
            "attempt": facts.source_attempt,
            "head_sha": facts.source_head,
            "url": facts.source_url,
            "conclusion": facts.source_conclusion,
            "manifest": facts.manifest_digest,
            "receipt": facts.receipt_sha,
            "reason": facts.reason,
        },
        "request": {
            "comment": facts.comment,
            "author": facts.author,
            "permission": facts.permission,
            "command": facts.command,
            "created_at": facts.asked_at,
        },
        "verdict": verdict,
        "approvals": [
            {"environment": env, "state": a.state, "user": a.user, "comment": a.comment}
            for a in facts.approvals
            for env in a.environments
        ],
    }


def parse(data: bytes, where: str) -> dict[str, Any]:
    """A receipt's bytes, checked against its schema; anything else is a usage error."""
    from infx import schemas

    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{where}: not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f"{where}: not an {FORMAT} receipt")
    problems = schemas.errors("receipt", doc)
    if problems:
        found = problems[0]
        at = ".".join(str(p) for p in found.absolute_path) or "receipt"
        raise UsageError(f"{where}: breaks its schema at {at}: {found.message[:120]}")
    return doc


def table_digest(receipt: Mapping[str, Any]) -> str | None:
    """The digest a run receipt gives the results table it published."""
    members = receipt.get("artifacts", {}).get(TABLE_ARTIFACT, {})
    found = members.get(TABLE_MEMBER)
    return found if isinstance(found, str) else None


def mismatches(expected: Mapping[str, str], found: Mapping[str, str], where: str) -> list[str]:
    """Members of an artifact that differ from what its receipt sealed: missing, added, or
    other bytes."""
    problems = [f"{where}/{m}: sealed, not in the artifact" for m in expected if m not in found]
    problems += [f"{where}/{m}: in the artifact, not sealed" for m in found if m not in expected]
    problems += [
        f"{where}/{m}: other bytes than sealed"
        for m in expected
        if m in found and found[m] != expected[m]
    ]
    return sorted(problems)


def to_store(
    run_id: int, table: bytes, receipts: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The receipts that vouch for main run `run_id`'s table (`table`: the results.json it
    stores), checked to form one chain: one run receipt sealing exactly this table, and,
    when another run measured it (a reused merge), the merge receipt of this run naming
    that run and that run receipt. Anything else is a ResultsError naming the break."""
    from infx.errors import ResultsError

    runs = [r for r in receipts if r["kind"] == "run"]
    merges = [r for r in receipts if r["kind"] == "merge"]
    if len(runs) != 1 or len(merges) > 1:
        raise ResultsError(
            f"run {run_id}: need one run receipt and at most one merge receipt, "
            f"got {len(runs)} and {len(merges)}"
        )
    (sealed,) = runs
    if table_digest(sealed) != sha256(table):
        raise ResultsError(
            f"run {run_id}: the table stored is not the one run {sealed['run']['id']}'s "
            "receipt sealed"
        )
    measured = sealed["run"]["id"]
    if not merges:
        if measured != run_id:
            raise ResultsError(
                f"run {run_id}: its table was measured by run {measured}, and no merge "
                "receipt says who republished it"
            )
        return [sealed]
    (merged,) = merges
    if merged["merge"]["run"] not in (None, run_id):
        raise ResultsError(f"run {run_id}: the merge receipt is run {merged['merge']['run']}'s")
    if merged["source"]["run"] != measured or merged["source"]["receipt"] != digest(sealed):
        raise ResultsError(
            f"run {run_id}: the merge receipt republished run {merged['source']['run']}, not "
            f"the run receipt given (run {measured})"
        )
    return [sealed, merged]
