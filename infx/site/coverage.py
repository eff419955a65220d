"""The coverage page: which configs main has measured and when last, and what a newer run
no longer covers (a concurrency an older run of the config measured and its latest did
not; a config its family's newer run left out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infx.results.table.keys import family_key
from infx.site.model import ConfigHistory, Run
from infx.site.shape import model_name, scenario_name


def coverage_doc(configs: Sequence[ConfigHistory], runs: Sequence[Run]) -> dict[str, Any]:
    newest_of_family: dict[str, int] = {}
    for config in configs:
        if config.points:
            family = family_key(config.kind, config.identity)
            newest_of_family[family] = max(newest_of_family.get(family, -1), max(config.runs))
    rows = []
    measured_configs = [c for c in configs if c.points]
    total = len(runs)
    ordered = sorted(measured_configs, key=lambda c: (-(total - 1 - max(c.runs)), c.label))
    for config in ordered:
        measured = config.runs
        last = measured[-1]
        latest = sorted(c for c, s in config.points.items() if last in s.runs)
        dropped = sorted(c for c, s in config.points.items() if last not in s.runs)
        family_last = newest_of_family[family_key(config.kind, config.identity)]
        rows.append(
            {
                "slug": config.slug,
                "label": config.label,
                "kind": config.kind,
                "page": [model_name(config.identity), scenario_name(config.identity)],
                "runs": len(measured),
                "first": measured[0],
                "last": last,
                "behind": (len(runs) - 1) - last,
                "concs": latest,
                "dropped": dropped,
                # A newer run of the same family (model, hardware, framework, precision,
                # scenario) did not measure this config.
                "left_out_by": family_last if family_last > last else None,
            }
        )
    return {"newest": len(runs) - 1 if runs else None, "configs": rows}
