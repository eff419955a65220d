"""The trusted issuer: run receipts no step of the run they vouch for can write.

A sweep's own jobs run the workflow files of the commit the run checked out, which a pull
request (or a branch's dispatch) wrote: a receipt one of them writes is a claim (SLSA
Build L1). The issuer is `sweep-receipt.yml`, started by `workflow_run` when a sweep run
completes (or dispatched on the main branch), so GitHub runs the default branch's file
and the issuer's own checkout of it, which no pull request can edit. It reads the run
from GitHub, downloads what the run published and seals it: each member's sha256, each
archive's, the results table's points as the history stores them. Which commit the run
checked out comes from GitHub, never from the run: for a push or a dispatch, the run's
`head_sha`; for a pull_request run, the certificate of the attestation its collect job
made of its claim (the ref `refs/pull/<N>/merge` and the merge commit, filled in by
GitHub's OIDC token), else the pull requests ever opened from its branch. The issuer then
attests its receipt with its own identity.

Pure: `infx.reuse.issue_facts` reads what goes in; the rules reuse and ingest apply to an
issued receipt are here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infx.github.client import Pull, Run
from infx.matrix.manifest import digest
from infx.reuse.attestation import Signer, workflow_uri
from infx.sweep.outcome import Outcome

ISSUER_WORKFLOW = ".github/workflows/sweep-receipt.yml"
ISSUER_EVENTS = ("workflow_run", "workflow_dispatch")
ISSUED_FILE = "run-receipt.json"
CLAIM_ARTIFACT, CLAIM_FILE = "sweep-receipt", "receipt.json"
# What a sweep run publishes, and so what the issuer seals: the four republish copies,
# the run's own claim, the plan and the job timings the next sweep and a rerun read, the
# merge receipt of a push that reused.
SEALED = (
    "results_bmk",
    "eval_results_all",
    "changelog-metadata",
    "sweep-manifest",
    CLAIM_ARTIFACT,
    "sweep-plan",
    "sweep-jobs",
    "reuse-receipt",
)
SERVER = "https://github.com"
# sweep-receipt.yml's run-name: the run it sealed, and the event that started that run.
_TITLE = re.compile(r"seal run ([1-9][0-9]*) \((?:[a-z_]+|by hand)\)")


def names_run(title: str | None, run_id: int) -> bool:
    """Whether an issuer run's title (its run-name, `seal run <id> (<event>)`, made by the
    default branch's sweep-receipt.yml: GitHub's run id and event name, or a dispatch's
    `run-id` and `by hand`) says it sealed run `run_id`: the whole title, the id as GitHub
    writes it (a dispatch's `01234` sealed run 1234 under another title; the workflow now
    refuses it)."""
    found = _TITLE.fullmatch(title or "")
    return found is not None and found.group(1) == str(run_id)


def issued_artifact(run_id: int, attempt: int) -> str:
    """The issuer run's artifact holding the receipt of run `run_id`, attempt `attempt`."""
    return f"run-receipt-{run_id}-{attempt}"


@dataclass(frozen=True)
class Issuer:
    """The issuer run, as its own environment names it (GITHUB_WORKFLOW_REF, GITHUB_SHA,
    GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT)."""

    workflow: str
    ref: str
    sha: str
    run: int
    attempt: int


@dataclass(frozen=True)
class Checkout:
    """The commit a run's workflow files came from, and who says so: "event" (GitHub's
    head_sha of a push or dispatch), "attestation" (the certificate of the run's own
    attestation), "pulls" (a pull_request run no attestation vouches for: `sha` unknown)."""

    ref: str | None
    sha: str | None
    by: str
    runner: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "sha": self.sha, "by": self.by, "runner": self.runner}


def signed_by_run(signer: Signer, run: Run, repo: str, server: str = SERVER) -> str:
    """Why the certificate is not one a job of `run` got ("": it is): its run and attempt,
    repository, event and top-level workflow must be the run's."""
    named = signer.run()
    if named != (run.id, run.run_attempt):
        shown = f"run {named[0]} attempt {named[1]}" if named else "no run"
        return f"it was signed by {shown}, not run {run.id} attempt {run.run_attempt}"
    if signer.repository != f"{server}/{repo}" or signer.trigger != run.event:
        return f"it was signed for {signer.repository} on {signer.trigger}"
    workflow = run.path.split("@", 1)[0]
    if signer.config != workflow_uri(server, repo, workflow, signer.ref):
        return f"it was signed by {signer.config}, not {workflow}"
    return ""


