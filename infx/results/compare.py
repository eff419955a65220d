"""Match a run's results with a baseline's and judge every change against a noise threshold.

Points match by identity (image and recipe fingerprint are not part of it). A metric
change beyond the threshold in the good direction is `improved`, in the bad direction
`regressed`, otherwise `noise`. Accuracy changes are judged against their standard
errors instead: beyond 1.96 combined standard errors (95%) they count.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

IMPROVED, REGRESSED, NOISE, UNKNOWN = "improved", "regressed", "noise", "n/a"
COMPARED, NEW, MISSING = "compared", "new", "missing"
DEFAULT_THRESHOLD = 2.0
_Z95 = 1.96


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    scale: float = 1.0  # stored value * scale = displayed value (seconds -> ms)


METRICS = (
    Metric("tput_per_gpu", "Throughput/GPU", "tok/s", True),
    Metric("mean_ttft", "TTFT", "ms", False, 1000.0),
    Metric("mean_tpot", "TPOT", "ms", False, 1000.0),
    Metric("mean_itl", "ITL", "ms", False, 1000.0),
    Metric("mean_intvty", "Interactivity", "tok/s/user", True),
)


@dataclass(frozen=True)
class Change:
    metric: Metric
    before: float | None
    after: float | None
    pct: float | None
    verdict: str


@dataclass(frozen=True)
class Point:
    conc: int
    status: str
    changes: tuple[Change, ...] = ()
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


@dataclass(frozen=True)
class ScoreChange:
    conc: int
    task: str
    metric: str
    filter: str
    status: str
    before: float | None
    before_stderr: float | None
    after: float | None
    after_stderr: float | None
    verdict: str


@dataclass(frozen=True)
class ConfigComparison:
    key: str
    label: str
    identity: dict[str, Any]
    baseline: str | None
    points: tuple[Point, ...] = ()
    scores: tuple[ScoreChange, ...] = ()

    def verdicts(self) -> list[str]:
        return [c.verdict for p in self.points for c in p.changes] + [
            s.verdict for s in self.scores
        ]

    @property
    def regressed(self) -> bool:
        return REGRESSED in self.verdicts()


@dataclass(frozen=True)
class Comparison:
    configs: tuple[ConfigComparison, ...]
    threshold: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    def count(self, what: str) -> int:
        """Points per status (new/missing/compared) or metric changes per verdict."""
        if what in (COMPARED, NEW, MISSING):
            return sum(1 for c in self.configs for p in c.points if p.status == what) + sum(
                1 for c in self.configs for s in c.scores if s.status == what
            )
        return sum(v == what for c in self.configs for v in c.verdicts())


def config_key(identity: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in identity.items() if k != "conc"}, sort_keys=True)


def _worker_label(role: str, worker: dict[str, Any]) -> str:
    text = f"{role}{worker['num-worker']}x tp{worker['tp']}"
    if worker["ep"] != 1:
        text += f" ep{worker['ep']}"
    if worker["dp-attn"]:
        text += " dpa"
    return text


def config_label(identity: dict[str, Any]) -> str:
    """`dsv41flash fp4 vllm · mi355x · tp8 · mtp · kv none · agentic` and the like."""
    parts = [
        f"{identity['model-prefix']} {identity['precision']} {identity['framework']}",
        identity["hardware"],
    ]
    if identity["scenario"] == "fixed-seq-len":
        parts.append(f"{identity['isl']}/{identity['osl']}")
    if identity["multinode"]:
        parts.append(_worker_label("P", identity["prefill"]))
        parts.append(_worker_label("D", identity["decode"]))
    else:
        par = f"tp{identity['tp']}"
        for key, short in (("pp", "pp"), ("ep", "ep"), ("dcp-size", "dcp"), ("pcp-size", "pcp")):
            if identity[key] != 1:
                par += f" {short}{identity[key]}"
        if identity["dp-attn"]:
            par += " dpa"
        parts.append(par)
    if identity["spec-decoding"] != "none":
        parts.append(identity["spec-decoding"])
    if identity["scenario"] == "agentic-coding":
        kv = identity["kv-offloading"]
        if "kv-offload-backend" in identity:
            kv += f" ({identity['kv-offload-backend']})"
        parts.append(f"kv {kv}")
        parts.append("agentic")
    for key in ("router", "kv-p2p-transfer"):
        if key in identity:
            parts.append(f"{key} {identity[key]}")
    if identity["disagg"]:
        parts.append("disagg")
    if identity["runner"] not in (identity["hardware"],):
        parts.append(f"on {identity['runner']}")
    return " · ".join(parts)


def judge(metric: Metric, before: float | None, after: float | None, threshold: float) -> Change:
    if before is None or after is None or before <= 0:
        return Change(metric, before, after, None, UNKNOWN)
    pct = (after - before) / before * 100.0
    if abs(pct) <= threshold:
        verdict = NOISE
    elif (pct > 0) == metric.higher_is_better:
        verdict = IMPROVED
    else:
        verdict = REGRESSED
    return Change(metric, before, after, pct, verdict)


def judge_score(
    before: float, before_se: float | None, after: float, after_se: float | None
) -> str:
    if before_se is None or after_se is None:
        return UNKNOWN if before != after else NOISE
    spread = math.sqrt(before_se**2 + after_se**2)
    diff = after - before
    if spread == 0:
        return NOISE if diff == 0 else (IMPROVED if diff > 0 else REGRESSED)
    if abs(diff) <= _Z95 * spread:
        return NOISE
    return IMPROVED if diff > 0 else REGRESSED


def _index(rows: Iterable[dict[str, Any]], notes: list[str], side: str) -> dict[str, dict]:
    """(kind, config) -> conc -> row; a point measured twice keeps its first row."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for row in rows:
        key = f"{row['kind']}|{config_key(row['identity'])}"
        points = out.setdefault(key, {})
        conc = row["identity"]["conc"]
        if conc in points:
            notes.append(
                f"{side}: {config_label(row['identity'])} conc {conc} was measured twice; "
                "the first row is used"
            )
            continue
        points[conc] = row
    return out


