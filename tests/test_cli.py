"""The command line's contract with its user: exit codes, and what a crash looks like.

An exception infx does not expect is a bug in infx, never "a rule is broken": the process
exits 3 with one line naming where the traceback went, as the help promises."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from infx import __version__
from infx.cli import cli
from infx.errors import EXIT_CODES
from tests.conftest import ROOT, GitRepo

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
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "XDG_"))}
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


def test_control_characters_in_an_error_are_printed_escaped(tmp_path: Path) -> None:
    """Input reached the terminal raw through the error line: an ESC or BEL in a file name
    could retitle the window or clear the screen. The central printer escapes every control
    character but newline and tab, for infx's errors and for the system's (OSError)."""
    blocker = tmp_path / "f\x1b]0;pwned\x07"
    blocker.write_text("")
    (tmp_path / "jobs").mkdir()
    missing = CliRunner().invoke(
        cli, ["results", "collect", str(tmp_path / "t\x1b[2J"), "--out-dir", str(tmp_path)]
    )
    assert missing.exit_code == 2
    assert missing.output == f"infx: error: {tmp_path}/t\\x1b[2J: no such folder\n"
    unwritable = CliRunner().invoke(
        cli, ["results", "collect", str(tmp_path / "jobs"), "--out-dir", str(blocker / "out")]
    )
    assert unwritable.exit_code == 2
    line = unwritable.output.splitlines()[-1]  # after the warning that no job left a result
    assert line == f"infx: error: Not a directory: {tmp_path}/f\\x1b]0;pwned\\x07/out"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # click quoted these raw: the override reversed the rest of the line on a terminal
        # and the BEL rang it.
        (["sweep", "plan", "x\u202ey\x07"], "Got unexpected extra argument (x\\u202ey\\x07)"),
        (["sweep", "plan", "a\u202e", "b\x1b"], "Got unexpected extra arguments (a\\u202e b\\x1b)"),
        # ... and these through repr(), which escapes them as infx does.
        (["sweep", "plan", "--x\u202e\x07"], "No such option '--x\\u202e\\x07'"),
        (["sweep", "plan", "--format", "t\u202e\x1b"], "'t\\u202e\\x1b' is not one of"),
    ],
)
def test_clicks_usage_errors_show_arguments_escaped(args: list[str], said: str) -> None:
    """click's own usage errors quote the user's argument; they show it as infx's own error
    lines do (`errors.printable`), with the usage and exit 2 as before."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "\u202e" not in result.output and "\x07" not in result.output
    assert "\x1b" not in result.output
    assert said in result.output and result.output.startswith("Usage: cli sweep plan")


def test_control_characters_in_a_crash_are_printed_escaped(tmp_path: Path) -> None:
    """The crash's one line, and the traceback INFX_DEBUG prints, escape them too; the log
    keeps the message as it was."""
    script = tmp_path / "buggy.py"
    script.write_text(
        BUGGY.replace('print(settings["main-branch"])', 'raise RuntimeError("a\\x1b]0;x\\x07b")')
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), INFX_DEBUG="1")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert done.returncode == 3
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        "infx: internal error: RuntimeError: a\\x1b]0;x\\x07b ("
    )
    log = tmp_path / "home" / ".cache" / "infx" / "infx.log"
    assert "RuntimeError: a\x1b]0;x\x07b" in log.read_text()


# --- help: every command, as `infx ... --help` prints it --------------------------------


def every_command() -> list[tuple[tuple[str, ...], click.Command]]:
    """Each command and group `infx --help` leads to, with the words that reach it."""

    def walk(command: click.Command, path: tuple[str, ...]):
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                yield from walk(command.get_command(click.Context(command), name), (*path, name))

    return list(walk(cli, ()))


COMMANDS = every_command()
IDS = [" ".join(path) or "infx" for path, _ in COMMANDS]


def help_text(*path: str) -> str:
    result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_help_states_the_exit_codes_once(path, command) -> None:
    text = help_text(*path)
    assert " ".join(text.split()).count(" ".join(EXIT_CODES.split())) == 1
    # Once, and in the same words: no second listing of what each code means.
    assert text.count("Exit codes") == 1
    assert not re.search(r"(?i)\bexit 0\b", text), text


