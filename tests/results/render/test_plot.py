"""Pareto plots: the frontier, honest axes, marked regressions, readable files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.results.verdict.curves import frontier
from infx.results.verdict.judge import compare
from tests.results.compare.test_compare import doc, point

PNG = b"\x89PNG\r\n\x1a\n"


def test_frontier_keeps_only_undominated_points() -> None:
    points = [(10, 900), (20, 700), (15, 600), (40, 300), (30, 350), (5, 800)]
    assert frontier(points) == [(10, 900), (20, 700), (30, 350), (40, 300)]


def _report():
    main = [point(c, tput=1000 / c, tpot_ms=5 * c) for c in (1, 4, 16)]
    pr = [point(c, tput=1100 / c, tpot_ms=4 * c) for c in (1, 4, 64)]
    pr[1]["metrics"]["tput_per_gpu"] *= 0.5  # conc 4 regressed
    other = [point(c, tput=1, tpot_ms=1, tp=8) for c in (4,)]
    return compare(pr + other, [doc(main)])


def test_one_png_per_config_readable_by_all(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from infx.results.render.plot import draw

    old = os.umask(0o077)  # a umask like a hardened runner's must not make them private
    try:
        written = draw(_report(), tmp_path)
    finally:
        os.umask(old)
    assert len(written) == 2 and len({p.name for p in written}) == 2
    for path in written:
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 5000
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_axes_start_at_zero_and_regressions_are_marked(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from infx.results.render import plot

    seen = []
    monkeypatch.setattr(plt, "close", lambda fig: seen.append(fig))
    plot.draw(_report(), tmp_path)
    fig = seen[0]
    (ax,) = fig.axes
    assert ax.get_xlim()[0] == 0 and ax.get_ylim()[0] == 0
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "regressed" in legend and "missing in this run" in legend
    labels = [t for t in ax.texts if t.get_text().startswith("c")]
    boxes = [t.get_window_extent() for t in labels]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_results_commands_load_without_matplotlib_pygithub_or_scipy() -> None:
    """The results core loads without them: only history, `compare` and `--plots` import
    them, on use."""
    code = (
        "import sys\n"
        "import infx.results.ingest.files, infx.results.ingest.collect, infx.results.ingest.process\n"
        "import infx.results.verdict.judge, infx.results.render.comment\n"
        "mods = ('matplotlib', 'github', 'scipy', 'ruptures')\n"
        "print(sorted(m for m in mods if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


coordinate = st.floats(min_value=0.1, max_value=1e4, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=30))
def test_frontier_properties(points: list[tuple[float, float]]) -> None:
    edge = frontier(points)

    def beats(a: tuple, b: tuple) -> bool:
        return a[0] >= b[0] and a[1] >= b[1] and (a[0] > b[0] or a[1] > b[1])

    assert edge and all(p in points for p in edge)
    assert not any(beats(q, p) for p in edge for q in points)
    assert all(p in edge or any(beats(q, p) or q == p for q in edge) for p in points)
    assert [p[0] for p in edge] == sorted(p[0] for p in edge)
