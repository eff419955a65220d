"""Pareto plots: the frontier, and one real PNG per config."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.results.compare import compare
from infx.results.plot import frontier
from tests.results.test_compare import point

PNG = b"\x89PNG\r\n\x1a\n"


def test_frontier_keeps_only_undominated_points() -> None:
    points = [
        (10, 900, 64),
        (20, 700, 32),
        (15, 600, 48),
        (40, 300, 8),
        (30, 350, 16),
        (5, 800, 128),
    ]
    assert frontier(points) == [(10, 900, 64), (20, 700, 32), (30, 350, 16), (40, 300, 8)]


def test_one_png_per_config(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from infx.results.plot import draw

    main = [point(c, tput=1000 / c, tpot_ms=5 * c) for c in (1, 4, 16)]
    pr = [point(c, tput=1100 / c, tpot_ms=4 * c) for c in (1, 4, 16, 64)]
    other = [point(c, tput=1, tpot_ms=1, tp=8) for c in (4,)]
    written = draw(compare(pr + other, [("m", main)]), tmp_path)
    assert len(written) == 2 and len({p.name for p in written}) == 2
    for path in written:
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 5000


def test_results_commands_load_without_matplotlib_or_pygithub() -> None:
    """The results core loads without them: only `compare` and `--plots` import them, on use."""
    code = (
        "import sys\n"
        "import infx.results.files, infx.results.collect, infx.results.process\n"
        "import infx.results.compare, infx.results.render\n"
        "print(sorted(m for m in ('matplotlib', 'github') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


coordinate = st.floats(min_value=0.1, max_value=1e4, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(coordinate, coordinate, st.integers(1, 512)), min_size=1, max_size=30))
def test_frontier_properties(points: list[tuple[float, float, int]]) -> None:
    edge = frontier(points)

    def beats(a: tuple, b: tuple) -> bool:
        return a[0] >= b[0] and a[1] >= b[1] and (a[0] > b[0] or a[1] > b[1])

    assert edge and all(p in points for p in edge)
    assert not any(beats(q, p) for p in edge for q in points)
    assert all(p in edge or any(beats(q, p) or q[:2] == p[:2] for q in edge) for p in points)
    assert [p[0] for p in edge] == sorted(p[0] for p in edge)