def _points(
    after: dict[int, dict[str, Any]], before: dict[int, dict[str, Any]], threshold: float
) -> list[Point]:
    points = []
    for conc in sorted(set(after) | set(before)):
        a, b = after.get(conc), before.get(conc)
        if a is None:
            points.append(Point(conc, MISSING, before=b))
        elif b is None:
            points.append(Point(conc, NEW, after=a))
        else:
            changes = tuple(
                judge(m, b["metrics"].get(m.key), a["metrics"].get(m.key), threshold)
                for m in METRICS
            )
            points.append(Point(conc, COMPARED, changes, b, a))
    return points


def _scores(after: dict[int, dict], before: dict[int, dict]) -> list[ScoreChange]:
    out = []
    for conc in sorted(set(after) | set(before)):
        a = {
            (s["task"], s["metric"], s["filter"]): s
            for s in (after.get(conc) or {}).get("accuracy", [])
        }
        b = {
            (s["task"], s["metric"], s["filter"]): s
            for s in (before.get(conc) or {}).get("accuracy", [])
        }
        for key in sorted(set(a) | set(b)):
            sa, sb = a.get(key), b.get(key)
            status = COMPARED if sa and sb else (NEW if sa else MISSING)
            verdict = (
                judge_score(sb["value"], sb.get("stderr"), sa["value"], sa.get("stderr"))
                if sa and sb
                else UNKNOWN
            )
            out.append(
                ScoreChange(
                    conc,
                    *key,
                    status,
                    sb["value"] if sb else None,
                    sb.get("stderr") if sb else None,
                    sa["value"] if sa else None,
                    sa.get("stderr") if sa else None,
                    verdict,
                )
            )
    return out


def compare(
    rows: list[dict[str, Any]],
    baselines: list[tuple[str, list[dict[str, Any]]]],
    threshold: float = DEFAULT_THRESHOLD,
) -> Comparison:
    """Compare `rows` with the first baseline (newest first) that holds each of their configs.

    Only configs present in `rows` are reported: a baseline run measures many configs a
    change does not touch.
    """
    notes: list[str] = []
    mine = _index(rows, notes, "this run")
    sources = [(name, _index(base, notes, name)) for name, base in baselines]
    configs: dict[str, dict[str, Any]] = {}
    for key, points in mine.items():
        kind, ckey = key.split("|", 1)
        entry = configs.setdefault(
            ckey,
            {"identity": next(iter(points.values()))["identity"], "points": [], "scores": []},
        )
        origin, before = next(((n, idx[key]) for n, idx in sources if key in idx), (None, {}))
        if origin is not None:
            entry.setdefault("baseline", origin)
        if kind == "throughput":
            entry["points"] = _points(points, before, threshold)
        else:
            entry["scores"] = _scores(points, before)
    out = []
    for ckey, entry in configs.items():
        ident = {k: v for k, v in entry["identity"].items() if k != "conc"}
        out.append(
            ConfigComparison(
                key=ckey,
                label=config_label(entry["identity"]),
                identity=ident,
                baseline=entry.get("baseline"),
                points=tuple(entry["points"]),
                scores=tuple(entry["scores"]),
            )
        )
    out.sort(key=lambda c: (not c.regressed, c.label, c.key))
    return Comparison(tuple(out), threshold, tuple(dict.fromkeys(notes)))


def configs_of(rows: Iterable[dict[str, Any]]) -> set[str]:
    return {f"{row['kind']}|{config_key(row['identity'])}" for row in rows}
