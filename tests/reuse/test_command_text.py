"""The command text itself as an attacker writes it: digits of other scripts, which `int()`
reads but a reviewer does not, and a number too long for `int()` to read at all. Each was
a wrong answer of the real gate first."""

from __future__ import annotations

import pytest

from infx.reuse.commands import reuse_command, stage_command
from tests.github.scenario import RUN, green_pr


def only_request(state, body: str, login: str = "maintainer", association: str = "MEMBER") -> None:
    state.comments[:] = [c for c in state.comments if "/reuse-sweep-run" not in c["body"]]
    state.add_comment(7, login, body, 150, association)


BENGALI = "".join(chr(0x09E6 + int(d)) for d in str(RUN))


@pytest.mark.parametrize("command", ["/reuse-sweep-run", "/use"])
def test_a_run_id_in_another_script_s_digits_pins_no_run(api, command) -> None:
    """Bengali digits read as 1039 to `int()`, not to a reviewer: the pinned run is what the
    comment shows in ASCII digits, or there is none."""
    pr = green_pr(api.state)
    only_request(pr.state, f"{command} {BENGALI}")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false", out
    assert "no authorized /reuse-sweep-run" in out["reuse-reason"], out["reuse-reason"]


def test_the_command_parsers_take_ascii_digits_only() -> None:
    wide = "".join(chr(0xFF10 + int(d)) for d in str(RUN))
    assert reuse_command(f"/reuse-sweep-run {wide}") is None
    assert reuse_command(f"/reuse-sweep-run {RUN}").run_id == RUN  # type: ignore[union-attr]
    assert stage_command(f"/stage-results {wide}") == (False, None)
    assert stage_command(f"/stage-results\u00a0{RUN}") == (False, None)  # a no-break space
    assert stage_command(f"/stage-results {RUN}") == (True, RUN)


def test_a_member_s_endless_run_id_does_not_stop_a_maintainer_s_request(api) -> None:
    """`int()` refuses more than 4,300 digits: a member without write permission (the
    pre-filter lets MEMBER through) posting one used to crash every decision on the PR."""
    pr = green_pr(api.state)
    pr.state.add_comment(7, "reader0", "/reuse-sweep-run " + "9" * 5000, 160, "MEMBER")
    _, out = pr.gate()
    assert out.get("reuse-enabled") == "true", out
    assert out["reuse-source-run-id"] == str(RUN)
    assert reuse_command("/reuse-sweep-run " + "9" * 5000) is None
    assert stage_command("/stage-results " + "9" * 5000) == (False, None)
