"""Results tables <-> history records, with no database: what a table must hold to be
stored (and to be main's: a push to the main branch, under GitHub's facts for its run),
how a row splits into config and point, and how they become a row again."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from infx import schemas
from infx.errors import ResultsError
from infx.results.ingest.process import FORMAT, result_errors
from infx.results.table import rows as results
from infx.results.table.keys import config_key, config_label
from infx.results.table.metrics import NUMBERS

if TYPE_CHECKING:  # storing a table reads no API
    from infx.github.values import Run


@dataclass(frozen=True)
class RunFacts:
    id: int
    attempt: int
    sha: str
    ref: str
    url: str
    created_at: datetime  # UTC, naive
    reused_from: int | None = None
    stamped: bool = False  # created_at is the first ingest's time: the table had none

    def document(self) -> results.RunInfo:
        """The `run` object of a results document."""
        facts: results.RunInfo = {
            "id": self.id,
            "attempt": self.attempt,
            "sha": self.sha,
            "ref": self.ref,
            "url": self.url,
            "created_at": self.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
            if not self.created_at.microsecond
            else self.created_at.isoformat() + "Z",
        }
        if self.reused_from is not None:
            facts["reused_from"] = self.reused_from
        return facts


@dataclass(frozen=True)
class Point:
    config: str  # config_key of the identity
    kind: str
    conc: int
    image: str
    fingerprint: str | None
    data: str  # the row less its identity, compact JSON
    variant: str = ""  # the master config that measured it (recipe.config-key), if known
    numbers: tuple[float | None, ...] = ()  # NUMBERS of its metrics (None: absent)

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.config, self.kind, self.conc, self.variant)


@dataclass(frozen=True)
class Table:
    """A results table checked for storing: its run, its configs, its points."""

    run: RunFacts
    configs: dict[str, results.Identity]  # key -> identity without conc
    points: list[Point]


def utc(text: str) -> datetime:
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def _not_finite(value: Any, where: str) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return where
    if isinstance(value, dict):
        for key, item in value.items():
            found = _not_finite(item, f"{where}.{key}")
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _not_finite(item, f"{where}.{index}")
            if found:
                return found
    return None


def _facts(doc: results.Table) -> RunFacts:
    run = results.run_of(doc)
    if not isinstance(run.get("id"), int):
        raise ResultsError(
            "the results table names no run: store a table that `infx results collect` "
            "wrote in a workflow run, or name the run with --run ID"
        )
    if not run.get("sha"):
        raise ResultsError(f"run {run['id']} names no commit (sha)")
    created = run.get("created_at")
    try:
        stamped = utc(created) if created else now()
    except (ValueError, OverflowError) as exc:  # the schema's pattern holds month 13, +99:99
        raise ResultsError(f"run {run['id']}: created_at {created!r} is no time: {exc}") from None
    return RunFacts(
        id=run["id"],
        attempt=run.get("attempt", 1),
        sha=run["sha"],
        ref=run.get("ref", ""),
        url=run.get("url", ""),
        created_at=stamped,
        reused_from=run.get("reused_from"),
        stamped=not created,
    )


def numbers(row: results.Row) -> tuple[float | None, ...]:
    """The row's metrics in NUMBERS order, as their columns hold them (None: absent)."""
    metrics = row.get("metrics")
    if not isinstance(metrics, dict):
        return (None,) * len(NUMBERS)
    return tuple(
        float(v)
        if isinstance(v := metrics.get(name), int | float) and not isinstance(v, bool)
        else None
        for name in NUMBERS
    )


def point(row: results.Row) -> tuple[str, results.Identity, Point]:
    """A row as (config key, identity without conc, point)."""
    identity = results.config_identity(row["identity"])
    body = {k: v for k, v in row.items() if k != "identity"}
    key = config_key(identity)
    data = json.dumps(body, separators=(",", ":"), allow_nan=False)
    recipe = row["recipe"]
    found = Point(
        key,
        row["kind"],
        row["identity"]["conc"],
        recipe["image"],
        recipe.get("recipe-fingerprint"),
        data,
        recipe.get("config-key", ""),
        numbers(row),
    )
    return key, identity, found


def _told_apart(points: list[Point]) -> list[Point]:
    """Two points of one identity that name no master config (tables from before rows
    carried it) are told apart by image, then by recipe fingerprint: two configs measuring
    the same identity are two points, not a table to refuse."""
    for tell in (_by_image, _by_fingerprint):
        count = Counter(found.key for found in points)
        points = [tell(found) if count[found.key] > 1 else found for found in points]
    return points


def _by_image(found: Point) -> Point:
    return found if found.variant else replace(found, variant=f"image:{found.image}")


def _by_fingerprint(found: Point) -> Point:
    if found.variant.startswith("image:") and found.fingerprint:
        return replace(found, variant=f"{found.variant} {found.fingerprint}")
    return found


