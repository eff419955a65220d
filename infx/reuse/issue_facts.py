"""The I/O edge of the issuer (`infx receipt issue`): the sweep run as GitHub records it,
what it published (downloaded and hashed here, never taken from the run's own claim), the
certificate of its own attestation, the pull requests of its branch, the code at the
commit it checked out (from git), and the points of its results table.

And the reuse side: the issued receipt of a run, found among the issuer's artifacts, with
what vouches that the issuer wrote it (its attestation, else GitHub's record of the run
that uploaded it).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from infx.errors import GitHubError, UsageError
from infx.github.client import Artifact, GitHub, Pull, Run
from infx.matrix.manifest import FILE as MANIFEST_FILE
from infx.matrix.manifest import sha256
from infx.reuse.attestation import Signer, first_signed
from infx.reuse.issuer import (
    CLAIM_ARTIFACT,
    CLAIM_FILE,
    ISSUED_FILE,
    SEALED,
    Checkout,
    IssueFacts,
    Issuer,
    issued_artifact,
    issuer_run_problem,
    issuer_signer_problem,
    points_digest,
    pulls_facts,
    signed_by_run,
    vouched_checkout,
)

# An artifact the issuer seals is downloaded whole: at most this much.
MAX_SEALED_BYTES = 512 << 20
TABLE_MEMBER = "results.json"


def issuer_of(environ: Mapping[str, str]) -> Issuer:
    """The issuer run from its Actions environment."""
    missing = [
        n for n in ("GITHUB_WORKFLOW_REF", "GITHUB_SHA", "GITHUB_RUN_ID") if not environ.get(n)
    ]
    if missing:
        raise UsageError(f"not in a GitHub Actions run: {', '.join(missing)} unset")
    path, _, ref = environ["GITHUB_WORKFLOW_REF"].partition("@")
    workflow = path.split("/", 2)[2] if path.count("/") >= 2 else path
    return Issuer(
        workflow,
        ref,
        environ["GITHUB_SHA"],
        int(environ["GITHUB_RUN_ID"]),
        int(environ.get("GITHUB_RUN_ATTEMPT") or 1),
    )


def _published(gh: GitHub, run: Run) -> dict[str, Artifact]:
    """The one unexpired artifact of each sealed name the run uploaded."""
    listed, whole = gh.run_artifacts_page(run.id)
    if not whole:
        listed = [a for name in SEALED for a in gh.run_artifacts_named(run.id, name)]
    found: dict[str, Artifact] = {}
    for artifact in listed:
        if artifact.name not in SEALED or artifact.expired:
            continue
        if artifact.name in found:
            raise UsageError(f"run {run.id} has two {artifact.name} artifacts: which one it published is unknown")  # fmt: skip
        found[artifact.name] = artifact
    return found


def _unzipped(data: bytes, where: str) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {i.filename: archive.read(i) for i in archive.infolist() if not i.is_dir()}
    except zipfile.BadZipFile:
        raise UsageError(f"{where}: not a zip archive") from None


def _download(gh: GitHub, artifact: Artifact, folder: Path) -> bytes:
    target = folder / f"{artifact.id}.zip"
    gh.download_artifact(artifact.id, target, MAX_SEALED_BYTES)
    return target.read_bytes()


def _signer(gh: GitHub, run: Run, claim: str | None) -> Signer | None:
    """The verified certificate of the run's own attestation of its claim (None: none of
    this run vouches for it)."""
    if run.event != "pull_request" or claim is None:
        return None
    signer, _ = first_signed(
        gh.attestations(claim), claim, lambda s: signed_by_run(s, run, gh.slug)
    )
    return signer


def _pulls(gh: GitHub, run: Run) -> list[dict[str, Any]]:
    owner = gh.slug.split("/", 1)[0]
    pulls: list[Pull] = gh.pulls_from(owner, run.head_branch) if run.head_branch else []
    return pulls_facts(pulls, {p.number: gh.base_changes(p.number) for p in pulls})


def _code(root: Path, run: Run, checkout: Checkout) -> dict[str, str | None]:
    """The code at the commit the run checked out, read from git (nothing when it is
    unknown or cannot be fetched)."""
    from infx.errors import InfxError
    from infx.matrix.inputs import code_of
    from infx.reuse.preview import have_commit

    if checkout.sha is None or have_commit(root, checkout.sha, "origin", None):
        return {}
    try:
        return code_of(root, checkout.sha, run.path.split("@", 1)[0], strict=False)
    except InfxError:
        return {}


def _table(files: Mapping[str, bytes] | None) -> dict[str, Any] | None:
    from infx.errors import ResultsError
    from infx.history.rows import check

    if files is None or TABLE_MEMBER not in files:
        return None
    try:
        checked = check(json.loads(files[TABLE_MEMBER]))
    except (ValueError, ResultsError):
        return None
    points = [(p.config, p.kind, p.conc, p.variant, p.data) for p in checked.points]
    return {"rows": len(points), "points": points_digest(points)}


def issue_facts(gh: GitHub, root: Path, run_id: int, attempt: int | None) -> IssueFacts:
    """Everything the issuer seals of run `run_id` (`attempt`: the one the event named; a
    run that has moved on to another attempt is a usage error, its own event issues it)."""
    from infx.reuse.receipt_files import job_images

    issuer = issuer_of(os.environ)
    run = gh.run(run_id)
    if attempt is not None and attempt != run.run_attempt:
        raise UsageError(f"run {run_id} is at attempt {run.run_attempt} now, not {attempt}")
    if run.status != "completed":
        raise UsageError(f"run {run_id} is {run.status}: only a completed run is sealed")
    files: dict[str, dict[str, bytes]] = {}
    archives: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="infx-issue-") as tmp:
        for name, artifact in sorted(_published(gh, run).items()):
            data = _download(gh, artifact, Path(tmp))
            archives[name] = sha256(data)
            files[name] = _unzipped(data, f"artifact {name} of run {run_id}")
        results = Path(tmp) / "results_bmk"
        for member, data in (files.get("results_bmk") or {}).items():
            (results / member).parent.mkdir(parents=True, exist_ok=True)
            (results / member).write_bytes(data)
        images = job_images({"results_bmk": results})
    claim_bytes = (files.get(CLAIM_ARTIFACT) or {}).get(CLAIM_FILE)
    claim = sha256(claim_bytes) if claim_bytes is not None else None
    signer = gh.decide(lambda: _signer(gh, run, claim))
    checkout = vouched_checkout(run, signer)
    pulls = gh.decide(lambda: _pulls(gh, run)) if checkout.by == "pulls" else None
    return IssueFacts(
        repository=gh.slug,
        issuer=issuer,
        run=run,
        checkout=checkout,
        pulls=pulls,
        claim=claim,
        artifacts={
            name: {m: sha256(d) for m, d in members.items()} for name, members in files.items()
        },
        archives=archives,
        manifest=(files.get("sweep-manifest") or {}).get(MANIFEST_FILE),
        images=images,
        code=_code(root, run, checkout),
        table=_table(files.get("results_bmk")),
    )


# --- reuse: the issued receipt of a run --------------------------------------------------


class IssuedReader(Protocol):
    """The reads `read_issued` needs (infx.github.client.GitHub has them)."""

    @property
    def slug(self) -> str: ...

    def run(self, run_id: int) -> Run: ...
    def artifacts_named(self, name: str, limit: int = 100) -> list[Artifact]: ...
    def artifact_member(self, artifact_id: int, member: str, max_bytes: int) -> bytes: ...
    def attestations(self, digest: str) -> list[Any]: ...
    def on_branch(self, sha: str, branch: str) -> bool: ...


@dataclass(frozen=True)
class Issued:
    """A run's issued receipt as reuse reads it: the receipt, its bytes, and what says the
    issuer wrote it (`signer`: the issuer's attestation; else `issuer_run`, GitHub's
    record of the run that uploaded it, whose commit GitHub says is one of main's)."""

    receipt: Mapping[str, Any] | None
    data: bytes = b""
    signer: Signer | None = None
    issuer_run: Run | None = None
    problem: str = ""

    @property
    def digest(self) -> str:
        return sha256(self.data)


MAX_RECEIPT_BYTES = 32 << 20


def read_issued(reader: IssuedReader, run: Run, main_branch: str) -> Issued:
    """The receipt the issuer sealed of `run` (its latest attempt), or why there is none."""
    from infx.reuse.receipt import parse

    name = issued_artifact(run.id, run.run_attempt)
    listed = [a for a in reader.artifacts_named(name, limit=20) if not a.expired]
    if not listed:
        return Issued(None, problem=(
            f"run {run.id} has no receipt from the issuer ({name}); the issuer "
            "(sweep-receipt.yml) seals a run when it completes"
        ))  # fmt: skip
    why = ""
    for artifact in listed:  # newest first: a re-issue replaces an earlier one
        try:
            data = reader.artifact_member(artifact.id, ISSUED_FILE, MAX_RECEIPT_BYTES)
            receipt = parse(data, f"run {run.id}'s issued receipt")
        except (GitHubError, UsageError) as exc:
            why = str(exc)
            continue
        digest = sha256(data)
        issuer = receipt.get("issuer") or {}
        if issuer.get("run") != artifact.run_id:
            why = (
                f"the receipt in {name} names issuer run {issuer.get('run')}, not {artifact.run_id}"
            )
            continue
        bundles = reader.attestations(digest)
        if bundles:
            signer, problem = first_signed(
                bundles, digest, lambda s: issuer_signer_problem(s, reader.slug, main_branch)
            )
            if signer is None:
                why = f"its attestation does not vouch for it: {problem}"
                continue
            return Issued(receipt, data, signer=signer)
        assert artifact.run_id is not None  # listings across runs always say
        made_by = reader.run(artifact.run_id)
        problem = issuer_run_problem(made_by, reader.slug, main_branch)
        if not problem and not reader.on_branch(made_by.head_sha, main_branch):
            # A dispatch on a tag named like the branch reads as that branch.
            problem = (
                f"issuer run {made_by.id} ran {made_by.head_sha[:12]}, which is not a commit "
                f"of {main_branch}"
            )
        if problem:
            why = problem
            continue
        return Issued(receipt, data, issuer_run=made_by)
    return Issued(None, problem=f"run {run.id}'s receipt is not the issuer's: {why}")


def fetch_issued(repo: str | None, run_id: int) -> Issued:
    """The issuer's receipt of run `run_id` (its latest attempt), checked; a ResultsError
    naming why when none vouches for it."""
    from infx import settings
    from infx.context import repo_slug
    from infx.errors import ResultsError

    gh = GitHub(repo_slug(repo))
    main = settings.load(Path.cwd()).main_branch
    issued = gh.decide(lambda: read_issued(gh, gh.run(run_id), main))
    if issued.receipt is None:
        raise ResultsError(issued.problem)
    return issued
