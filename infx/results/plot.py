"""Pareto plots: throughput per GPU against interactivity, this run against the baseline.

matplotlib is an optional extra (`infx[plot]`) imported here only, so commands that
draw nothing start without it.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

from infx.errors import UsageError
from infx.results.compare import MISSING, NEW, Comparison, ConfigComparison
from infx.yamlio import atomic_write

Curve = list[tuple[float, float, int]]  # (interactivity, throughput per GPU, conc)


def frontier(points: Curve) -> Curve:
    """The points no other point beats on both axes, by rising interactivity."""
    best: Curve = []
    for point in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or point[1] > best[-1][1]:
            best.append(point)
    return sorted(best)


def curves(config: ConfigComparison) -> tuple[Curve, Curve]:
    """(baseline, this run) points that carry both coordinates."""
    before: Curve = []
    after: Curve = []
    for point in config.points:
        for row, side in ((point.before, before), (point.after, after)):
            if row is None:
                continue
            x, y = row["metrics"].get("mean_intvty"), row["metrics"].get("tput_per_gpu")
            if x is not None and y is not None:
                side.append((x, y, point.conc))
    return before, after


def file_name(config: ConfigComparison) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", config.label).strip("-").lower()[:80]
    return f"{slug}-{hashlib.sha256(config.key.encode()).hexdigest()[:8]}.png"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise UsageError(
            "plots need matplotlib: pip install 'infx[plot]' (or leave out --plots)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw(comparison: Comparison, folder: Path) -> list[Path]:
    """One PNG per config with at least one plottable point; returns the files written."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for config in comparison.configs:
        before, after = curves(config)
        if not before and not after:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
        for points, label, style in ((before, "main", "s--"), (after, "PR", "o-")):
            if not points:
                continue
            color = "tab:gray" if label == "main" else "tab:blue"
            ax.scatter([p[0] for p in points], [p[1] for p in points], color=color, alpha=0.5)
            edge = frontier(points)
            ax.plot([p[0] for p in edge], [p[1] for p in edge], style, color=color, label=label)
            for x, y, conc in points:
                ax.annotate(
                    f"c{conc}",
                    (x, y),
                    textcoords="offset points",
                    xytext=(4, 4),
                    fontsize=7,
                    color=color,
                )
        status = {p.status for p in config.points}
        note = ", ".join(s for s in (NEW, MISSING) if s in status)
        ax.set_title(config.label + (f"  [{note} points]" if note else ""), fontsize=8)
        ax.set_xlabel("interactivity (tok/s/user)")
        ax.set_ylabel("throughput per GPU (tok/s)")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = folder / file_name(config)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        plt.close(fig)
        atomic_write(path, buffer.getvalue())
        written.append(path)
    return written
