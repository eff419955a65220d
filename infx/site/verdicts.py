"""The verdict history page: which PRs were judged, how, whether a regression was
acknowledged (and by whom), and whether main reused the PR's sweep."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infx.site.model import Run, VerdictRecord


def verdicts_doc(records: Sequence[VerdictRecord], runs: Sequence[Run]) -> dict[str, Any]:
    """One row per verdict document, newest PR first; `reused_by` names the main run that
    republished the judged run's sweep (the history's `reused_from`)."""
    reused = {run.reused_from: run.index for run in runs if run.reused_from is not None}
    rows = []
    ordered = sorted(records, key=lambda r: (-r.pr, -(r.run_id or 0), r.name))
    for record in ordered:
        doc = record.doc
        gate = doc.get("gate") or {}
        ack = gate.get("acknowledged")
        rows.append(
            {
                "pr": record.pr,
                "run": record.run_id,
                "file": record.name,
                "verdict": doc.get("verdict"),
                "passed": bool(gate.get("passed")),
                "failing": bool(gate.get("failing")),
                "ack": {"by": ack.get("by"), "who": ack.get("who"), "url": ack.get("url")}
                if isinstance(ack, dict)
                else None,
                "points": doc.get("points") or {},
                "configs": doc.get("configs_by_verdict") or {},
                "history_runs": (doc.get("method") or {}).get("history_runs"),
                "reused_by": reused.get(record.run_id) if record.run_id is not None else None,
            }
        )
    return {"verdicts": rows}
