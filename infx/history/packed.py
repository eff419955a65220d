"""A run's points of one series as one value (`run_series.numbers`): the rows (conc,
*NUMBERS) as little-endian float64, NaN where a number is NULL, ordered by conc.

A comparison reads 40,000 points against a 200-run history; as columns that is 400,000
driver values to build one by one, as these it is 5,000 byte strings read as one array.
The points' own columns stay what ingest, migrations and SQL read."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from infx.results.table.metrics import NUMBERS

if TYPE_CHECKING:
    import numpy as np

WIDTH = 1 + len(NUMBERS)  # conc, then the numbers
_NAN = float("nan")


def pack(points: Iterable[Sequence[Any]]) -> bytes:
    """(conc, *NUMBERS) rows, None for a number not measured, as stored."""
    ordered = sorted(points, key=lambda p: int(p[0]))
    values = [_NAN if v is None else float(v) for p in ordered for v in p]
    if any(len(p) != WIDTH for p in ordered):
        raise ValueError(f"a packed point holds {WIDTH} values")
    return struct.pack(f"<{len(values)}d", *values)


def unpack(blobs: Sequence[bytes | memoryview]) -> tuple[np.ndarray, np.ndarray]:
    """(the rows of all `blobs` as one (n, WIDTH) array, how many rows each held)."""
    import numpy as np

    sizes = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    if (sizes % (8 * WIDTH)).any():
        raise ValueError(f"a packed series is whole rows of {WIDTH} float64 values")
    table = np.frombuffer(b"".join(blobs), dtype="<f8").reshape(-1, WIDTH)
    return table.astype(float), sizes // (8 * WIDTH)
