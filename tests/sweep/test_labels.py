"""`infx sweep mode` on event payloads that are not what GitHub sends: one line, never a
traceback."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.sweep.labels import decide_event


def _mode(tmp_path: Path, payload: bytes) -> object:
    path = tmp_path / "event.json"
    path.write_bytes(payload)
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
    }
    return CliRunner().invoke(cli, ["sweep", "mode"], env=env)


def test_a_payload_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    """It raised UnicodeDecodeError (exit 3); a payload that is not JSON was one line."""
    result = _mode(tmp_path, b'{"pull_request": "\xff"}')
    assert result.exit_code == 2, result.output
    assert "cannot read the event payload" in result.output and "Traceback" not in result.output


def test_a_pull_request_with_null_labels_has_none() -> None:
    """`"labels": null` raised TypeError (exit 3); it means no label, so no sweep."""
    payload = {"pull_request": {"number": 5, "labels": None}, "repository": {}}
    decision = decide_event("pull_request", payload)
    assert not decision.run and decision.label == ""
