"""Pareto plots: throughput per GPU against interactivity, this run against main's level.

matplotlib is an optional extra (`infx[plot]`) imported here only, so commands that
draw nothing start without it. Both axes start at zero; regressed points are ringed in
red, missing points drawn hollow; concurrency labels sit beside the PR's points, pushed
apart when they would overlap; files are written readable by every user (0644), as the
upload step may run as another user.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import textwrap
from pathlib import Path

from infx.errors import UsageError
from infx.results.compare import MISSING, REGRESSED, interactivity
from infx.results.verdict import Config, Point, Report, frontier
from infx.yamlio import atomic_write

Curve = list[tuple[float, float, int]]  # (interactivity, throughput per GPU, conc)
MODE = 0o644

__all__ = ["curves", "draw", "file_name", "frontier"]


def _level(point: Point) -> tuple[float, float] | None:
    """Main's level of a compared point (from its checks), else main's newest row."""
    if point.checks:
        by_key = {c.metric.key: c for c in point.checks}
        x, y = by_key.get("median_intvty"), by_key.get("tput_per_gpu")
        if x and y and x.before and y.before:
            return x.before, y.before
    if point.main is not None:
        m = point.main.get("metrics", {})
        x, y = interactivity(m), m.get("tput_per_gpu")
        if x and y:
            return x, y
    return None


def curves(config: Config) -> tuple[Curve, Curve]:
    """(main, this run) points that carry both coordinates."""
    main: Curve = []
    mine: Curve = []
    for point in config.points:
        level = _level(point)
        if level is not None:
            main.append((*level, point.conc))
        if point.pr is not None:
            m = point.pr.get("metrics", {})
            x, y = interactivity(m), m.get("tput_per_gpu")
            if x and y:
                mine.append((x, y, point.conc))
    return main, mine


def file_name(config: Config) -> str:
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


def _label_offsets(points: Curve, ax) -> list[tuple[float, float]]:
    """Offsets in points for each label, stepped down while two labels would overlap."""
    placed: list[tuple[float, float]] = []
    offsets = []
    for x, y, _ in points:
        px, py = ax.transData.transform((x, y))
        dy = 5.0
        while any(abs(px - qx) < 28 and abs(py + dy - qy) < 9 for qx, qy in placed):
            dy -= 10.0
        placed.append((px, py + dy))
        offsets.append((5.0, dy))
    return offsets


def draw(report: Report, folder: Path) -> list[Path]:
    """One PNG per throughput config with a plottable point; returns the files written."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for config in report.configs:
        main, mine = curves(config)
        if not main and not mine:
            continue
        fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
        for points, label, style, color in (
            (main, "main (level)", "s--", "tab:gray"),
            (mine, "this run", "o-", "tab:blue"),
        ):
            if not points:
                continue
            edge = frontier([(x, y) for x, y, _ in points])
            ax.plot([p[0] for p in edge], [p[1] for p in edge], style, color=color, label=label)
            ax.scatter([p[0] for p in points], [p[1] for p in points], color=color, alpha=0.5)
        status = {p.conc: p for p in config.points}
        lost = [(x, y) for x, y, c in main if status[c].status == MISSING]
        if lost:
            ax.scatter(
                *zip(*lost, strict=True),
                s=90,
                facecolors="none",
                edgecolors="tab:orange",
                linewidths=1.5,
                label="missing in this run",
            )
        worse = [(x, y) for x, y, c in mine if status[c].verdict == REGRESSED]
        if worse:
            ax.scatter(
                *zip(*worse, strict=True),
                s=140,
                facecolors="none",
                edgecolors="red",
                linewidths=2,
                label="regressed",
            )
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.margins(x=0.08, y=0.12)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        fig.canvas.draw()
        for (x, y, conc), offset in zip(mine, _label_offsets(mine, ax), strict=True):
            ax.annotate(
                f"c{conc}",
                (x, y),
                textcoords="offset points",
                xytext=offset,
                fontsize=7,
                color="tab:blue",
            )
        title = f"{config.label}: {config.verdict.replace('-', ' ')}"
        ax.set_title("\n".join(textwrap.wrap(title, 90)), fontsize=8)
        ax.set_xlabel("interactivity (tok/s/user)")
        ax.set_ylabel("throughput per GPU (tok/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = folder / file_name(config)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        plt.close(fig)
        atomic_write(path, buffer.getvalue())
        os.chmod(path, MODE)
        written.append(path)
    return written
