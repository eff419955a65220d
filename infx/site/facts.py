"""Everything `infx site build` reads, read once: main's history (database), the commit
ranges of its steps (git), PR results tables and the history they are judged against,
verdict documents. The pure part (`build.build_site`) takes what this returns."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from infx import git, schemas
from infx.errors import GitError, UsageError
from infx.history.database import ENV
from infx.numbers import PR_NUMBERS
from infx.results.ingest.files import load_results
from infx.results.table.keys import family_key
from infx.results.table.rows import Row, Table, run_of
from infx.settings import Settings
from infx.settings import load as load_settings
from infx.site.build import SiteFacts, analyse, step_ranges
from infx.site.changelog import read_ranges
from infx.site.model import PrResults, VerdictRecord
from infx.site.read import history_url, read_history

_VERDICT_NAME = re.compile(r"(?:pr-?)?(\d+)(?:-run-(\d+))?(?:-[^/]*)?\.json")
_PULL_REF = re.compile(r"refs/pull/(\d+)/")


def _pr(number: int, where: object) -> int:
    if number not in PR_NUMBERS:
        raise UsageError(
            f"{where}: pull request #{number} is not a number the site can link (1 to 2**53 - 1)"
        )
    return number


def load_verdicts(folder: Path) -> tuple[VerdictRecord, ...]:
    """The PR verdicts the verdict page shows when given a folder (`--verdicts`): `infx
    results compare --format json` documents in `folder`, named `pr-<N>.json` or
    `pr-<N>-run-<RUN ID>.json` (a verdict says neither which PR nor which run it judged).
    Without one, the history's verdicts table is read (`stored_verdicts`)."""
    if not folder.is_dir():
        raise UsageError(f"--verdicts: {folder} is not a folder")
    found = []
    for path in sorted(folder.rglob("*.json")):
        named = _VERDICT_NAME.fullmatch(path.name)
        if named is None:
            raise UsageError(
                f"{path}: name a verdict document pr-<N>.json or pr-<N>-run-<RUN ID>.json"
            )
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: not JSON: {exc}") from None
        problems = schemas.errors("results-verdict", doc)
        if problems:
            where = ".".join(str(p) for p in problems[0].absolute_path) or "document"
            raise UsageError(f"{path}: not an infx verdict: {where}: {problems[0].message}")
        run = int(named.group(2)) if named.group(2) else None
        found.append(VerdictRecord(_pr(int(named.group(1)), path), run, path.name, doc))
    return tuple(found)


def stored_verdicts(url: str) -> tuple[VerdictRecord, ...] | None:
    """The PR verdicts the history's verdicts table holds (`results compare --pr` records
    each run attempt it judges against the database); None when it holds none."""
    from infx.history import open_history
    from infx.history.verdicts import read

    with open_history(url) as history:
        found = read(history)
    records = tuple(
        VerdictRecord(
            v.pr,
            v.run_id,
            f"pr-{v.pr}-run-{v.run_id}-attempt-{v.attempt}",
            v.document,
            v.attempt,
            v.head_sha,
        )
        for v in found
        if v.pr in PR_NUMBERS  # `results compare --pr` once took any integer
    )
    return records or None


def _pr_number(table: Table, path: Path) -> int:
    run = run_of(table)
    pull = _PULL_REF.match(str(run.get("ref", "")))
    if pull:
        return _pr(int(pull.group(1)), path)
    named = re.fullmatch(r"pr-?(\d+)(?:\D.*)?", path.stem)
    if named:
        return _pr(int(named.group(1)), path)
    if isinstance(run.get("id"), int):
        return _pr(int(run["id"]), path)
    raise UsageError(
        f"{path}: its run names no pull request (run.ref refs/pull/<N>/merge) and no run id; "
        "name the file pr-<N>.json"
    )


def _main_history(url: str, rows: list[Row], limit: int) -> list[Table]:
    """Main's runs as `infx results compare --history` reads them: the newest `limit` runs
    holding the PR's configs or any config of their families."""
    from infx.history import open_history

    with open_history(url) as history:
        families = {family_key("", r["identity"]) for r in rows}
        configs = [r["identity"] for r in rows] + [
            c for c in history.config_identities() if family_key("", c) in families
        ]
        return history.main_runs(limit=limit, configs=configs)


def load_pr_results(path: Path, url: str, limit: int) -> PrResults:
    table = load_results(path)
    rows = table.get("rows", [])
    own = run_of(table).get("id")
    docs = _main_history(url, rows, limit) if rows else []
    docs = [d for d in docs if run_of(d).get("id") != own]
    return PrResults(_pr_number(table, path), table, docs, path.name)


def _settings(repo_dir: Path) -> tuple[Settings, Path]:
    """The repository's settings (history location, history runs), else the defaults."""
    try:
        root = git.root(repo_dir)
    except GitError:
        return Settings(), repo_dir.resolve()
    return load_settings(root), root


def _here() -> Path:
    """Where a relative --history (or INFX_HISTORY_URL) is read from, as every command reads
    it: the root of the repository the command runs in, else the current folder; never
    --repo-dir, which names the changelog's repository."""
    try:
        return git.root()
    except GitError:
        return Path.cwd()


def gather(
    history: str | None,
    repo_dir: Path,
    pr_results: Sequence[Path] = (),
    verdicts: Path | None = None,
    now: datetime | None = None,
) -> SiteFacts:
    settings, root = _settings(repo_dir)
    # The `history` setting (and the default) is --repo-dir's own, relative to its root.
    given = history or os.environ.get(ENV)
    url = history_url(history, settings, _here() if given else root)
    read = read_history(url)
    runs = settings.results.history_runs
    steps = analyse(read, runs, settings.results.false_fail)
    ranges, notes = read_ranges(repo_dir, step_ranges(read, steps))
    prs = tuple(load_pr_results(p, url, runs) for p in pr_results)
    numbers = [pr.number for pr in prs]
    if len(set(numbers)) != len(numbers):
        raise UsageError("--pr-results: two tables are of one pull request")
    stamp = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    return SiteFacts(
        history=read,
        steps=steps,
        ranges=ranges,
        generated_at=stamp.isoformat().replace("+00:00", "Z"),
        prs=prs,
        verdicts=load_verdicts(verdicts) if verdicts is not None else stored_verdicts(url),
        notes=tuple(notes),
    )