def vouched_checkout(run: Run, signer: Signer | None) -> Checkout:
    """Which commit's workflow files `run` ran, as GitHub says (`signer`: the verified
    certificate of the run's own attestation, if any)."""
    if run.event != "pull_request":
        ref = f"refs/heads/{run.head_branch}" if run.head_branch else None
        return Checkout(ref, run.head_sha, "event")
    if signer is not None:
        return Checkout(signer.ref, signer.sha, "attestation", signer.runner)
    return Checkout(None, None, "pulls")


def pulls_facts(
    pulls: Iterable[Pull], changes: Mapping[int, Sequence[Any]]
) -> list[dict[str, Any]]:
    """The pull requests ever opened from a run's branch, each with its base and whether
    its base ever changed (`changes`: number -> the times it did)."""
    return [
        {"number": p.number, "base": p.base_ref, "base_changed": bool(changes.get(p.number))}
        for p in sorted(pulls, key=lambda p: p.number)
    ]


@dataclass(frozen=True)
class IssueFacts:
    """What the issuer read: its own run, the sweep run from GitHub, the commit it ran
    (`checkout`, with `pulls` when no attestation says), what it published (members and
    archive digests), its claim's digest, its manifest's bytes, the images its jobs
    recorded, the code at its checkout, and its results table's points."""

    repository: str
    issuer: Issuer
    run: Run
    checkout: Checkout
    pulls: list[dict[str, Any]] | None
    claim: str | None
    artifacts: Mapping[str, Mapping[str, str]]
    archives: Mapping[str, str]
    manifest: bytes | None
    images: Sequence[Mapping[str, Any]]
    code: Mapping[str, str | None]
    table: Mapping[str, Any] | None


def issued_receipt(facts: IssueFacts) -> dict[str, Any]:
    """The run receipt the issuer seals (schemas/receipt.schema.json, kind run, with its
    issuer)."""
    from infx.reuse.receipt import RunFacts, run_receipt

    run = facts.run
    own = RunFacts(
        facts.repository,
        run.id,
        run.run_attempt,
        run.event,
        run.path.split("@", 1)[0],
        facts.checkout.sha or run.head_sha,
        run.head_sha,
        facts.checkout.ref or "",
    )
    receipt = run_receipt(own, facts.code, facts.manifest, facts.artifacts, {}, facts.images)
    receipt["run"]["head_branch"] = run.head_branch
    receipt["run"]["conclusion"] = run.conclusion
    receipt["issuer"] = {
        "workflow": facts.issuer.workflow,
        "ref": facts.issuer.ref,
        "sha": facts.issuer.sha,
        "run": facts.issuer.run,
        "attempt": facts.issuer.attempt,
    }
    receipt["checkout"] = facts.checkout.as_json()
    if facts.pulls is not None:
        receipt["pulls"] = facts.pulls
    receipt["claim"] = facts.claim
    receipt["archives"] = dict(sorted(facts.archives.items()))
    receipt["table"] = dict(facts.table) if facts.table is not None else None
    return receipt


def issued_outcome(out: Path, facts: IssueFacts) -> Outcome:
    """`infx receipt issue`: the receipt written as canonical bytes (so the file's sha256
    is the receipt's digest, which the history keeps, and its attestation is found again
    from what the history holds), and the step outputs the workflow names its artifact and
    decides its ingest by."""
    from infx.matrix.manifest import canonical

    receipt = issued_receipt(facts)
    run = facts.run
    count = sum(len(m) for m in receipt["artifacts"].values())
    said = (
        f"receipt of run {run.id} attempt {run.run_attempt}: {count} member(s), checkout by "
        f"{facts.checkout.by} -> {out}"
    )
    outputs = {
        "artifact": issued_artifact(run.id, run.run_attempt),
        "run-id": str(run.id),
        "event": run.event,
        "branch": run.head_branch or "",
        "conclusion": run.conclusion or "",
    }
    return Outcome({out: canonical(receipt)}, outputs, stdout=[said], make_folders=True)


