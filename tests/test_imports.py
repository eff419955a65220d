"""What each command loads: a command imports a heavy library only when it uses it.

PyGithub costs about 0.3 s to import, jsonschema 0.05 s, NumPy 0.1 s, SQLAlchemy 0.15 s:
more than the gate's whole run. Each command runs here as a user runs it, in its own
process, in a repository laid out as InferenceX is, and must succeed; then the libraries
it left loaded are compared with the ones it is allowed (what it uses). The speed itself
is measured in `benchmarks/bench_cli.py`, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED, GitRepo, entry, make_repo, real_repo

# The libraries a local command has no use for, by the name they import as.
HEAVY = {
    "github": "PyGithub",
    "jsonschema": "jsonschema",
    "numpy": "NumPy",
    "sqlalchemy": "SQLAlchemy",
    "matplotlib": "matplotlib",
    "requests": "requests",
    "yaml": "PyYAML",
}
# Runs infx's console entry point, then writes the modules loaded to argv[1].
PROBE = """\
import atexit, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(" ".join(sys.modules)))
sys.argv[0] = "infx"
from infx.cli import main
main()
"""
KEY = "dsv4-fp4-mi355x-vllm" if (SHARED / "configs").is_dir() else "llama-fp8-mi355x-vllm"
# The heavy libraries a command may load because it uses them: master configs are read as
# InferenceX reads them, with PyYAML, except where ruamel (loaded for the changelog) reads
# them alike (`plain` in `infx.matrix.load`: the gate's format evidence, the plan's selected
# config and runners.yaml); `sweep validate` reads every config whole, with PyYAML; and a
# whole history has values only PyYAML's YAML 1.1 resolver can say how it reads.
NONE: frozenset[str] = frozenset()
YAML = frozenset({"yaml"})
# What a user runs, the exit code it must end with, and what it may load.
COMMANDS: list[tuple[str, int, frozenset[str]]] = [
    ("--help", 0, NONE),
    ("changelog check --help", 0, NONE),
    ("changelog check --base base --pr 7 --repo acme/bench", 0, NONE),
    ("changelog check --base base --pr 7 --repo acme/bench --format github", 0, NONE),
    ("changelog check --base base --repo acme/bench", 1, NONE),  # a placeholder on main
    ("changelog lint", 0, YAML),
    ("changelog fix --base base --check", 0, YAML),
    ("changelog canonicalize --base base --pr 7 --repo acme/bench --check", 1, NONE),
    ("sweep plan --base base", 0, NONE),
    ("sweep plan --base base --format text", 0, NONE),
    ("sweep validate", 0, YAML),
    ("sweep canary", 0, NONE),  # the plan on stdin
    ("sweep outputs plan.json", 0, NONE),
    ("sweep chunk plan.json --bucket single --index 0", 0, NONE),
    ("sweep row-env", 0, NONE),  # $ROW: the plan's first row
    ("sweep mode", 0, NONE),  # a push to main
    ("workflows check", 0, NONE),
]


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """InferenceX's layout (a small one without ../shared) with one appended entry, its
    plan and a push event beside it."""
    path = tmp_path_factory.mktemp("imports") / "repo"
    repo = real_repo(path) if (SHARED / "configs").is_dir() else make_repo(path)
    history = repo.read().decode()
    repo.commit("entry", **{"perf-changelog.yaml": history + "\n" + entry([KEY])})
    planned = repo.infx("sweep", "plan", "--base", "base", "--output", "plan.json")
    assert planned.exit_code == 0, planned.output
    (repo.path / "event.json").write_text(json.dumps({"ref": "refs/heads/main"}))
    return repo


def loaded_by(layout: GitRepo, tmp_path: Path, command: str, code: int) -> set[str]:
    """Every module `infx COMMAND` left loaded, run as a user runs it; it must exit `code`."""
    plan = (layout.path / "plan.json").read_text()
    env = {
        **os.environ,
        "ROW": json.dumps(next(iter(json.loads(plan)["single_node"].values()))[0]),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(layout.path / "event.json"),
    }
    env.pop("GITHUB_STEP_SUMMARY", None)  # outside Actions, as a user runs it
    out = tmp_path / "modules"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *command.split()],
        cwd=layout.path,
        input=plan,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
    return set(out.read_text().split())


@pytest.mark.parametrize(("command", "code", "allowed"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_command_loads_no_heavy_library_it_does_not_use(
    layout: GitRepo, tmp_path: Path, command: str, code: int, allowed: frozenset[str]
) -> None:
    loaded = {m for m in loaded_by(layout, tmp_path, command, code) if "." not in m}
    assert {HEAVY[m] for m in (loaded & set(HEAVY)) - allowed} == set(), f"infx {command}"


# infx's own packages a command has no use for. Each module costs its classes' creation at
# start-up (a frozen dataclass about 0.6 ms), so the two commands every PR runs load only
# their own: the gate nothing of sweeps or results; the plan not the gate's merge and fix
# rules.
UNUSED = [
    (
        "changelog check --base base --pr 7 --repo acme/bench",
        0,
        ("infx.sweep", "infx.results", "infx.reuse", "infx.history", "infx.rerun", "infx.github"),
    ),
    (
        "sweep plan --base base",
        0,
        ("infx.changelog.gate", "infx.changelog.edits", "infx.results", "infx.reuse", "infx.rerun"),
    ),
]


@pytest.mark.parametrize(("command", "code", "unused"), UNUSED, ids=[c[0] for c in UNUSED])
def test_the_gate_and_the_plan_load_none_of_infx_they_do_not_use(
    layout: GitRepo, tmp_path: Path, command: str, code: int, unused: tuple[str, ...]
) -> None:
    loaded = loaded_by(layout, tmp_path, command, code)
    assert sorted(m for m in loaded if m.startswith(unused)) == [], f"infx {command}"
