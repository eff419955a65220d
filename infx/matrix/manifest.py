"""What a sweep measured: the record a run keeps of its plan and of every input its jobs read.

The planning job writes it beside the plan; a reuse decision computes the same record for
what merges and grants reuse only when the two are equal, field for field. One function
(`build`) makes both, so "what was measured" and "what merges" are never computed two
ways. Configs are kept as parsed, so comments and formatting never count and values do;
a difference is named down to the config key and field, the runner label or the file.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from infx.digest import canonical as canonical
from infx.digest import digest as digest
from infx.digest import sha256 as sha256
from infx.matrix.rows import MatrixPlan, MatrixRow, PlanDocument, buckets, recipe_path

if TYPE_CHECKING:
    from infx.matrix.plan import Plan

# /2: files hold submodule commits, every input the jobs run (the workflow and what it
# calls, .gitattributes, infx's code where it lives here), and job-files matching nothing.
# /3: the changelog entries the sweep ran for (republish copies its changelog-metadata).
FORMAT = "infx-sweep-manifest/3"
ARTIFACT = "sweep-manifest"
FILE = "sweep-manifest.json"
# Options that change what the jobs measure; the others (canary first, fail fast) only
# change the order jobs run in or when they stop.
MEASURED_OPTIONS = ("trim-conc", "all-evals", "evals-only", "agentx-fast")
# Differences named in a reason before the rest are counted.
SHOWN = 3


@dataclass(frozen=True)
class SweepOptions:
    """The options a sweep ran with, as resolved from its labels through settings."""

    event: str  # push | pull_request
    label: str  # the primary label's role; "" for a push
    trim_conc: bool
    all_evals: bool
    evals_only: bool
    agentx_fast: bool
    reusable: bool


def _plain(value: Any) -> Any:
    """JSON data with the same meaning: YAML 1.1 dates become ISO strings, keys strings."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def file_digest(data: bytes | None) -> str | None:
    return None if data is None else sha256(data)


def plan_rows(plan: PlanDocument) -> dict[str, list[MatrixRow]]:
    """The rows of each job family, without `changelog_metadata` (refs and pr-links are
    not measured)."""
    return {name: rows for name, rows in buckets(plan).items() if name != "canary"}


def entries_of(plan: MatrixPlan) -> list[dict[str, Any]]:
    """The changelog entries a plan ran for, as its changelog-metadata records them (what
    republish copies as main's), without their pr-link: a placeholder the merge helper
    canonicalizes after the sweep, and the merge's own number."""
    metadata: Mapping[str, Any] = cast(Mapping[str, Any], plan).get("changelog_metadata") or {}
    found: list[Mapping[str, Any]] = metadata.get("entries") or []
    return [_plain({k: v for k, v in e.items() if k != "pr-link"}) for e in found]


def recipe_files(plan: PlanDocument, nodes: Mapping[str, list[str]]) -> list[str]:
    """The recipe script each row runs, on every node of its runner label: the node name
    picks the GPU part of the script's name, as benchmark-tmpl.yml does."""
    found: set[str] = set()
    for rows in plan_rows(plan).values():
        for row in rows:
            for node in nodes.get(row["runner"]) or [""]:
                found.add(recipe_path(row, node))
    return sorted(found)


def build(
    plan: Plan,
    configs: Mapping[str, Any],
    nodes: Mapping[str, list[str]],
    files: Mapping[str, str | None],
    options: SweepOptions,
    refs: tuple[str, str] = ("", ""),
    unmatched: Sequence[str] = (),
    unrecorded: Sequence[str] = (),
) -> dict[str, Any]:
    """The manifest of a sweep: `configs` are the selected configs as parsed, `nodes` the
    runners file's labels, `files` the digest of every input the jobs read
    (`infx.matrix.inputs`), `unmatched` the job-files patterns that matched nothing,
    `unrecorded` what the workflow runs that no record holds (then it is not reusable)."""
    rows = plan_rows(plan.as_json())
    labels = sorted({row["runner"] for family in rows.values() for row in family})
    measured = {
        "options": {
            "trim-conc": options.trim_conc,
            "all-evals": options.all_evals,
            "evals-only": options.evals_only,
            "agentx-fast": options.agentx_fast,
        },
        "plan": {
            "digest": digest(
                {k: sorted(canonical(r).decode() for r in v) for k, v in rows.items()}
            ),
            "rows": {name: len(family) for name, family in rows.items()},
        },
        "configs": {key: _plain(configs[key]) for key in plan.selected},
        "runners": {label: list(nodes.get(label) or []) for label in labels},
        "files": {name: files[name] for name in sorted(files)},
        "entries": entries_of(plan.as_json()),
    }
    sweep: dict[str, Any] = {
        "event": options.event,
        "label": options.label,
        "reusable": options.reusable and not unrecorded,
        "base": refs[0],
        "head": refs[1],
        "unmatched": list(unmatched),
    }
    if unrecorded:
        sweep["unrecorded"] = list(unrecorded)
    return {
        "format": FORMAT,
        "sweep": sweep,
        "measured": measured,
        "digest": digest(measured),
    }


# --- comparing ------------------------------------------------------------------------