def test_the_readme_lists_the_exit_codes_once_as_the_help_does() -> None:
    """One listing for the reader of the README, saying what the help says."""
    from infx.errors import EXIT_INTERNAL, EXIT_USAGE, EXIT_VIOLATION

    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    listing = (
        f"Every command exits 0 when all is well, {EXIT_VIOLATION} when a rule is broken, "
        f"{EXIT_USAGE} on a usage or environment error"
    )
    assert readme.count(listing) == 1
    assert f"and {EXIT_INTERNAL} when infx itself fails" in readme
    assert len(re.findall(r"(?i)exits? (code )?[0-3] (when|on)", readme)) == 1
    help_words = " ".join(EXIT_CODES.split())
    for code, meaning in ((EXIT_VIOLATION, "rule is broken"), (EXIT_USAGE, "usage or environment"),
                          (EXIT_INTERNAL, "internal")):  # fmt: skip
        assert f"{code} a {meaning}" in help_words or f"{code} {meaning}" in help_words


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [
        f"infx {' '.join(path)} {param.opts[0]}"
        for path, command in COMMANDS
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert missing == []
    assert [" ".join(path) for path, command in COMMANDS if not command.help] == []


def test_every_repo_option_names_each_place_the_default_comes_from() -> None:
    repo_options = [
        (" ".join(path), param.help or "")
        for path, command in COMMANDS
        for param in command.params
        if "--repo" in getattr(param, "opts", ())
    ]
    assert len(repo_options) >= 10
    for where in ("infx.toml", "GITHUB_REPOSITORY", "upstream or origin remote"):
        assert [path for path, text in repo_options if where not in text] == [], where


def test_chunk_help_names_the_buckets_plans_and_the_sweep_workflow_have(repo) -> None:
    from infx.matrix.rows import buckets
    from tests.actions.harness import load
    from tests.conftest import entry

    repo.commit("entry", **{"perf-changelog.yaml": repo.read().decode() + "\n" + entry()})
    planned = json.loads(repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD").stdout)
    text = re.sub(r"-\s+", "-", " ".join(help_text("sweep", "chunk").split()))
    named = re.search(r"One of: ([a-z, -]+)\.", text)
    assert named is not None
    listed = named.group(1).split(", ")
    used = [job["with"]["bucket"] for job in load("run-sweep.yml")["jobs"].values()
            if "bucket" in job.get("with", {})]  # fmt: skip
    assert sorted(listed) == sorted(buckets(planned)) == sorted(used)


def test_sweep_mode_help_names_the_outputs_it_writes() -> None:
    from infx.sweep.labels import PUSH

    # The help wraps after hyphens: `fail-` at a line's end, `fast` on the next.
    text = re.sub(r"-\s+", "-", " ".join(help_text("sweep", "mode").split()))
    assert [name for name in PUSH.outputs() if f"`{name}`" not in text] == []
    assert "label" in text and "GITHUB_OUTPUT" in text


def test_apply_decision_names_the_commands_whose_decision_it_applies() -> None:
    deciders = [
        " ".join(path)
        for path, command in COMMANDS
        if any("--decide-only" in getattr(p, "opts", ()) for p in command.params)
    ]
    # Reruns have an acting command of their own: it may start workflows, not react alone.
    applied_by = {"apply-decision": ["reuse ack", "stage-results"],
                  "sweep dispatch-rerun": ["rerun-failed", "sweep rerun"]}  # fmt: skip
    assert sorted(deciders) == sorted(n for names in applied_by.values() for n in names)
    for acting, names in applied_by.items():
        text = " ".join(help_text(*acting.split()).split())
        assert all(f"`infx {name} --decide-only`" in text for name in names), text
    (line,) = [ln for ln in help_text().splitlines() if ln.strip().startswith("apply-decision")]
    assert "--decide-only" in line


def test_merge_and_the_merge_driver_point_at_each_other() -> None:
    """`infx merge` merges a pull request on GitHub; the driver is what git runs."""
    (line,) = [ln for ln in help_text().splitlines() if ln.strip().startswith("merge ")]
    assert "pull request" in line and "GitHub" in line
    merge = " ".join(help_text("merge").split())
    driver = " ".join(help_text("changelog", "merge-driver").split())
    assert "`infx changelog merge-driver`" in merge
    assert "`infx merge`" in driver and "git runs" in driver


def _shadow(tmp_path: Path, cli_module: bool) -> Path:
    """A folder holding another package named infx, as InferenceX's checkout does."""
    shadow = tmp_path / "InferenceX"
    (shadow / "infx").mkdir(parents=True)
    (shadow / "infx" / "__init__.py").write_text('__version__ = "0.0.1"\n')
    if cli_module:
        (shadow / "infx" / "cli.py").write_text("def main():\n    print('InferenceX CLI')\n")
    return shadow


@pytest.fixture
def command() -> str:
    """The installed `infx` script of this environment (`pip install -e .`)."""
    script = Path(sys.executable).parent / "infx"
    if "infx_launcher" not in script.read_text():
        pytest.fail(f"{script} predates infx_launcher: reinstall (pip install -e '.[test]')")
    return str(script)


def test_version_names_the_package_and_its_distribution(command: str) -> None:
    shown = subprocess.run([command, "--version"], capture_output=True, text=True, check=True)
    lines = shown.stdout.splitlines()
    assert lines[0] == f"infx, version {__version__}"
    assert lines[1] == f"package: {ROOT / 'infx'}"
    assert lines[2].startswith(f"distribution: infx {__version__}")
    assert shown.stderr == ""


@pytest.mark.parametrize("cli_module", [True, False], ids=["with a cli", "without"])
def test_a_shadowing_infx_package_is_named_and_not_run(
    command: str, tmp_path: Path, cli_module: bool
) -> None:
    shadow = _shadow(tmp_path, cli_module)
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    shown = subprocess.run([command, "--version"], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"package: {ROOT / 'infx'}" in shown.stdout
    assert "InferenceX CLI" not in shown.stdout and "Traceback" not in shown.stderr
    (warning,) = shown.stderr.splitlines()
    assert warning.startswith("infx: warning: `import infx` finds another package named infx")
    assert str(shadow / "infx") in warning and "InferenceX" in warning
    # Every command runs this infx, not the other.
    ran = subprocess.run([command, "sweep", "--help"], capture_output=True, text=True, env=env)
    assert ran.returncode == 0 and "Plan and check benchmark sweeps." in ran.stdout


def test_one_format_vocabulary_across_commands() -> None:
    """`--format` meant text/json/github in one command and json/summary in another: each
    command now speaks the same words (text for people, json for programs, github for
    Actions annotations); `summary` is only sweep plan's old name for text."""
    seen = set()
    for path, command in every_command():
        for param in command.params:
            if "--format" in getattr(param, "opts", []):
                choices = set(param.type.choices)  # type: ignore[attr-defined]
                old = {"summary"} if path == ("sweep", "plan") else set()
                assert {"text", "json"} <= choices <= {"text", "json", "github"} | old, path
                seen.add(" ".join(path))
    assert {"changelog check", "sweep plan", "results provenance"} <= seen, seen


# --- arguments that are not UTF-8 -------------------------------------------------------


def test_a_command_given_bytes_that_are_not_utf8_exits_2_with_one_line(repo: GitRepo) -> None:
    """`workflows check` matched the glob's surrogates against no file and said "nothing to
    check" (exit 0); the entry now refuses the argument before any command runs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_"))}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "infx", "workflows", "check", "--workflows"]
    done = subprocess.run([*command, b"caf\xe9/*.yml"], capture_output=True, env=env, cwd=repo.path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    assert done.stderr == b"infx: error: argument 'caf\\xe9/*.yml' is not valid UTF-8\n"
    fine = subprocess.run(
        [*command, "caf\u00e9/*.yml"], capture_output=True, env=env, cwd=repo.path
    )
    assert fine.returncode == 0, fine.stderr  # UTF-8 text that is not ASCII is text


@pytest.mark.parametrize(
    "args",
    [
        ["caf\udce9"],
        ["--version", "\udcff"],
        ["sweep", "plan", "--config", "configs/\udcff-master.yaml"],
        ["changelog", "lint", "--file", "perf-\udcffchangelog.yaml"],
        ["results", "collect", "\udcff", "--out-dir", "out"],
        ["review", "signoff", "--pr", "1\udcff"],
        ["workflows", "check", "--workflows", "\ud800"],  # a lone surrogate no byte makes
    ],
)
def test_every_command_refuses_an_argument_that_is_not_utf8(repo: GitRepo, args: list[str]) -> None:
    result = repo.infx(*args)
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("infx: error: argument ") and line.endswith(" is not valid UTF-8")
    assert "Traceback" not in result.output and ("\\x" in line or "\\u" in line)
