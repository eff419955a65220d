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
from types import ModuleType
from typing import TYPE_CHECKING

from infx.errors import UsageError
from infx.results.table.metrics import interactivity
from infx.results.verdict.curves import frontier
from infx.results.verdict.report import Config, Point, Report
from infx.results.verdict.words import MISSING, REGRESSED
from infx.yamlio import atomic_write

if TYPE_CHECKING:  # matplotlib loads only when plots are drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Curve = list[tuple[float, float, int]]  # (interactivity, throughput per GPU, conc)
MODE = 0o644

__all__ = ["curves", "draw", "draw_each", "file_name", "frontier"]


def _level(point: Point) -> tuple[float, float] | None:
    """Main's level of a compared point (from its checks), else main's newest row."""
    if point.checks:
        by_key = {c.metric.key: c for c in point.checks}
        cx, cy = by_key.get("median_intvty"), by_key.get("tput_per_gpu")
        if cx and cy and cx.before and cy.before:
            return cx.before, cy.before
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


def _pyplot() -> ModuleType:
    try:
        import matplotlib
    except ImportError:
        raise UsageError(
            "plots need matplotlib: pip install 'infx[plot]' (or leave out --plots)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label_offsets(
    points: Curve, ax: Axes, placed: list[tuple[float, float]], below: bool = False
) -> list[tuple[float, float]]:
    """Offsets in points for each label (above right, or below right for main's), stepped
    away while it would overlap a label already `placed` (display coordinates)."""
    offsets = []
    step = -11.0 if below else 11.0
    for x, y, _ in points:
        px, py = ax.transData.transform((x, y))
        dy = -12.0 if below else 5.0
        while any(abs(px - qx) < 30 and abs(py + dy - qy) < 10 for qx, qy in placed):
            dy += step
        placed.append((px, py + dy))
        offsets.append((5.0, dy))
    return offsets


def draw(report: Report, folder: Path) -> list[Path]:
    """One PNG per throughput config with a plottable point; returns the files written."""
    written, failed = draw_each(report, folder)
    if failed:
        raise RuntimeError(failed[0])
    return written


def draw_each(report: Report, folder: Path) -> tuple[list[Path], list[str]]:
    """`draw`, one config at a time: a config whose plot fails is named (config: error)
    and the others are still drawn. No text drawn parses math (`$...$` in a config name
    is a name, not a formula)."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    written, failed = [], []
    for config in report.configs:
        main, mine = curves(config)
        if not main and not mine:
            continue
        fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
        try:
            written.append(_draw(fig, ax, config, main, mine, folder))
        except Exception as exc:  # one plot's failure stops neither the others nor the verdict
            said = str(exc).strip().splitlines()
            failed.append(
                f"{config.label}: {type(exc).__name__}" + (f": {said[0]}" if said else "")
            )
        finally:
            plt.close(fig)
    return written, failed


def _draw(fig: Figure, ax: Axes, config: Config, main: Curve, mine: Curve, folder: Path) -> Path:
    """One config's plot, written to `folder`."""
    for points, label, style, color in (
        (main, "main (level)", "s--", "tab:gray"),
        (mine, "this run", "o-", "tab:blue"),
    ):
        if not points:
            continue
        ordered = sorted(points, key=lambda p: p[2])  # the measured curve, by concurrency
        ax.plot(
            [p[0] for p in ordered],
            [p[1] for p in ordered],
            style,
            color=color,
            label=label,
            alpha=0.8,
        )
        edge = frontier([(x, y) for x, y, _ in points])
        if len(edge) > 1:
            ax.plot(
                [p[0] for p in edge],
                [p[1] for p in edge],
                "-",
                color=color,
                linewidth=3,
                alpha=0.25,
            )
    status = {p.conc: p for p in config.points}
    lost = [(x, y) for x, y, c in main if status[c].status == MISSING]
    if lost:
        ax.scatter(
            [x for x, _ in lost],
            [y for _, y in lost],
            s=90,
            facecolors="none",
            edgecolors="tab:orange",
            linewidths=1.5,
            label="missing in this run",
        )
    worse = [(x, y) for x, y, c in mine if status[c].verdict == REGRESSED]
    if worse:
        ax.scatter(
            [x for x, _ in worse],
            [y for _, y in worse],
            s=140,
            facecolors="none",
            edgecolors="red",
            linewidths=2,
            label="regressed",
        )
    xs = [p[0] for p in main + mine]
    ys = [p[1] for p in main + mine]
    ax.set_xlim(0, max(xs) * 1.12)
    ax.set_ylim(0, max(ys) * 1.15)
    fig.canvas.draw()
    placed: list[tuple[float, float]] = []
    for points, color, below in ((mine, "tab:blue", False), (main, "tab:gray", True)):
        offsets = _label_offsets(points, ax, placed, below)
        for (x, y, conc), offset in zip(points, offsets, strict=True):
            ax.annotate(
                f"c{conc}",
                (x, y),
                textcoords="offset points",
                xytext=offset,
                fontsize=7,
                color=color,
                parse_math=False,
            )
    title = f"{config.label}: {config.verdict.replace('-', ' ')}"
    ax.set_title("\n".join(textwrap.wrap(title, 90)), fontsize=8, parse_math=False)
    ax.set_xlabel("interactivity (tok/s/user)")
    ax.set_ylabel("throughput per GPU (tok/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = folder / file_name(config)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    atomic_write(path, buffer.getvalue())
    os.chmod(path, MODE)
    return path
