"""The command line's contract with its user: exit codes, and what a crash looks like.

An exception infx does not expect is a bug in infx, never "a rule is broken": the process
exits 3 with one line naming where the traceback went, as the help promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A real command added to the real group, failing as a bug would: a lookup of a key that is
# not there, deep inside the command, through `infx.cli.main` as the console script runs it.
BUGGY = """
import sys
from infx.cli import cli, main

@cli.command("lookup")
def lookup():
    settings = {"changelog": "perf-changelog.yaml"}
    print(settings["main-branch"])

sys.argv = ["infx", "lookup"]
main()
"""


def crash(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "XDG_"))
    }
    base.update(HOME=str(tmp_path / "home"), **env)
    script = tmp_path / "buggy.py"
    script.write_text(BUGGY)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=base, cwd=tmp_path
    )


def test_an_unexpected_exception_exits_3_with_one_line_and_a_log(tmp_path: Path) -> None:
    done = crash(tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    log = tmp_path / "home" / ".cache" / "infx" / "infx.log"
    assert line.startswith("infx: internal error: KeyError: 'main-branch'")
    assert str(log) in line and "INFX_DEBUG=1" in line
    text = log.read_text()
    assert "Traceback (most recent call last)" in text
    assert 'settings["main-branch"]' in text and "infx lookup" in text
    assert [p.name for p in log.parent.iterdir()] == ["infx.log"]  # no temp file left


def test_the_log_follows_xdg_cache_home_and_the_newest_crash(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    crash(tmp_path, XDG_CACHE_HOME=str(cache))
    done = crash(tmp_path, XDG_CACHE_HOME=str(cache))
    assert done.returncode == 3
    assert str(cache / "infx" / "infx.log") in done.stderr
    assert (cache / "infx" / "infx.log").read_text().count("Traceback") == 1


def test_infx_debug_prints_the_traceback(tmp_path: Path) -> None:
    done = crash(tmp_path, INFX_DEBUG="1")
    assert done.returncode == 3
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("infx: internal error: KeyError")


def test_an_unwritable_cache_still_gives_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    done = crash(tmp_path, XDG_CACHE_HOME=str(blocker))
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert "KeyError: 'main-branch'" in line and "INFX_DEBUG=1" in line
    assert "could not write" in line


def test_inside_actions_the_traceback_is_a_folded_group(tmp_path: Path) -> None:
    """The runner's home is gone when the job ends: the log is the job's own."""
    done = crash(tmp_path, GITHUB_ACTIONS="true")
    assert done.returncode == 3
    lines = done.stderr.splitlines()
    assert lines[0].startswith("infx: internal error: KeyError")
    assert lines[1] == "::group::infx traceback" and lines[-1] == "::endgroup::"
    assert any('settings["main-branch"]' in line for line in lines)
