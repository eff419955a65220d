"""Turn the changelog entries of a diff into a sweep plan: matrix rows per bucket.

Pure: takes entries, master configs and runner hardware; returns data. The passes
follow InferenceX's planner so that plans match it row for row:

- entries with `all-evals` go first; each entry resolves its `config-keys` in
  pattern order, then master-config order;
- throughput: unless the entry (or a label) asks for evals only or all evals, the
  entry's configs are expanded for the scenarios no earlier entry already planned
  for them, grouped by that scenario set;
- evals: a second pass per entry over the scenarios not yet evaluated, where eval
  points are chosen across the configs of the group (`infx.matrix.evals`);
- `append-only` entries plan only points absent from the base revision and no evals,
  `no-evals` entries (formats that know the key) no evals;
- `--trim-conc` then keeps the lowest concurrency of every throughput curve (or, in
  formats that trim per deployment shape, of every shape), and each throughput row gets
  its `recipe-fingerprint`.

Rows are built and printed as the repository's format (`infx.formats`) says.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from infx.changelog.check import resolve_keys
from infx.errors import ConfigError
from infx.formats import PR2707, Format
from infx.matrix.contract import printed, printed_entry
from infx.matrix.evals import drop_below_prefill_ep, eval_rows
from infx.matrix.expand import (
    SCENARIOS,
    Hardware,
    RawRow,
    expand,
    fingerprint,
    is_agentic,
    is_multinode,
    recipe_identity,
    row_concs,
    seq_len_name,
)
from infx.matrix.load import MasterConfigs
from infx.matrix.options import PlanOptions
from infx.matrix.recipes import RecipeReader
from infx.matrix.rows import EvalBucket, MatrixPlan, MatrixRow, empty_plan

STANDARD_SEQ = ("1k1k", "8k1k")


@dataclass(frozen=True)
class Revision:
    """Master configs and runner hardware at one revision, the format they are read in,
    and how to read the revision's srt-slurm recipes (for node counts; None: not read)."""

    masters: MasterConfigs
    hardware: Mapping[str, Hardware]
    fmt: Format = PR2707
    recipes: RecipeReader | None = None


@dataclass
class Plan:
    buckets: MatrixPlan
    selected: list[str] = field(default_factory=list)

    def as_json(self) -> MatrixPlan:
        return self.buckets


def entry_configs(entry: Mapping[str, Any], keys: list[str]) -> list[str]:
    """An entry's config keys: each pattern's matches in master-config order, first seen wins."""
    found: dict[str, None] = {}
    for pattern in entry.get("config-keys") or []:
        matched = resolve_keys(pattern, keys)
        if not matched:
            raise ConfigError(f"config key {pattern!r} matches no master config")
        found.update(dict.fromkeys(matched))
    return list(found)


