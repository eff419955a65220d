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
MERGE_ARTIFACT = "reuse-receipt"
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


MERGE_MEMBER = "reuse-receipt.json"


def to_store(
    run_id: int, table: bytes, receipts: Sequence[Mapping[str, Any]]
) -> list[tuple[str, Mapping[str, Any]]]:
    """The receipts that vouch for main run `run_id`'s table (`table`: the results.json it
    stores), by the role each plays, checked to form one chain. Every run receipt must be
    the issuer's (a run's own claim vouches for nothing). A run measured on main: its one
    run receipt, sealing exactly this table (`run`). A reused merge: the issuer's receipt
    of the run that measured the table (`run`), the merge receipt naming that receipt's
    digest (`merge`), and the issuer's receipt of this main run (`main`), which seals that
    merge receipt's bytes and republished the same table. Either way the table names the
    run that measured it as its own (stored as `reused_from`, it is what the history says
    measured the rows). Anything else is a ResultsError naming the break."""
    from infx.errors import ResultsError

    runs = [r for r in receipts if r["kind"] == "run"]
    merges = [r for r in receipts if r["kind"] == "merge"]
    claims = [r for r in runs if "issuer" not in r]
    if claims:
        raise ResultsError(
            f"run {run_id}: the receipt of run {claims[0]['run']['id']} is that run's own "
            "claim, not the issuer's: it vouches for nothing"
        )
    by_run = {r["run"]["id"]: r for r in runs}
    if len(by_run) != len(runs) or len(merges) > 1:
        raise ResultsError(f"run {run_id}: two receipts of one run, or two merge receipts")
    if not merges:
        if len(runs) != 1 or run_id not in by_run:
            raise ResultsError(f"run {run_id}: need the issuer's receipt of run {run_id} alone")
        if by_run[run_id]["artifacts"].get(MERGE_ARTIFACT):
            # The run republished another run's table: alone, its receipt would say it
            # measured what it only copied (a merge receipt lost to a failed download).
            raise ResultsError(
                f"run {run_id}: its receipt seals a merge receipt, so it reused another run's "
                "table; give that merge receipt"
            )
        _seals_table(by_run[run_id], table, run_id)
        return [("run", by_run[run_id])]
    (merged,) = merges
    if merged["merge"]["run"] not in (None, run_id):
        raise ResultsError(f"run {run_id}: the merge receipt is run {merged['merge']['run']}'s")
    source, own = by_run.get(merged["source"]["run"]), by_run.get(run_id)
    if source is None or own is None or source is own:
        raise ResultsError(
            f"run {run_id}: a reused merge needs the issuer's receipts of run "
            f"{merged['source']['run']} (which measured it) and of run {run_id}"
        )
    if merged["source"]["receipt"] != digest(source):
        raise ResultsError(
            f"run {run_id}: the merge receipt republished another receipt of run "
            f"{merged['source']['run']} than the one given"
        )
    _seals_table(source, table, run_id)
    sealed_merge = (own["artifacts"].get(MERGE_ARTIFACT) or {}).get(MERGE_MEMBER)
    if sealed_merge != digest(merged):
        raise ResultsError(f"run {run_id}: its receipt does not seal this merge receipt")
    if own["artifacts"].get(TABLE_ARTIFACT) != source["artifacts"].get(TABLE_ARTIFACT):
        raise ResultsError(
            f"run {run_id}: it republished other {TABLE_ARTIFACT} bytes than run "
            f"{merged['source']['run']} published"
        )
    return [("run", source), ("merge", merged), ("main", own)]


def _seals_table(sealed: Mapping[str, Any], table: bytes, run_id: int) -> None:
    from infx.errors import ResultsError

    measured = sealed["run"]["id"]
    if table_digest(sealed) != sha256(table):
        raise ResultsError(
            f"run {run_id}: the table stored is not the one run {measured}'s receipt sealed"
        )
    try:
        doc = json.loads(table)
    except (ValueError, UnicodeDecodeError):
        raise ResultsError(f"run {run_id}: its {TABLE_MEMBER} is not JSON") from None
    own = doc.get("run") if isinstance(doc, dict) else None
    named = own.get("id") if isinstance(own, dict) else None
    if named != measured or isinstance(named, bool):
        # A reused table was written by the pull request's code: the run it names is stored
        # as the one that measured the rows (`reused_from`) and gets its verdicts marked reused.
        raise ResultsError(
            f"run {run_id}: its table names run {named}, its run receipt run {measured}: "
            "nothing says which run measured these rows"
        )
