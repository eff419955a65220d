"""The I/O edge of the issuer (`infx receipt issue`): the sweep run as GitHub records it,
what it published (downloaded and hashed here, never taken from the run's own claim), the
certificate of its own attestation, the pull requests of its branch, the code at the
commit it checked out (from git), and the points of its results table.

And the reuse side: the issued receipt of a run, found among the issuer's artifacts, with
what vouches that the issuer wrote it (its attestation, else GitHub's record of the run
that uploaded it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from infx.errors import GitHubError, UsageError
from infx.github.client import Artifact, GitHub, Pull, Run
from infx.matrix.manifest import FILE as MANIFEST_FILE
from infx.matrix.manifest import sha256
from infx.paths import outside_repository
from infx.reuse.attestation import Signer, first_signed
from infx.reuse.issuer import (
    CLAIM_ARTIFACT,
    CLAIM_FILE,
    ISSUED_FILE,
    ISSUER_WORKFLOW,
    SEALED,
    Checkout,
    Issued,
    IssueFacts,
    Issuer,
    issued_artifact,
    issuer_run_problem,
    names_run,
    points_digest,
    pulls_facts,
    signed_by_run,
    vouched_checkout,
)

# An artifact the issuer seals is downloaded whole: at most this much.
MAX_SEALED_BYTES = 512 << 20
TABLE_MEMBER = "results.json"


def authorities_of(path: Path | None) -> list[Any] | None:
    """The certificate authorities of the trusted root file (None: none given, or an empty
    file, as `gh attestation trusted-root` leaves when it failed); a file that is not a
    trusted root is a usage error."""
    from infx.reuse.attestation import trusted_authorities

    if path is None or not path.is_file() or not path.read_bytes().strip():
        return None
    try:
        return trusted_authorities(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a Sigstore trusted root ({exc})") from None


def issuer_of(environ: Mapping[str, str]) -> Issuer:
    """The issuer run from its Actions environment (a run id or attempt that is not one is a
    usage error: int() crashed on junk, and took `٣` and 2**63)."""
    from infx.reuse.receipt_files import actions_number

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
        actions_number(environ, "GITHUB_RUN_ID"),
        actions_number({"GITHUB_RUN_ATTEMPT": "1", **environ}, "GITHUB_RUN_ATTEMPT"),
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


KEPT = (CLAIM_FILE, MANIFEST_FILE, TABLE_MEMBER)  # the members read, not only hashed


def _unpack(path: Path, where: str, into: Path | None) -> tuple[dict[str, str], dict[str, bytes]]:
    """The sha256 of every member of the archive at `path`, read a chunk at a time, the
    bytes of the members the issuer reads (KEPT), and every member written below `into`
    when given (what the jobs recorded is read from files)."""
    digests: dict[str, str] = {}
    kept: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename
                if info.is_dir():
                    continue
                if outside_repository(name):
                    raise UsageError(f"{where}: a member outside the archive ({name})")
                found, chunks = hashlib.sha256(), []
                target = into / name if into is not None else None
                if target is not None:
                    target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as member, contextlib.ExitStack() as stack:
                    out = stack.enter_context(target.open("wb")) if target else None
                    while chunk := member.read(1 << 20):
                        found.update(chunk)
                        if out is not None:
                            out.write(chunk)
                        if name in KEPT:
                            chunks.append(chunk)
                digests[name] = "sha256:" + found.hexdigest()
                if name in KEPT:
                    kept[name] = b"".join(chunks)
    except zipfile.BadZipFile:
        raise UsageError(f"{where}: not a zip archive") from None
    return digests, kept


def _file_digest(path: Path) -> str:
    found = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            found.update(chunk)
    return "sha256:" + found.hexdigest()


def _signer(
    gh: GitHub, run: Run, claim: str | None, authorities: list[Any] | None
) -> Signer | None:
    """The verified certificate of the run's own attestation of its claim: issued by an
    authority of the trusted root, naming this run (None: none does, or no trusted root
    was given, so no certificate can be believed)."""
    if run.event != "pull_request" or claim is None or not authorities:
        return None
    signer, _ = first_signed(
        gh.attestations(claim), claim, lambda s: signed_by_run(s, run, gh.slug), authorities
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


def issue_facts(
    gh: GitHub,
    root: Path,
    run_id: int,
    attempt: int | None,
    authorities: list[Any] | None = None,
) -> IssueFacts:
    """Everything the issuer seals of run `run_id` (`attempt`: the one the event named; a
    run that has moved on to another attempt is a usage error, its own event issues it;
    `authorities`: Sigstore's trusted root, without which no attestation is believed)."""
    from infx.reuse.receipt_files import job_images

    issuer = issuer_of(os.environ)
    run = gh.run(run_id)
    if attempt is not None and attempt != run.run_attempt:
        raise UsageError(f"run {run_id} is at attempt {run.run_attempt} now, not {attempt}")
    if run.status != "completed":
        raise UsageError(f"run {run_id} is {run.status}: only a completed run is sealed")
    members: dict[str, dict[str, str]] = {}
    files: dict[str, dict[str, bytes]] = {}
    archives: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="infx-issue-") as tmp:
        results = Path(tmp) / "results_bmk"
        for name, artifact in sorted(_published(gh, run).items()):
            archive = Path(tmp) / f"{artifact.id}.zip"
            gh.download_artifact(artifact.id, archive, MAX_SEALED_BYTES)
            archives[name] = _file_digest(archive)
            into = results if name == "results_bmk" else None
            members[name], files[name] = _unpack(archive, f"artifact {name} of run {run_id}", into)
        images = job_images({"results_bmk": results})
    claim_bytes = (files.get(CLAIM_ARTIFACT) or {}).get(CLAIM_FILE)
    claim = sha256(claim_bytes) if claim_bytes is not None else None
    signer = gh.decide(lambda: _signer(gh, run, claim, authorities))
    checkout = vouched_checkout(run, signer)
    pulls = gh.decide(lambda: _pulls(gh, run)) if checkout.by == "pulls" else None
    return IssueFacts(
        repository=gh.slug,
        issuer=issuer,
        run=run,
        checkout=checkout,
        pulls=pulls,
        claim=claim,
        artifacts=members,
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

    def runs_since(
        self, workflow: str, event: str, since: datetime, branch: str | None = None
    ) -> Iterator[Run]: ...
    def run_artifacts_named(self, run_id: int, name: str) -> list[Artifact]: ...
    def artifact_member(self, artifact_id: int, member: str, max_bytes: int) -> bytes: ...
    def on_branch(self, sha: str, branch: str) -> bool: ...


MAX_RECEIPT_BYTES = 32 << 20


def issuer_runs(reader: IssuedReader, run: Run, main_branch: str) -> Iterator[Run]:
    """The issuer's runs that say they sealed `run`, newest first: its `workflow_run` runs
    (always the default branch's file: no pull request can add one), then its dispatches on
    the main branch, each started after `run`. Found through the issuer workflow's own
    runs, never through the repository's artifacts by name, which any workflow can fill."""
    workflow = Path(ISSUER_WORKFLOW).name
    for event, branch in (("workflow_run", None), ("workflow_dispatch", main_branch)):
        for made_by in reader.runs_since(workflow, event, run.created_at, branch):
            if names_run(made_by.title, run.id):
                yield made_by


def read_issued(reader: IssuedReader, run: Run, main_branch: str) -> Issued:
    """The receipt the issuer sealed of `run` (its latest attempt), or why there is none.
    Who uploaded it is GitHub's word, which no job can change: the artifact's run must be
    an issuer run (`issuer_run_problem`) of a commit on main, and the receipt must name
    that run as its issuer. (The issuer's attestation of it is for `gh attestation
    verify`, which checks Sigstore's trust root.)"""
    from infx.reuse.receipt import parse

    name = issued_artifact(run.id, run.run_attempt)
    why = ""
    for made_by in issuer_runs(reader, run, main_branch):  # newest first: a re-issue wins
        problem = issuer_run_problem(made_by, reader.slug, main_branch)
        dispatched = made_by.event == "workflow_dispatch"
        if not problem and dispatched and not reader.on_branch(made_by.head_sha, main_branch):
            # A dispatch on a tag named like the branch reads as that branch; workflow_run
            # runs the default branch's file at its tip, whatever started it.
            problem = (
                f"issuer run {made_by.id} ran {made_by.head_sha[:12]}, which is not a commit "
                f"of {main_branch}"
            )
        if problem:
            why = problem
            continue
        listed = [a for a in reader.run_artifacts_named(made_by.id, name) if not a.expired]
        for artifact in listed:
            try:
                data = reader.artifact_member(artifact.id, ISSUED_FILE, MAX_RECEIPT_BYTES)
                receipt = parse(data, f"run {run.id}'s issued receipt")
            except (GitHubError, UsageError) as exc:
                why = str(exc)
                continue
            if (receipt.get("issuer") or {}).get("run") != made_by.id:
                why = f"the receipt in {name} names another issuer run than {made_by.id}"
                continue
            return Issued(receipt, data, issuer_run=made_by)
    if not why:
        return Issued(None, problem=(
            f"run {run.id} has no receipt from the issuer ({name}); the issuer "
            "(sweep-receipt.yml) seals a run when it completes"
        ))  # fmt: skip
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


def with_issued(docs: list[dict[str, Any]], run_id: int) -> list[dict[str, Any]]:
    """`docs` with their run receipts replaced by the issuer's, fetched from GitHub, of main
    run `run_id` and of the run a merge receipt among them republished."""
    runs = {run_id} | {d["source"]["run"] for d in docs if d["kind"] == "merge"}
    kept = [d for d in docs if d["kind"] != "run"]
    return kept + [dict(fetch_issued(None, rid).receipt or {}) for rid in sorted(runs)]


def vouched(
    gh: GitHub, run: Run, table: bytes, main_branch: str
) -> list[tuple[str, Mapping[str, Any]]]:
    """The issuer's receipts that vouch for main run `run`'s table (`table`: its
    results.json as GitHub serves it), by role, as the ingest stores them: the run's own
    receipt and, when it sealed a merge receipt, that merge receipt (the run's
    `reuse-receipt` artifact) and the issuer's receipt of the run it names. A ResultsError
    (UsageError: a receipt that is no receipt) names the break."""
    from infx.errors import ResultsError
    from infx.reuse.receipt import MERGE_ARTIFACT, MERGE_MEMBER, parse, to_store

    def issued(of: Run) -> Mapping[str, Any]:
        found = gh.decide(lambda: read_issued(gh, of, main_branch))
        if found.receipt is None:
            raise ResultsError(found.problem)
        return found.receipt

    own = issued(run)
    docs: list[Mapping[str, Any]] = [own]
    if own["artifacts"].get(MERGE_ARTIFACT):
        listed = [a for a in gh.run_artifacts_named(run.id, MERGE_ARTIFACT) if not a.expired]
        if not listed:
            raise ResultsError(f"run {run.id}: its {MERGE_ARTIFACT} artifact is gone")
        data = gh.artifact_member(listed[0].id, MERGE_MEMBER, MAX_RECEIPT_BYTES)
        merged = parse(data, f"run {run.id}'s {MERGE_ARTIFACT}")
        docs += [merged, issued(gh.run(merged["source"]["run"]))]
    return to_store(run.id, table, docs)