def check(doc: Any) -> Table:
    """The table to store, or a ResultsError saying in one line why it cannot be stored."""
    if not isinstance(doc, dict):
        raise ResultsError("not an infx results table: not a JSON object")
    problems = result_errors(doc)
    if problems:
        problem = schemas.closest(problems[0])
        where = ".".join(str(p) for p in problem.absolute_path) or "document"
        raise ResultsError(f"not an infx results table: {where}: {schemas.brief(problem)}")
    table = cast(results.Table, doc)  # the schema accepted it
    facts = _facts(table)
    configs: dict[str, results.Identity] = {}
    points: list[Point] = []
    for index, row in enumerate(table["rows"]):
        try:
            key, identity, found = point(row)
        except ValueError:  # JSON has no NaN or infinity; say where it is
            bad = _not_finite(row, f"rows.{index}") or f"rows.{index}"
            raise ResultsError(f"not an infx results table: {bad} is not finite") from None
        configs[key] = identity
        points.append(found)
    points = _told_apart(points)
    seen: dict[tuple[str, str, int, str], int] = {}
    for index, found in enumerate(points):
        if found.key in seen:
            identity = configs[found.config]
            raise ResultsError(
                f"rows {seen[found.key]} and {index} measure one point twice ({found.kind}, "
                f"conc {found.conc} of {config_label(identity)})"
            )
        seen[found.key] = index
    return Table(facts, configs, points)


def rows(stored: list[tuple[results.Identity, int, str]]) -> list[results.Row]:
    """Stored points (identity without conc, conc, data) as results rows again. The texts
    are parsed as one JSON array: one parse instead of one per point."""
    parsed: list[dict[str, object]] = json.loads("[" + ",".join(d for _, _, d in stored) + "]")
    nested: dict[int, list[str]] = {}
    for (identity, conc, _), out in zip(stored, parsed, strict=True):
        inner = nested.get(id(identity))
        if inner is None:
            inner = nested[id(identity)] = [k for k, v in identity.items() if isinstance(v, dict)]
        copy: dict[str, object] = dict(identity)
        for key in inner:
            copy[key] = dict(cast(dict[str, object], copy[key]))
        copy["conc"] = conc
        out["identity"] = copy
    # Each was a row of a table the schema accepted, stored less its identity.
    return cast(list[results.Row], parsed)


def document(
    run: RunFacts, keyed: list[tuple[tuple[str, str, int, str], results.Row]]
) -> results.Table:
    """A results document of one stored run: rows in collect's order (kind, config, conc),
    given with their (kind, config key, conc, variant)."""
    keyed.sort(key=lambda item: item[0])
    return {"format": FORMAT, "run": run.document(), "rows": [r for _, r in keyed]}


def stamp(doc: Mapping[str, object], run: Run, branch: str) -> dict[str, object]:
    """The table as main run `run`, with GitHub's facts. A table of another run (a reused
    pull request sweep, republished) keeps that run's id as `reused_from`. ValueError when
    the table contradicts GitHub about its own run."""
    given = doc.get("run")
    own: Mapping[str, object] = given if isinstance(given, dict) else {}
    named, sha = own.get("id"), own.get("sha")
    if named == run.id and sha and sha != run.head_sha:
        raise ValueError(
            f"run {run.id}: its table names commit {str(sha)[:7]}, GitHub says {run.head_sha[:7]}"
        )
    facts: results.RunInfo = {
        "id": run.id,
        "attempt": run.run_attempt,
        "sha": run.head_sha,
        "ref": f"refs/heads/{branch}",
        "url": run.html_url,
        "created_at": run.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if isinstance(named, int) and named != run.id:
        facts["reused_from"] = named
    return {**doc, "run": facts}


def republished(doc: Mapping[str, object], run: Run) -> bool:
    """Whether main run `run`'s table is not its own (a reused pull request sweep, whose
    table the pull request's code wrote): it does not name `run` as the run that made it.
    Only the issuer's receipts of the reused merge vouch for such a table."""
    given = doc.get("run")
    return not (isinstance(given, dict) and given.get("id") == run.id)


def check_main_push(run: Run, branch: str) -> None:
    """Only pushes to the main branch go into the history, and only once GitHub says the
    run completed: a run attempted again since its table was made (a re-run started between
    the receipt check and the store) would stamp the new attempt on the old one's rows."""
    if run.event != "push" or run.head_branch != branch:
        raise ResultsError(
            f"run {run.id} is a {run.event} run on {run.head_branch or 'an unknown branch'}: "
            f"only pushes to {branch} go into the history"
        )
    if run.status != "completed":
        raise ResultsError(
            f"run {run.id} is {run.status} (attempt {run.run_attempt}): its results go into "
            "the history when that attempt completes (its own ingest stores them)"
        )


def main_table(doc: Mapping[str, object], run: Run | None, branch: str) -> Table:
    """The table to store (`doc` not checked yet): as the main run `run` with GitHub's facts
    when given one, and only when it ran on the main branch."""
    if run is not None:
        check_main_push(run, branch)
        try:
            doc = stamp(doc, run, branch)
        except ValueError as exc:
            raise ResultsError(str(exc)) from None
    checked = check(doc)
    if checked.run.ref != f"refs/heads/{branch}":
        raise ResultsError(
            f"run {checked.run.id} ran on {checked.run.ref or 'an unknown ref'}, not "
            f"refs/heads/{branch}: only main's runs go into the history"
        )
    return checked