def _scenarios(entry: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(entry.get("scenario-type") or SCENARIOS)


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _curve(row: RawRow, fmt: Format) -> Any:
    return _frozen(recipe_identity(row, fmt))


def trim_conc(rows: list[RawRow]) -> list[RawRow]:
    """Keep the lowest concurrency of each single-node curve (rows equal but for conc and
    exp-name), where it stands; a multi-node concurrency list shrinks to its minimum."""
    keep: dict[Any, int] = {}
    out: list[RawRow | None] = []
    for row in rows:
        if is_multinode(row):
            out.append({**row, "conc": [min(row["conc"])]} if len(row["conc"]) > 1 else row)
            continue
        curve = _frozen({k: v for k, v in row.items() if k not in ("conc", "exp-name")})
        if curve not in keep:
            keep[curve] = len(out)
            out.append(row)
            continue
        held = out[keep[curve]]
        assert held is not None
        if row["conc"] < held["conc"]:
            out[keep[curve]] = None
            keep[curve] = len(out)
            out.append(row)
        else:
            out.append(None)
    return [row for row in out if row is not None]


_NOT_SHAPE = frozenset(
    {
        "conc",
        "exp-name",
        "run-eval",
        "eval-only",
        "eval-conc",
        "eval-all-concs",
        "eval-framework",
        "eval-suite",
    }
)


def _lowest(row: RawRow) -> int:
    return min(row_concs(row))


def trim_shape(rows: list[RawRow]) -> list[RawRow]:
    """Keep the lowest concurrency of each deployment shape (rows equal but for point and
    eval fields), where it stands: a multi-node row first shrinks to its lowest
    concurrency, so the one-concurrency rows of a multi-node agentic topology collapse to
    one too; the earliest row wins a tie."""
    out: list[RawRow] = []
    groups: dict[Any, list[int]] = {}
    for row in rows:
        if is_multinode(row) and isinstance(row["conc"], list):
            row = {**row, "conc": [_lowest(row)]}
            if "eval-conc" in row:
                row["eval-conc"] = _lowest(row)
        key = _frozen({k: v for k, v in row.items() if k not in _NOT_SHAPE})
        groups.setdefault(key, []).append(len(out))
        out.append(row)
    keep = {min(members, key=lambda i: _lowest(out[i])) for members in groups.values()}
    return [row for i, row in enumerate(out) if i in keep]


def _series(row: RawRow) -> tuple[Any, ...]:
    """The results-page curve a row belongs to; an appended point must join an existing one."""
    agentic = is_agentic(row)
    prefill, decode = row.get("prefill") or {}, row.get("decode") or {}
    return (
        row.get("model"),
        row.get("model-prefix"),
        row.get("precision"),
        row.get("framework"),
        row.get("runner"),
        bool(row.get("disagg", False)),
        agentic,
        None if agentic else row.get("isl"),
        None if agentic else row.get("osl"),
        row.get("kv-offloading", "none") not in (None, "", "none"),
        "" if agentic else row.get("spec-decoding", "none"),
        prefill.get("hardware"),
        decode.get("hardware"),
    )


def only_new_points(
    base_rows: list[RawRow], head_rows: list[RawRow], fmt: Format = PR2707
) -> list[RawRow]:
    """Rows (and concurrencies) absent from the base; every base point must survive unchanged."""
    before: dict[Any, set[int]] = defaultdict(set)
    after: dict[Any, set[int]] = defaultdict(set)
    for row in base_rows:
        before[_curve(row, fmt)].update(row_concs(row))
    for row in head_rows:
        after[_curve(row, fmt)].update(row_concs(row))
    if not before:
        raise ConfigError("append-only needs an existing curve in the base revision")
    if before.keys() - after.keys():
        raise ConfigError(
            "append-only may only add points: an existing recipe was changed or removed"
        )
    for curve, concs in before.items():
        lost = concs - after[curve]
        if lost:
            raise ConfigError(
                f"append-only may only add points: concurrencies {sorted(lost)} disappeared"
            )
    fresh: list[RawRow] = []
    emitted: dict[Any, set[int]] = defaultdict(set)
    for row in head_rows:
        curve = _curve(row, fmt)
        new = []
        for conc in row_concs(row):
            if conc not in before.get(curve, set()) and conc not in emitted[curve]:
                emitted[curve].add(conc)
                new.append(conc)
        if new:
            fresh.append({**row, "conc": new if isinstance(row["conc"], list) else new[0]})
    if not fresh:
        raise ConfigError("append-only entry adds no benchmark point")
    images: dict[tuple[Any, ...], set[Any]] = defaultdict(set)
    for row in base_rows:
        images[_series(row)].add(row.get("image"))
    for row in fresh:
        if images.get(_series(row), set()) != {row.get("image")}:
            raise ConfigError(
                "append-only points must join an existing results curve with one unchanged image"
            )
    return fresh


def check_append_only_scope(
    base: MasterConfigs, head: MasterConfigs, scopes: Mapping[str, set[str]]
) -> None:
    """An append-only change may touch only the selected configs and scenarios."""
    unrelated = sorted(
        key
        for key in set(base.keys()) | set(head.keys())
        if key not in scopes and not _same_config(base, head, key)
    )
    if unrelated:
        raise ConfigError(
            f"append-only change also edits configs its entry does not select: {unrelated}"
        )
    for key, allowed in scopes.items():
        before, after = base.config(key), head.config(key)
        old, new = before.get("scenarios", {}), after.get("scenarios", {})
        if old.keys() != new.keys():
            raise ConfigError(f"append-only change adds or removes a scenario of {key!r}")
        outside = old.keys() - allowed
        if outside and {k: v for k, v in before.items() if k != "scenarios"} != {
            k: v for k, v in after.items() if k != "scenarios"
        }:
            raise ConfigError(
                f"append-only change edits config-wide fields of {key!r}, which also "
                "affect scenarios outside its entry"
            )
        for scenario in outside:
            if old[scenario] != new[scenario]:
                raise ConfigError(
                    f"append-only change edits {key!r} / {scenario!r}, outside its entry"
                )


def is_append_only(plan: MatrixPlan) -> bool:
    """Whether the plan's entries are append-only (they never share a sweep with others)."""
    meta = plan.get("changelog_metadata") or {}
    return any(entry.get("append-only") for entry in meta.get("entries") or [])


def check_append_only_inputs(changed: Sequence[str]) -> None:
    """An append-only sweep measures its new points with the recipe that measured the base's:
    a recipe script or job file the change edits would measure the curve anew, old points
    unmeasured beside new ones."""
    if changed:
        shown = ", ".join(changed[:3]) + (
            f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        )
        raise ConfigError(
            f"append-only change also edits what its jobs run ({shown}): the base's points "
            "were measured by the old files; plan the entry without append-only"
        )


def _same_config(base: MasterConfigs, head: MasterConfigs, key: str) -> bool:
    """Whether a config reads the same at both revisions; identical bytes need no parsing."""
    if (key in base) != (key in head):
        return False
    if base.text_of(key)[0] == head.text_of(key)[0]:
        return True
    return bool(base.config(key) == head.config(key))


def _check_entries(entries: Sequence[Mapping[str, Any]], options: PlanOptions, fmt: Format) -> None:
    """Keys the format does not know, and no-evals against the eval labels."""
    for entry in entries:
        unknown = sorted(str(k) for k in entry if k not in fmt.entry_keys)
        if unknown:
            raise ConfigError(
                f"changelog key(s) {', '.join(unknown)} unknown to InferenceX format {fmt}"
            )
    if any(e.get("no-evals") for e in entries) and (options.all_evals or options.evals_only):
        raise ConfigError(
            "no-evals entries cannot share a sweep with the all-evals or evals-only labels"
        )


def _check_append_only_mix(entries: Sequence[Mapping[str, Any]], options: PlanOptions) -> bool:
    flags = [bool(e.get("append-only")) for e in entries]
    if not any(flags):
        return False
    if not all(flags):
        raise ConfigError("append-only entries cannot share a sweep with other entries")
    if options.all_evals or options.evals_only:
        raise ConfigError("an append-only sweep cannot use the all-evals or evals-only labels")
    return True


def _unseen_groups(
    configs: list[str], scenarios: tuple[str, ...], seen: dict[str, set[str]]
) -> dict[tuple[str, ...], list[str]]:
    """Configs grouped by the scenarios of this entry no earlier entry covered for them."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for key in configs:
        unseen = tuple(s for s in SCENARIOS if s in scenarios and s not in seen[key])
        if unseen:
            seen[key].update(unseen)
            groups.setdefault(unseen, []).append(key)
    return groups


def _generate(keys: Iterable[str], revision: Revision, scenarios: tuple[str, ...]) -> list[RawRow]:
    rows: list[RawRow] = []
    for key in keys:
        config = revision.masters.config(key)
        rows.extend(
            expand(key, config, revision.hardware, scenarios, revision.fmt, revision.recipes)
        )
    return rows


def _bucket(plan: MatrixPlan, row: RawRow, fmt: Format) -> None:
    shape = plan["multi_node"] if is_multinode(row) else plan["single_node"]
    name = "agentic" if is_agentic(row) else seq_len_name(row["isl"], row["osl"])
    shape.setdefault(name, []).append(printed(row, fmt))


def _eval_bucket(row: RawRow) -> EvalBucket:
    if is_multinode(row):
        return "multinode_agentic_evals" if is_agentic(row) else "multinode_evals"
    return "agentic_evals" if is_agentic(row) else "evals"


def build_plan(
    entries: list[dict[str, Any]],
    head: Revision,
    options: PlanOptions | None = None,
    base: Callable[[], Revision] | None = None,
    refs: tuple[str, str] = ("", ""),
) -> Plan:
    """The plan for `entries` against the configs at `head`; `base` is asked for only
    when an entry is append-only."""
    options = options or PlanOptions()
    fmt = head.fmt
    _check_entries(entries, options, fmt)
    keys = head.masters.keys()
    resolved = [(entry, entry_configs(entry, keys)) for entry in entries]
    base_revision: Revision | None = None
    if _check_append_only_mix(entries, options):
        if base is None:
            raise ConfigError("append-only entries need the base revision's configs")
        base_revision = base()
        scopes: dict[str, set[str]] = defaultdict(set)
        for entry, configs in resolved:
            for key in configs:
                scopes[key].update(_scenarios(entry))
        missing = sorted(k for k in scopes if k not in base_revision.masters)
        if missing:
            raise ConfigError(f"append-only configs must exist in the base revision: {missing}")
        check_append_only_scope(base_revision.masters, head.masters, scopes)

    resolved.sort(key=lambda item: not item[0].get("all-evals"))
    benchmark_seen: dict[str, set[str]] = defaultdict(set)
    eval_seen: dict[str, set[str]] = defaultdict(set)
    throughput: list[RawRow] = []
    evals: list[RawRow] = []
    for entry, configs in resolved:
        scenarios = _scenarios(entry)
        if not (options.evals_only or entry.get("evals-only") or entry.get("all-evals")):
            for group, members in _unseen_groups(configs, scenarios, benchmark_seen).items():
                rows = _generate(members, head, group)
                if entry.get("append-only"):
                    assert base_revision is not None
                    rows = only_new_points(_generate(members, base_revision, group), rows, fmt)
                throughput.extend(rows)
        if entry.get("append-only") or entry.get("no-evals"):
            continue
        wide = options.all_evals or bool(entry.get("all-evals"))
        for group, members in _unseen_groups(configs, scenarios, eval_seen).items():
            chosen = eval_rows(_generate(members, head, group), wide, fmt)
            evals.extend(drop_below_prefill_ep(chosen, entry.get("eval-min-prefill-ep")))

    if options.trim_conc:
        throughput = trim_shape(throughput) if fmt.trim == "shape" else trim_conc(throughput)

    buckets = empty_plan()
    for row in throughput:
        _bucket(buckets, {**row, "recipe-fingerprint": fingerprint(row, fmt, head.recipes)}, fmt)
    for row in evals:
        buckets[_eval_bucket(row)].append(printed(row, fmt))
    buckets["changelog_metadata"] = {
        "base_ref": refs[0],
        "head_ref": refs[1],
        "entries": [printed_entry(e, fmt) for e in entries],
    }
    selected = list(dict.fromkeys(key for _, configs in resolved for key in configs))
    return Plan(buckets, selected)


def canary(plan: MatrixPlan) -> tuple[MatrixRow | None, MatrixPlan]:
    """The lowest-concurrency single-node 1k1k/8k1k throughput row, and the plan without it."""
    best: tuple[int, str, int] | None = None
    for name in STANDARD_SEQ:
        for index, row in enumerate(plan["single_node"].get(name, [])):
            conc = row["conc"]
            if row.get("run-eval") or not isinstance(conc, int):
                continue
            candidate = (conc, name, index)
            if best is None or candidate[0] < best[0]:
                best = candidate
    if best is None:
        return None, plan
    _, name, index = best
    rows = plan["single_node"][name]
    remaining: MatrixPlan = {
        **plan,
        "single_node": {**plan["single_node"], name: rows[:index] + rows[index + 1 :]},
    }
    return rows[index], remaining
