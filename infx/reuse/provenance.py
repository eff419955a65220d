"""`infx results provenance`: from a number in main's history to the run that measured it,
the bytes it published, who approved, and the verdict that gated it.

`chain` is pure: it walks what the history holds (the main run, its receipts, the point)
and names every link that does not hold (a receipt missing, a run receipt of another run, a
merge receipt naming another source). `verify` compares a run receipt with the members of
the artifacts as GitHub serves them now (read by `fetch_members`, the edge).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from infx.errors import GitHubError, ResultsError, UsageError
from infx.history.receipts import Stored, stored_point, stored_run
from infx.matrix.manifest import digest
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.reuse.receipt import mismatches, table_digest
from infx.sweep.outcome import Outcome

# An artifact a receipt seals is downloaded whole to check it: at most this much.
MAX_ARTIFACT_BYTES = 512 << 20


def chain(stored: Stored) -> dict[str, Any]:
    """The chain of one main run (and point): which run, which bytes, who approved, what
    the verdict was, and every link that breaks. Nothing is read on trust: each receipt's
    digest is recomputed from what is stored, the stored points are recomputed into the
    digest the issuer sealed of the table, and each link names the digest of the next."""
    run, receipts = stored.run, stored.receipts
    sealed, merged = receipts.get("run"), receipts.get("merge")
    problems = [
        f"run {run['id']}: the stored {kind} receipt was rewritten (its digest is "
        f"{digest(doc)}, it was stored as {stored.digests.get(kind)})"
        for kind, doc in sorted(receipts.items())
        if digest(doc) != stored.digests.get(kind)
    ]
    measured_by = run["reused_from"] or run["id"]
    if sealed is None:
        problems.append(f"run {run['id']}: no run receipt is stored beside its rows")
    else:
        problems += _sealed_problems(run["id"], sealed, measured_by, stored.points)
    if run["reused_from"] is not None:
        problems += _merge_problems(run, merged, receipts.get("main"), sealed, measured_by)
    found: dict[str, Any] = {"point": stored.point, "run": run, "problems": problems}
    if sealed is not None:
        found["measured_by"] = {
            "run": sealed["run"]["id"],
            "attempt": sealed["run"]["attempt"],
            "event": sealed["run"]["event"],
            "commit": sealed["run"]["head_sha"],
            "checked_out": sealed["run"]["sha"],
            "workflow": sealed["run"]["workflow"],
            "issued_by": (sealed.get("issuer") or {}).get("run"),
            "checkout_by": (sealed.get("checkout") or {}).get("by"),
        }
        found["bytes"] = {
            "receipt": digest(sealed),
            "table": table_digest(sealed),
            "artifacts": {name: len(m) for name, m in sealed["artifacts"].items()},
            "previous": {name: len(m) for name, m in sealed["previous"].items()},
            "manifest": (sealed["manifest"] or {}).get("digest"),
            "code": sealed["code"],
            "images": _images(sealed, stored.point),
        }
    if merged is not None:
        found["approved"] = {
            "requested_by": merged["request"]["author"],
            "permission": merged["request"]["permission"],
            "comment": merged["request"]["comment"],
            "command": merged["request"]["command"],
            "budget": merged["approvals"],
        }
        found["verdict"] = merged["verdict"]
        found["merge"] = merged["merge"]
    return found


def _sealed_problems(
    run_id: int, sealed: Mapping[str, Any], measured_by: int, points: Iterable[Any]
) -> list[str]:
    """What breaks between the issuer's receipt of the measuring run and the stored rows."""
    from infx.reuse.issuer import points_digest

    if "issuer" not in sealed:
        return [f"run {run_id}: its run receipt is a run's own claim, not the issuer's"]
    if sealed["run"]["id"] != measured_by:
        return [
            f"run {run_id}: its run receipt is run {sealed['run']['id']}'s, but its rows "
            f"were measured by run {measured_by}"
        ]
    table = sealed.get("table")
    points = list(points)
    if table is None:
        return [f"run {run_id}: its run receipt seals no table, so its rows vouch for nothing"]
    if points_digest(points) != table["points"]:
        return [
            f"run {run_id}: its stored points are not the ones the issuer sealed "
            f"({len(points)} stored, {table['rows']} sealed, or other values)"
        ]
    return []


