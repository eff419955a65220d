"""`infx receipt run|store|check` and `infx results provenance`: each parses its options,
reads through the receipt edges, asks a use case in `infx.reuse.receipt` or
`infx.reuse.provenance`, and writes or prints its answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from infx.cli.options import api_repo_option

_HISTORY_HELP = (
    "Where main's results history is: an SQLite path or sqlite:/// URL, or a postgresql:// "
    "URL. Default: INFX_HISTORY_URL, else `history` in infx.toml, else .infx/history.sqlite."
)
_ARTIFACT_HELP = "NAME=PATH: an artifact this run uploads, as a folder or file; repeat."


def _history_url(explicit: str | None) -> str:
    from infx import settings
    from infx.history.database import location

    root = Path.cwd()
    return location(explicit, os.environ, settings.load(root), root)


@click.group()
def receipt() -> None:
    """Seal what a run published (collect job) and store receipts beside the rows (ingest)."""


@receipt.command("run")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write receipt.json.")  # fmt: skip
@click.option("--artifact", "artifacts", multiple=True, help=_ARTIFACT_HELP)
@click.option("--previous", multiple=True,
              help="NAME=PATH: an earlier run's results a rerun merged (its source layers).")  # fmt: skip
@click.option("--manifest", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="This run's sweep-manifest.json (absent: the receipt says none).")  # fmt: skip
def run_cmd(out: Path, artifacts: tuple[str, ...], previous: tuple[str, ...], manifest: Path | None) -> None:  # fmt: skip
    """Write this run's receipt: the sha256 of every member of each artifact, the run and its
    commits, the code that ran, its manifest, and the image digest each job recorded
    (schemas/receipt.schema.json). Runs in the collect job of a sweep."""
    from infx import git
    from infx.github.actions import event
    from infx.reuse.receipt import run_receipt
    from infx.reuse.receipt_files import (
        actions_run,
        artifact_folders,
        checkout_code,
        job_images,
        members,
    )
    from infx.sweep.outcome import json_bytes
    from infx.yamlio import atomic_write

    facts = actions_run(os.environ, event()[1])
    published, earlier = artifact_folders(artifacts), artifact_folders(previous)
    sealed = manifest.read_bytes() if manifest is not None and manifest.is_file() else None
    images = job_images({**published, **{f"previous/{k}": v for k, v in earlier.items()}})
    doc = run_receipt(
        facts,
        checkout_code(git.root(), facts.workflow),
        sealed,
        {name: members(path) for name, path in published.items() if path.exists()},
        {name: members(path) for name, path in earlier.items() if path.exists()},
        images,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, json_bytes(doc))
    count = sum(len(m) for m in doc["artifacts"].values())
    click.echo(f"receipt of run {facts.id} attempt {facts.attempt}: {count} member(s) -> {out}")


@receipt.command("check")
@click.option("--receipt", "receipt_file", type=click.Path(dir_okay=False, path_type=Path),
              required=True, help="The run receipt (receipt.json).")  # fmt: skip
@click.option("--artifact", "artifacts", multiple=True, help=_ARTIFACT_HELP)
def check_cmd(receipt_file: Path, artifacts: tuple[str, ...]) -> None:
    """Check artifacts (downloaded folders) against the run receipt that sealed them: every
    member there, none added, the same bytes. Exits 1 naming each difference."""
    from infx.errors import ResultsError
    from infx.reuse.provenance import verify
    from infx.reuse.receipt import parse
    from infx.reuse.receipt_files import artifact_folders, members

    sealed = parse(receipt_file.read_bytes(), str(receipt_file))
    folders = artifact_folders(artifacts)
    wanted = {k: v for k, v in sealed["artifacts"].items() if k in folders}
    problems = verify({**sealed, "artifacts": wanted}, {n: members(p) for n, p in folders.items()})
    if problems:
        raise ResultsError(
            "; ".join(problems[:5])
            + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        )
    click.echo(
        f"{sum(len(m) for m in wanted.values())} member(s) match run {sealed['run']['id']}'s receipt"
    )


@receipt.command("store")
@click.argument("receipts", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))  # fmt: skip
@click.option("--run", "run_id", type=click.IntRange(min=1), required=True,
              help="The main run whose rows the receipts vouch for (stored already).")  # fmt: skip
@click.option("--table", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The results.json stored for that run, as downloaded.")  # fmt: skip
@click.option("--history", "history_url", default=None, metavar="URL", help=_HISTORY_HELP)
def store_cmd(receipts: tuple[Path, ...], run_id: int, table: Path, history_url: str | None) -> None:  # fmt: skip
    """Store a main run's receipts (files, or folders holding them) beside its rows: its run
    receipt, which must seal exactly the stored table, and for a reused merge the merge
    receipt naming that run receipt."""
    from infx.history.receipts import store_receipts
    from infx.reuse.receipt import parse, to_store

    files = [
        p for path in receipts for p in (sorted(path.rglob("*.json")) if path.is_dir() else [path])
    ]
    docs = [parse(f.read_bytes(), str(f)) for f in files]
    for line in store_receipts(
        _history_url(history_url), run_id, to_store(run_id, table.read_bytes(), docs)
    ):
        click.echo(line)


@click.command("provenance")
@click.argument("target")
@click.argument("conc", required=False, type=click.IntRange(min=1))
@click.option("--history", "history_url", default=None, metavar="URL", help=_HISTORY_HELP)
@click.option("--verify", is_flag=True,
              help="Download the measuring run's artifacts and check every member against its receipt.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the chain as JSON.")
@api_repo_option
def provenance(target: str, conc: int | None, history_url: str | None, verify: bool, as_json: bool, repo: str | None) -> None:  # fmt: skip
    """The chain behind a number of main's history: which run measured it, which bytes it
    published, who approved, what the verdict was. TARGET is a main run id, or a config key
    followed by a concurrency (as `results compare` names points). Exits 1 when a link breaks."""
    from infx.errors import ResultsError, UsageError
    from infx.history.receipts import stored_point, stored_run
    from infx.reuse.provenance import chain, lines

    url = _history_url(history_url)
    if conc is None:
        if not target.isdigit():
            raise UsageError(f"{target!r}: give a run id, or a config key and a concurrency")
        stored = stored_run(url, int(target))
    else:
        stored = stored_point(url, target, conc)
    if stored is None:
        raise UsageError(
            f"{target}{f' at concurrency {conc}' if conc else ''} is not in the history"
        )
    found = chain(stored)
    sealed = stored.receipts.get("run")
    if verify and sealed is not None:
        from infx.context import repo_slug
        from infx.github.client import GitHub
        from infx.reuse.provenance import fetch_members
        from infx.reuse.provenance import verify as check

        gh = GitHub(repo_slug(repo))
        fetched = fetch_members(gh, sealed["run"]["id"], sealed["artifacts"])
        problems = check(sealed, fetched)
        found["verified"] = {"members": sum(len(m) for m in fetched.values()), "problems": problems}
    click.echo(json.dumps(found, indent=2, sort_keys=True) if as_json else "\n".join(lines(found)))
    broken = found["problems"] or (found.get("verified") or {}).get("problems")
    if broken:
        raise ResultsError(f"the chain of {target} breaks: {(found['problems'] or broken)[0]}")