def points_digest(points: Iterable[Sequence[Any]]) -> str:
    """One digest over a run's points as the history stores them: (config key, kind,
    concurrency, variant, data) each, order aside; a point doubled or changed changes it."""
    return digest(sorted([list(p) for p in points], key=lambda p: [str(v) for v in p]))


# --- what reuse and ingest require of an issued receipt -----------------------------------


def issuer_run_problem(run: Run, repo: str, main_branch: str) -> str:
    """Why a run is not one of the issuer's ("": it is), from GitHub's record of it: the
    issuer's workflow file, run by workflow_run (always the default branch's file) or
    dispatched on the main branch, in this repository. Its commit must also be one of
    main's (checked in git by the caller: a tag can be named like a branch)."""
    if run.path.split("@", 1)[0] != ISSUER_WORKFLOW:
        return f"run {run.id} is of {run.path}, not the issuer {ISSUER_WORKFLOW}"
    if run.event not in ISSUER_EVENTS:
        return f"issuer run {run.id} ran on {run.event}"
    if run.event == "workflow_dispatch" and run.head_branch != main_branch:
        return f"issuer run {run.id} was dispatched on {run.head_branch}, not {main_branch}"
    if run.head_repo not in (None, repo):
        return f"issuer run {run.id} ran {run.head_repo}'s commits"
    return ""


def checkout_problem(receipt: Mapping[str, Any], run: Run, pull: Pull, main_branch: str) -> str:
    """Why the issued receipt does not say `run` ran for `pull` against the main branch
    ("": it does). A pull_request run's ref must be this PR's merge ref, as its attestation
    says; without one, the only pull request ever opened from its branch must be this
    one, into the main branch, whose base never changed."""
    checkout = receipt.get("checkout") or {}
    if run.event != "pull_request":
        return ""
    if checkout.get("by") == "attestation":
        wanted = f"refs/pull/{pull.number}/merge"
        if checkout.get("ref") != wanted:
            return (
                f"run {run.id} ran for {checkout.get('ref')}, not PR #{pull.number}'s merge "
                f"with {main_branch} ({wanted}), as its attestation says"
            )
        return ""
    listed = receipt.get("pulls")
    if not isinstance(listed, list):
        return f"run {run.id}: which pull request it ran for is vouched for by nothing"
    others = [p for p in listed if p.get("number") != pull.number]
    if others:
        names = ", ".join(f"#{p['number']} into {p['base']}" for p in others)
        return (
            f"run {run.id} may have run for another pull request of branch "
            f"{run.head_branch} ({names}); no attestation says which"
        )
    mine = [p for p in listed if p.get("number") == pull.number]
    if not mine or mine[0].get("base") != main_branch or mine[0].get("base_changed"):
        return (
            f"run {run.id}: PR #{pull.number}'s base changed or is not {main_branch}, so the "
            "base it merged with is unknown; no attestation says which"
        )
    return ""


@dataclass(frozen=True)
class Issued:
    """A run's issued receipt as reuse reads it: the receipt, its bytes, and the issuer run
    that uploaded it (GitHub's record: the issuer's workflow file, run by workflow_run or
    dispatched on main, of a commit GitHub says is on main)."""

    receipt: Mapping[str, Any] | None
    data: bytes = b""
    issuer_run: Run | None = None
    problem: str = ""

    @property
    def digest(self) -> str:
        from infx.matrix.manifest import sha256

        return sha256(self.data)


def vouched_problem(issued: Issued | None, run: Run, pull: Pull, main_branch: str) -> str | None:
    """Why no receipt of the issuer vouches for `run` as a run of `pull` against the main
    branch (None: one does): it is the issuer's (read and checked by `read_issued`), of
    this run and attempt, and GitHub says the run ran for this PR's merge with main."""
    if issued is None or issued.receipt is None:
        return issued.problem if issued is not None else f"run {run.id}'s receipt was not read"
    own = issued.receipt["run"]
    if (own["id"], own["attempt"], own["head_sha"]) != (run.id, run.run_attempt, run.head_sha):
        return (
            f"run {run.id}'s receipt is of run {own['id']} attempt {own['attempt']} at "
            f"{own['head_sha'][:12]}, not of attempt {run.run_attempt} at {run.head_sha[:12]}"
        )
    return checkout_problem(issued.receipt, run, pull, main_branch) or None
