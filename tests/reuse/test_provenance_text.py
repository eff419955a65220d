"""`infx results provenance` as text: a link of the chain the history does not hold (a run
stored before receipts, a verdict never recorded, a file absent at that commit) says so in
words; the reader never sees Python's `None`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from infx.reuse.provenance import lines

maybe = st.one_of(st.none(), st.just(""), st.text("abcdef0123456789", min_size=1, max_size=40))
number = st.one_of(st.none(), st.integers(1, 10**9))


def _chain(draw: st.DrawFn) -> dict:
    return {
        "run": {"id": draw(st.integers(1, 10**9)), "attempt": draw(number), "sha": draw(maybe), "reused_from": draw(number)},
        "point": {"key": "dsr1-fp8-mi355x-sglang", "kind": "throughput", "conc": 8},
        "measured_by": {"run": draw(st.integers(1, 10**9))} | {
            k: draw(maybe) for k in ("attempt", "event", "commit", "checked_out", "workflow")
        },
        "bytes": {
            "receipt": draw(maybe), "table": draw(maybe), "manifest": draw(maybe),
            "artifacts": {"results_bmk": 2}, "code": {"run-sweep.yml": draw(maybe)},
            "images": [{"image": "rocm/sgl", "digest": draw(maybe)}],
        },
        "approved": {
            "command": draw(maybe), "requested_by": draw(maybe), "permission": draw(maybe),
            "comment": draw(number),
            "budget": [{"environment": draw(maybe), "state": draw(maybe), "user": draw(maybe)}],
        },
        "verdict": draw(st.one_of(st.none(), st.fixed_dictionaries({
            "check": maybe, "conclusion": maybe, "status": maybe, "sha": maybe,
        }))),
        "merge": {"pr": draw(number), "commit": draw(maybe)},
        "verified": {"members": 3, "problems": []},
        "problems": [],
    }  # fmt: skip


@given(st.composite(_chain)())
def test_nothing_the_history_lacks_prints_as_none(found: dict) -> None:
    text = "\n".join(lines(found))
    assert "None" not in text
    assert "main run: " in text and "measured by: run " in text