def _merge_problems(
    run: Mapping[str, Any],
    merged: Mapping[str, Any] | None,
    main: Mapping[str, Any] | None,
    sealed: Mapping[str, Any] | None,
    measured_by: int,
) -> list[str]:
    """What breaks between a reused merge's receipts: the merge receipt names the run
    receipt's digest, the issuer's receipt of this main run seals the merge receipt."""
    from infx.reuse.receipt import MERGE_ARTIFACT, MERGE_MEMBER

    if merged is None:
        return [f"run {run['id']} reused run {measured_by}: no merge receipt is stored"]
    problems = []
    source = merged["source"]
    if source["run"] != measured_by:
        problems.append(
            f"run {run['id']}: its merge receipt republished run {source['run']}, "
            f"its rows name run {measured_by}"
        )
    if merged["merge"]["commit"] != run["sha"]:
        problems.append(
            f"run {run['id']}: its merge receipt is of commit "
            f"{merged['merge']['commit'][:12]}, the run of {run['sha'][:12]}"
        )
    if sealed is not None and source["receipt"] != digest(sealed):
        problems.append(f"run {run['id']}: the run receipt stored is not the one the merge sealed")
    own = ((main or {}).get("artifacts") or {}).get(MERGE_ARTIFACT) or {}
    if main is None or "issuer" not in main or main["run"]["id"] != run["id"]:
        problems.append(f"run {run['id']}: the issuer's receipt of this run is not stored")
    elif own.get(MERGE_MEMBER) != digest(merged):
        problems.append(f"run {run['id']}: its merge receipt is not the one its receipt sealed")
    return problems