def _show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _paths(run: Any, merge: Any, where: str) -> Iterable[str]:
    """Where two parsed values differ, as `a.b[2].c: x -> y`, depth first."""
    if isinstance(run, dict) and isinstance(merge, dict):
        for key in sorted(set(run) | set(merge)):
            inner = f"{where}.{key}" if where else key
            if key not in run:
                yield f"{inner}: added ({_show(merge[key])})"
            elif key not in merge:
                yield f"{inner}: removed (was {_show(run[key])})"
            else:
                yield from _paths(run[key], merge[key], inner)
    elif isinstance(run, list) and isinstance(merge, list) and len(run) == len(merge):
        for index, (a, b) in enumerate(zip(run, merge, strict=True)):
            yield from _paths(a, b, f"{where}[{index}]")
    elif run != merge or type(run) is not type(merge):
        yield f"{where or 'value'}: {_show(run)} -> {_show(merge)}"


def differences(run: Mapping[str, Any], merge: Mapping[str, Any]) -> list[str]:
    """What the run measured that differs from what merges, most telling first: options,
    then configs (key and field), runner labels, files, the plan's rows (a config
    difference usually explains them), and the changelog entries it ran for."""
    a, b = run["measured"], merge["measured"]
    found = [
        f"option {name}: {_show(a['options'].get(name))} at the run, "
        f"{_show(b['options'].get(name))} at merge"
        for name in MEASURED_OPTIONS
        if a["options"].get(name) != b["options"].get(name)
    ]
    for key in sorted(set(a["configs"]) | set(b["configs"])):
        if key not in b["configs"]:
            found.append(f"config {key}: measured by the run, not selected by what merges")
        elif key not in a["configs"]:
            found.append(f"config {key}: selected by what merges, not measured by the run")
        else:
            found += [
                f"config {key}: {p}" for p in _paths(a["configs"][key], b["configs"][key], "")
            ]
    for label in sorted(set(a["runners"]) | set(b["runners"])):
        if a["runners"].get(label) != b["runners"].get(label):
            found.append(
                f"runner {label}: nodes {_show(a['runners'].get(label))} at the run, "
                f"{_show(b['runners'].get(label))} at merge"
            )
    for name in sorted(set(a["files"]) | set(b["files"])):
        if name not in a["files"] or name not in b["files"]:
            side = "the run" if name in a["files"] else "what merges"
            found.append(f"file {name}: read only by {side}")
        elif a["files"][name] != b["files"][name]:
            found.append(_file_difference(name, a["files"][name], b["files"][name]))
    if a["plan"]["digest"] != b["plan"]["digest"]:
        counts = ", ".join(
            f"{name} {a['plan']['rows'].get(name, 0)} -> {b['plan']['rows'].get(name, 0)}"
            for name in sorted(set(a["plan"]["rows"]) | set(b["plan"]["rows"]))
            if a["plan"]["rows"].get(name) != b["plan"]["rows"].get(name)
        )
        found.append(f"plan rows differ ({counts or 'same counts, other rows'})")
    if a.get("entries") != b.get("entries"):
        # Last: what republish copies as main's changelog-metadata, not what the jobs ran.
        found.append(_entries_difference(a.get("entries"), b.get("entries")))
    return found


def _entries_difference(run: Any, merge: Any) -> str:
    """The changelog entries that differ: the first field, or how many there are."""
    if isinstance(run, list) and isinstance(merge, list) and len(run) == len(merge):
        paths = list(_paths(run, merge, ""))
        more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
        return f"changelog entry {paths[0]}{more}" if paths else "changelog entries differ"
    count = [len(v) if isinstance(v, list) else 0 for v in (run, merge)]
    return f"changelog entries: {count[0]} at the run, {count[1]} at merge"


def _file_difference(name: str, run: str | None, merge: str | None) -> str:
    """A file that differs, a submodule by its commits."""
    if (run or "").startswith("commit:") or (merge or "").startswith("commit:"):
        old, new = ((v or "none").removeprefix("commit:")[:12] for v in (run, merge))
        return f"submodule {name}: commit {old} at the run, {new} at merge"
    return f"file {name}: differs"


def summarize(found: list[str]) -> str:
    """The first differences, and how many more."""
    shown = "; ".join(found[:SHOWN])
    more = len(found) - SHOWN
    return f"{shown}; and {more} more" if more > 0 else shown


def evaluated(manifest: Mapping[str, Any]) -> bool:
    """Whether the sweep planned eval rows (then its eval results must exist)."""
    rows = manifest["measured"]["plan"]["rows"]
    return any(rows.get(name) for name in rows if "evals" in name)


def lineage(
    source: Mapping[str, Any],
    files_now: Mapping[str, str | None],
    rows: Sequence[MatrixRow],
    rerun: Sequence[MatrixRow],
    nodes: Mapping[str, list[str]],
) -> dict[str, Any]:
    """The manifest of a rerun's lineage: the source's, with the digests of the files the
    rerun's jobs read (`files_now`, read at its checkout by `infx.matrix.inputs`). The lineage's results are one measurement only when
    every row that reads a changed file ran again in the rerun (`rerun`, of all `rows`): a
    changed job file touches every row, a changed recipe the rows that run it. Otherwise the
    record says the lineage is not reusable."""
    files = {name: files_now.get(name) for name in source["measured"]["files"]}
    changed = {n for n, d in files.items() if d != source["measured"]["files"][n]}
    measured = {**source["measured"], "files": files}
    sweep = dict(source["sweep"])
    if changed:
        again = {canonical(row) for row in rerun}
        recipes = {
            recipe_path(row, node) for row in rows for node in nodes.get(row["runner"]) or [""]
        }
        touches_all = bool(changed - recipes)
        stale = [
            row
            for row in rows
            if canonical(row) not in again
            and (
                touches_all
                or any(recipe_path(row, n) in changed for n in nodes.get(row["runner"]) or [""])
            )
        ]
        if stale:
            sweep["reusable"] = False
    return {**source, "sweep": sweep, "measured": measured, "digest": digest(measured)}
