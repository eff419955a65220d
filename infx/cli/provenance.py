"""`infx receipt run|store|check` and `infx results provenance`: each parses its options,
reads through the receipt edges (`infx.reuse.receipt_files`), asks a use case in
`infx.reuse.receipt` or `infx.reuse.provenance`, and writes or prints its answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from infx.cli.options import EXISTING, FILE, Stored, api_repo_option, emit, history_option

_ARTIFACT_HELP = "NAME=PATH: an artifact this run uploads, as a folder or file; repeat."


@click.group()
def receipt() -> None:
    """Seal what a run published (collect job) and store receipts beside the rows (ingest)."""


@receipt.command("run")
@click.option("--out", type=FILE, required=True, help="Where to write receipt.json.")
@click.option("--artifact", "artifacts", multiple=True, help=_ARTIFACT_HELP)
@click.option("--previous", multiple=True, help="NAME=PATH: an earlier run's results a rerun merged (its source layers).")  # fmt: skip
@click.option("--manifest", type=FILE, default=None, help="This run's sweep-manifest.json (absent: the receipt says none).")  # fmt: skip
def run_cmd(out: Path, artifacts: tuple[str, ...], previous: tuple[str, ...], manifest: Path | None) -> None:  # fmt: skip
    """Write this run's receipt: the sha256 of every member of each artifact, the run and its
    commits, the code that ran, its manifest, and the image digest each job recorded
    (schemas/receipt.schema.json). Runs in the collect job of a sweep."""
    from infx import git
    from infx.github.actions import event
    from infx.reuse.receipt import run_outcome, run_receipt
    from infx.reuse.receipt_files import sealed_run

    sealed = sealed_run(git.root(), os.environ, event()[1], artifacts, previous, manifest)
    emit(run_outcome(out, run_receipt(*sealed)))


@receipt.command("issue")
@click.option("--run", "run_id", type=Stored(), required=True, help="The completed sweep run to seal (github.event.workflow_run.id).")  # fmt: skip
@click.option("--attempt", type=Stored(), default=None, help="The attempt the event named; a run at another attempt now is refused.")  # fmt: skip
@click.option("--out", type=FILE, required=True, help="Where to write the run receipt.")
@click.option("--trusted-root", type=FILE, default=None, help="Sigstore's trusted root (`gh attestation trusted-root`); without it no attestation is believed.")  # fmt: skip
@api_repo_option
def issue_cmd(run_id: int, attempt: int | None, out: Path, trusted_root: Path | None, repo: str | None) -> None:  # fmt: skip
    """Seal a completed sweep run as the trusted issuer (workflow sweep-receipt.yml, the
    default branch's code): read the run from GitHub, download and hash what it published,
    take the commit it ran from GitHub (a pull_request run's own attestation, or the pull
    requests of its branch), and write its run receipt with this run as its issuer."""
    from infx import git
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.reuse.issue_facts import authorities_of, issue_facts
    from infx.reuse.issuer import issued_outcome

    gh = GitHub(repo_slug(repo))
    roots = authorities_of(trusted_root)
    emit(issued_outcome(out, issue_facts(gh, git.root(), run_id, attempt, roots)))


@receipt.command("check")
@click.option("--receipt", "receipt_file", type=FILE, required=True, help="The run receipt (receipt.json).")  # fmt: skip
@click.option("--artifact", "artifacts", multiple=True, help=_ARTIFACT_HELP)
def check_cmd(receipt_file: Path, artifacts: tuple[str, ...]) -> None:
    """Check artifacts (downloaded folders) against the run receipt that sealed them: every
    member there, none added, the same bytes. Exits 1 naming each difference."""
    from infx.reuse.provenance import check_outcome
    from infx.reuse.receipt import parse
    from infx.reuse.receipt_files import folder_members

    sealed = parse(receipt_file.read_bytes(), str(receipt_file))
    emit(check_outcome(sealed, folder_members(artifacts)))


@receipt.command("fetch")
@click.option("--run", "run_id", type=Stored(), required=True, help="The sweep run whose receipt to fetch (its latest attempt).")  # fmt: skip
@click.option("--out", type=FILE, required=True, help="Where to write the receipt, as sealed.")
@api_repo_option
def fetch_cmd(run_id: int, out: Path, repo: str | None) -> None:
    """Fetch the issuer's receipt of a run, checked against the issuer's identity (its
    attestation, or GitHub's record of the issuer run on the main branch), and write its
    bytes as sealed. Exits 1 when no receipt of the issuer vouches for the run."""
    from infx.reuse.issue_facts import fetch_issued
    from infx.sweep.outcome import Outcome

    issued = fetch_issued(repo, run_id)
    said = f"the issuer's receipt of run {run_id} ({issued.digest}) -> {out}"
    emit(Outcome(files={out: issued.data}, stdout=[said], make_folders=True))


@receipt.command("store")
@click.argument("receipts", nargs=-1, required=True, type=EXISTING)
@click.option("--run", "run_id", type=Stored(), required=True, help="The main run whose rows the receipts vouch for (stored already).")  # fmt: skip
@click.option(
    "--table", type=FILE, required=True, help="The results.json stored for that run, as downloaded."
)
@click.option("--fetch/--no-fetch", default=True, help="Fetch the issuer's receipts of the run, and of the run a merge receipt republished, checked against the issuer's identity (the default); --no-fetch believes the run receipts among the files as given.")  # fmt: skip
@click.option("--check", "check_only", is_flag=True, help="Check that the receipts vouch for the table, store nothing (before the rows are stored).")  # fmt: skip
@history_option
def store_cmd(receipts: tuple[Path, ...], run_id: int, table: Path, fetch: bool, check_only: bool, history_url: str | None) -> None:  # fmt: skip
    """Store a main run's receipts (files, or folders holding them) beside its rows: the
    issuer's receipt of the run that measured them, which must seal exactly the stored
    table, and for a reused merge the merge receipt naming it and the issuer's receipt of
    this run, which seals that merge receipt. A run's own claim vouches for nothing."""
    from infx.history.receipts import store_receipts
    from infx.reuse.receipt import to_store
    from infx.reuse.receipt_files import history_location, read_receipts

    docs = read_receipts(receipts)
    if fetch:
        from infx.reuse.issue_facts import with_issued

        docs = with_issued(docs, run_id)
    chain = to_store(run_id, table.read_bytes(), docs)
    if check_only:
        roles = ", ".join(f"{role} (run {doc['run']['id'] if doc['kind'] == 'run' else doc['source']['run']})" for role, doc in chain)  # fmt: skip
        click.echo(f"run {run_id}'s table is vouched for by the {roles} receipt(s)")
        return
    for line in store_receipts(history_location(history_url), run_id, chain):
        click.echo(line)


@click.command("provenance")
@click.argument("target")
@click.argument("conc", required=False, type=Stored())
@history_option
@click.option("--verify", is_flag=True, help="Download the measuring run's artifacts and check every member against its receipt.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", help="text: the chain for people; json: as JSON.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, hidden=True, help="--format json's old spelling.")  # fmt: skip
@api_repo_option
def provenance(target: str, conc: int | None, history_url: str | None, verify: bool, fmt: str, as_json: bool, repo: str | None) -> None:  # fmt: skip
    """The chain behind a number of main's history: which run measured it, which bytes it
    published, who approved, what the verdict was. TARGET is a main run id, or a config key
    followed by a concurrency (as `results compare` names points). Exits 1 when a link breaks."""
    from infx import settings
    from infx.reuse.provenance import broken, lines, trace
    from infx.reuse.receipt_files import history_location

    main = settings.load(Path.cwd()).main_branch
    found = trace(history_location(history_url), target, conc, verify, repo, main)
    as_json = as_json or fmt == "json"
    click.echo(json.dumps(found, indent=2, sort_keys=True) if as_json else "\n".join(lines(found)))
    if (error := broken(target, found)) is not None:
        raise error