def _images(sealed: Mapping[str, Any], point: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The images the receipt's jobs recorded; for a point, only its own image's."""
    images = [dict(i) for i in sealed["images"]]
    if point is not None:
        wanted = ((point.get("data") or {}).get("recipe") or {}).get("image")
        images = [i for i in images if i["image"] == wanted]
    unique = {(i["image"], i["digest"]): i for i in images}
    return [{"image": k[0], "digest": k[1]} for k in sorted(unique, key=str)]


def verify(sealed: Mapping[str, Any], found: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What differs between a run receipt and its artifacts as downloaded (`found`: artifact
    name -> member digests; an artifact missing there is named)."""
    problems: list[str] = []
    for name, expected in sorted(sealed["artifacts"].items()):
        if name not in found:
            problems.append(f"{name}: not downloadable (expired, or never uploaded)")
            continue
        problems += mismatches(expected, found[name], name)
    return problems


def check_outcome(sealed: Mapping[str, Any], found: Mapping[str, Mapping[str, str]]) -> Outcome:
    """`infx receipt check`: the artifacts downloaded (`found`) against the receipt that
    sealed them; an error naming the first five differences. An artifact given that the
    receipt does not seal is a difference: checking only what a receipt chose to seal would
    let anything it left out through. No artifact at all is a usage error: a check that
    checked nothing must not say that what it did not check matches."""
    if not found:
        return Outcome(
            error=UsageError(
                f"no --artifact given: nothing was checked against run {sealed['run']['id']}'s "
                "receipt (name each downloaded artifact as NAME=PATH)"
            )
        )
    wanted = {k: v for k, v in sealed["artifacts"].items() if k in found}
    problems = [
        f"{name}: not sealed by the receipt" for name in sorted(found) if name not in wanted
    ]
    problems += verify({**sealed, "artifacts": wanted}, found)
    if problems:
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        return Outcome(error=ResultsError("; ".join(problems[:5]) + more))
    count = sum(len(m) for m in wanted.values())
    return Outcome(stdout=[f"{count} member(s) match run {sealed['run']['id']}'s receipt"])


class Downloads(Protocol):
    """The GitHub reads `fetch_members` needs (infx.github.client.GitHub has them)."""

    def run_artifacts_named(self, run_id: int, name: str) -> list[Any]: ...
    def download_artifact(self, artifact_id: int, target: str, max_bytes: int) -> int: ...


def fetch_members(gh: Downloads, run_id: int, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """The members of run `run_id`'s artifacts `names` as GitHub serves them now (an
    artifact that is gone or expired is left out)."""
    from infx.reuse.receipt_files import zip_members

    found: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="infx-provenance-") as tmp:
        for name in names:
            listed = [a for a in gh.run_artifacts_named(run_id, name) if not a.expired]
            if len(listed) != 1:
                continue
            target = Path(tmp) / f"{name}.zip"
            try:
                gh.download_artifact(listed[0].id, str(target), MAX_ARTIFACT_BYTES)
            except GitHubError:
                continue
            found[name] = zip_members(target.read_bytes(), f"artifact {name} of run {run_id}")
    return found


def issuer_problems(gh: Any, stored: Stored, main_branch: str) -> list[str]:
    """Each stored receipt of the issuer against what the issuer sealed, as GitHub serves it
    now (its attestation, or its issuer run's artifact): a receipt rewritten in the history
    has no attestation and no artifact of its digest."""
    from dataclasses import replace

    from infx.reuse.issue_facts import read_issued

    problems = []
    for kind in ("run", "main"):
        doc = stored.receipts.get(kind)
        if doc is None:
            continue
        own = doc["run"]
        run = replace(gh.run(own["id"]), run_attempt=own["attempt"])
        issued = read_issued(gh, run, main_branch)
        if issued.receipt is None or issued.digest != digest(doc):
            why = issued.problem or f"the issuer sealed {issued.digest}, it holds {digest(doc)}"
            problems.append(
                f"the stored {kind} receipt of run {own['id']} is not the issuer's: {why}"
            )
    return problems


def trace(
    url: str,
    target: str,
    conc: int | None,
    check: bool,
    repo: str | None,
    main_branch: str = "main",
) -> dict[str, Any]:
    """The chain of TARGET (a main run id, or a config key at concurrency `conc`) in the
    history at `url`; with `check`, the stored receipts checked against the issuer as GitHub
    serves them from `repo`, and the measuring run's artifacts downloaded and checked
    against its receipt."""
    from infx.history.database import require_existing

    require_existing(url)  # a path mistyped would otherwise be made an empty history
    if conc is None:
        number = decimal(target, below=SQLITE_INTEGER_END)  # isdecimal() took `٣` for 3
        if number is None:
            raise UsageError(
                f"{target!r}: give a run id (digits, below 2**63), or a config key and a concurrency"
            )
        stored = stored_run(url, number)
    else:
        stored = stored_point(url, target, conc) if conc < SQLITE_INTEGER_END else None
    if stored is None:
        raise UsageError(
            f"{target}{f' at concurrency {conc}' if conc else ''} is not in the history"
        )
    found = chain(stored)
    sealed = stored.receipts.get("run")
    if check and sealed is not None:
        from infx.context import repo_slug
        from infx.github.client import GitHub

        gh = GitHub(repo_slug(repo))
        problems = issuer_problems(gh, stored, main_branch)
        fetched = fetch_members(gh, sealed["run"]["id"], sealed["artifacts"])
        problems += verify(sealed, fetched)
        found["verified"] = {"members": sum(len(m) for m in fetched.values()), "problems": problems}
    return found


def broken(target: str, found: Mapping[str, Any]) -> ResultsError | None:
    """The exit of `results provenance`: 1 when a link of the chain breaks."""
    problems = found["problems"] or (found.get("verified") or {}).get("problems")
    if problems:
        return ResultsError(f"the chain of {target} breaks: {problems[0]}")
    return None


def _short(value: object) -> object:
    """A commit as people quote it: its first 12 characters."""
    return value[:12] if isinstance(value, str) else value


def _said(value: object, absent: str = "not recorded") -> str:
    """A value of the chain as text; one the history does not hold says so, never `None`."""
    return absent if value is None or value == "" else str(value)


def lines(found: Mapping[str, Any]) -> list[str]:
    """The chain as text, one link a line."""
    run = found["run"]
    out = []
    point = found.get("point")
    if point is not None:
        out.append(f"point: {point['key']} {point['kind']} at concurrency {point['conc']}")
    reused = f", republishing run {run['reused_from']}" if run["reused_from"] else ""
    out.append(
        f"main run: {run['id']} attempt {_said(run['attempt'])} of "
        f"{_said(_short(run['sha']), 'an unrecorded commit')}{reused}"
    )
    measured = found.get("measured_by")
    if measured:
        out.append(
            f"measured by: run {measured['run']} attempt {_said(measured['attempt'])} "
            f"({_said(measured['event'], 'event not recorded')}) of commit "
            f"{_said(_short(measured['commit']))}, checked out as "
            f"{_said(_short(measured['checked_out']))}, workflow {_said(measured['workflow'])}"
        )
    sealed = found.get("bytes")
    if sealed:
        members = sum(sealed["artifacts"].values())
        out.append(
            f"bytes: receipt {_said(sealed['receipt'])}; table {_said(sealed['table'])}; "
            f"{members} member(s) of {', '.join(sorted(sealed['artifacts'])) or 'no artifact'}; "
            f"manifest {_said(sealed['manifest'], 'none')}; {len(sealed['code'])} code file(s)"
        )
        out += [
            f"  code {name}: {_said(value, 'absent at that commit')}"
            for name, value in sorted(sealed["code"].items())
        ]
        out += [
            f"  image {i['image']}: {i['digest'] or 'no digest recorded'}" for i in sealed["images"]
        ]
    approved = found.get("approved")
    if approved:
        out.append(
            f"approved: {_said(approved['command'])} by {_said(approved['requested_by'])} "
            f"({_said(approved['permission'], 'permission not recorded')}) in comment "
            f"{_said(approved['comment'])}"
        )
        out += [
            f"  budget: {_said(a['environment'])} {_said(a['state'])} by {_said(a['user'])}"
            for a in approved["budget"]
        ]
        if not approved["budget"]:
            out.append("  budget: no approval needed or recorded")
    if "verdict" in found:
        verdict = found["verdict"]
        out.append(
            "verdict: none recorded"
            if verdict is None
            else f"verdict: {_said(verdict['check'])} "
            f"{_said(verdict['conclusion'] or verdict['status'])} on {_said(_short(verdict['sha']))}"
        )
    if found.get("merge"):
        merge = found["merge"]
        out.append(f"merged: PR #{_said(merge['pr'], '?')} as {_said(_short(merge['commit']))}")
    checked = found.get("verified")
    if checked is not None:
        out.append(
            f"verified: {checked['members']} member(s) match the receipt"
            if not checked["problems"]
            else f"verified: {len(checked['problems'])} difference(s)"
        )
        out += [f"  {p}" for p in checked["problems"]]
    out += [f"broken: {p}" for p in found["problems"]]
    return out
