"""The composite action a benchmark repository uses (`uses: OWNER/infx@<sha>`): its steps run
for real here, installing from the hash-checked lock, and the lock covers what infx needs."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.actions.expressions import condition, render
from tests.actions.harness import INFX, ROOT, load_action
from tests.conftest import LINK, GitRepo, entry, make_repo

LOCK = ROOT / "requirements" / "lock.txt"
# The platform the lock is compiled for: the GitHub-hosted and GPU runners.
LINUX_311 = {
    "python_version": "3.11",
    "python_full_version": "3.11.7",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "implementation_name": "cpython",
    "sys_platform": "linux",
    "os_name": "posix",
}
OFFLINE = re.compile(
    r"NewConnectionError|Temporary failure in name resolution|Network is unreachable"
    r"|Max retries exceeded|ConnectTimeout"
)


def locked(lock: Path = LOCK) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) from a lock file."""
    pins: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in lock.read_text().splitlines():
        pin = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", line)
        if pin:
            current = canonicalize_name(pin[1])
            pins[current] = (pin[2], [])
        elif current and (digest := re.search(r"--hash=(\S+)", line)):
            pins[current][1].append(digest[1])
    return pins


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = sorted(set(PROJECT["project"]["optional-dependencies"]) - {"test"})


@pytest.mark.parametrize("extra", ["", *EXTRAS])
def test_lock_pins_every_dependency_with_hashes(extra: str) -> None:
    """requirements/lock.txt covers infx and its build backend; lock-<extra>.txt adds the
    extra's packages, for the action's `extras` input."""
    lock = LOCK.with_name(f"lock-{extra}.txt") if extra else LOCK
    needed = [*PROJECT["project"]["dependencies"], *PROJECT["build-system"]["requires"]]
    if extra:
        needed += PROJECT["project"]["optional-dependencies"][extra]
    pins = locked(lock)
    for text in needed:
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate(LINUX_311):
            continue
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in {lock.name}"
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (name, version)
    for name, (_, hashes) in pins.items():
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), name


def run_action(
    inputs: dict[str, str], cwd: Path, temp: Path, only: str | None = None
) -> list[subprocess.CompletedProcess]:
    """The action's steps (or the one named `only`) as the runner runs them: `if:` and `env:`
    evaluated, `run:` in bash. actions/setup-python is the runner's business; here python3
    is the machine's."""
    action = load_action()
    given = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    given.update(inputs)
    ctx: dict[str, Any] = {"inputs": given, "github": {"action_path": str(ROOT)}}
    path_file = temp / "github_path"
    if not path_file.exists():
        path_file.write_text("")
    venv_bin = str(INFX.parent)
    system_path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if p and p != venv_bin
    )
    done = []
    for step in action["runs"]["steps"]:
        if only is not None and step.get("name") != only:
            continue
        if not condition(step.get("if"), ctx):
            continue
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@"), step["uses"]
            continue
        assert step["shell"] == "bash"
        extra = path_file.read_text().split()
        env = {
            **os.environ,
            "PATH": os.pathsep.join([*reversed(extra), system_path]),
            "RUNNER_TEMP": str(temp),
            "GITHUB_PATH": str(path_file),
            **{k: str(v) for k, v in render(step.get("env", {}), ctx).items()},
        }
        script = temp / "step.sh"
        script.write_text(step["run"])
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        done.append(proc)
        if proc.returncode != 0:
            if OFFLINE.search(proc.stderr):
                pytest.skip(f"the package index is unreachable: {proc.stderr.strip()[-200:]}")
            break
    return done


@pytest.fixture(scope="module")
def adopter(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A benchmark repository that uses the action and never copied infx's code."""
    repo = make_repo(tmp_path_factory.mktemp("adopter") / "bench")
    appended = repo.read().decode() + "\n" + entry(link=f"{LINK}3")
    repo.commit("entry", **{"perf-changelog.yaml": appended})
    return repo


@pytest.fixture(scope="module")
def runner_temp(adopter: GitRepo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RUNNER_TEMP of a job whose first step was `uses: OWNER/infx@<sha>` without a command."""
    temp = tmp_path_factory.mktemp("runner-temp")
    (install,) = run_action({}, adopter.path, temp)
    assert install.returncode == 0, install.stderr
    assert re.search(r"^infx, version \S+$", install.stdout, re.M)
    return temp


def test_install_puts_only_the_locked_infx_on_path(runner_temp: Path) -> None:
    assert (runner_temp / "github_path").read_text().split() == [str(runner_temp / "infx-bin")]
    assert [p.name for p in (runner_temp / "infx-bin").iterdir()] == ["infx"]
    launcher = (runner_temp / "infx-bin" / "infx").resolve()
    assert launcher.is_relative_to(runner_temp / "infx-venv")
    frozen = subprocess.run(
        [str(runner_temp / "infx-venv" / "bin" / "python"), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pins = locked()
    for line in frozen.splitlines():
        if line.startswith("infx @ "):
            continue
        name, _, version = line.partition("==")
        if canonicalize_name(name) in ("pip", "setuptools"):
            continue
        assert pins.get(canonicalize_name(name), ("?",))[0] == version, line


def test_action_runs_a_command_with_line_separated_arguments(
    adopter: GitRepo, runner_temp: Path
) -> None:
    inputs = {"command": "changelog check", "args": "--base\nHEAD^1\n\n--head\nHEAD\n"}
    (command,) = run_action(inputs, adopter.path, runner_temp, only="Run infx")
    assert command.returncode == 0, command.stdout + command.stderr
    assert "perf-changelog.yaml" in command.stdout


def test_action_arguments_reach_infx_verbatim(adopter: GitRepo, runner_temp: Path) -> None:
    """Inputs go through env: and one argument per line, never through a shell."""
    marker = runner_temp / "pwned"
    hostile = f"$(touch {marker}); `touch {marker}` && touch {marker}"
    inputs = {"command": "changelog check", "args": f"--base\nHEAD^1\n--pr\n{hostile}\n"}
    (command,) = run_action(inputs, adopter.path, runner_temp, only="Run infx")
    assert command.returncode == 2
    assert hostile in command.stderr and "Traceback" not in command.stderr
    assert not marker.exists()


def test_action_pins_what_it_uses_and_interpolates_nothing_into_scripts() -> None:
    for step in load_action()["runs"]["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
        else:
            assert "${{" not in step["run"], step["name"]


@pytest.mark.parametrize("extras", ["nope", "../../etc/passwd", "plot aiperf"])
def test_unknown_extras_stop_the_install(extras: str, tmp_path: Path) -> None:
    (install,) = run_action({"extras": extras}, tmp_path, tmp_path)
    assert install.returncode == 2
    assert "names no infx extra" in install.stdout
    assert not (tmp_path / "infx-venv").exists()
