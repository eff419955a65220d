"""A contributor's clone of a benchmark repository adopts infx by following only the
README's "Adopt it in your repository" section: install, settings, hook, workflow lines,
merge driver. Nothing reaches the network, and nothing reaches into this checkout but the
install source: every `infx` runs from the virtualenv step 0 made, found on PATH."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from tests.conftest import SHARED, GitRepo, real_repo
from tests.readme import readme_blocks

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENTRY = '\n- config-keys:\n    - {key}\n  description:\n    - "{text}"\n  pr-link: {link}\n'


def blocks(kind: str) -> list[str]:
    return readme_blocks(kind, section="Adopt it in your repository")


def tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or pytest.skip(f"no {name}"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Step 0, the README's `pip install /path/to/infx`, into a virtualenv of its own. To
    stay offline it adds `--no-deps --no-index` and borrows the dependencies of this
    environment through a .pth file; infx itself is built from the checkout and installed,
    not linked to it."""
    pytest.importorskip("hatchling", reason="the build backend is not installed")
    installs = [line.split()[:3] for b in blocks("sh") for line in b.splitlines()]
    assert ["pip", "install", "/path/to/infx"] in installs
    venv = tmp_path_factory.mktemp("adopter") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # `pip install DIR` builds a wheel of DIR and installs it: the same two steps, the build
    # here, where the build backend is installed.
    offline = ["--quiet", "--no-deps", "--no-index"]
    wheels = venv.parent / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", *offline, "--no-build-isolation",
         "--wheel-dir", str(wheels), str(ROOT)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("infx-*.whl")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", *offline, str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    borrowed = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (Path(site) / "borrowed_deps.pth").write_text("\n".join(borrowed) + "\n")
    return venv / "bin"


@pytest.fixture
def clone(tmp_path: Path) -> tuple[GitRepo, str]:
    """A contributor's clone of InferenceX's data (this project's own without ../shared)."""
    data = SHARED if (SHARED / "configs").is_dir() else ROOT
    upstream = real_repo(tmp_path / "upstream", data)
    bare = tmp_path / "InferenceX.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path), str(bare)], check=True)
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "bench")], check=True)
    repo = GitRepo(tmp_path / "bench")
    repo.git("config", "user.email", "alice@example.invalid")
    repo.git("config", "user.name", "Alice")
    repo.git("config", "commit.gpgsign", "false")
    key = "dsv4-fp4-mi355x-vllm" if data == SHARED else "dsv41flash-fp4-mi355x-vllm-agentic-dspark"
    return repo, key


def test_the_readme_adoption_works_end_to_end(
    installed: Path, clone: tuple[GitRepo, str], tmp_path: Path
) -> None:
    repo, key = clone
    # No infx but the one step 0 installed; git, bash and sh from the system.
    path = f"{installed}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INFX_", "VIRTUAL", "PYTHON"))
    }
    env.update(PATH=path, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))

    def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(list(args), cwd=repo.path, capture_output=True, text=True, env=env)
        assert not ok or proc.returncode == 0, f"{args}: {proc.stdout}{proc.stderr}"
        return proc

    assert shutil.which("infx", path=path) == str(installed / "infx")

    # 1. settings
    (settings,) = blocks("toml")
    repository = re.search(r'repository = "(.+)"', settings).group(1)
    repo.write("infx.toml", settings)

    # 2. the hook, installed: from here on every commit runs it
    (hook,) = [b for b in blocks("yaml") if b.startswith("repos:")]
    repo.write(".pre-commit-config.yaml", hook)
    run(tool("pre-commit"), "validate-config", ".pre-commit-config.yaml")
    run(tool("pre-commit"), "install")

    # 3. the gate workflow, its action pinned by a commit as the README says, passes actionlint
    (workflow,) = [b for b in blocks("yaml") if b.startswith("name: changelog-gate")]
    pinned = workflow.replace(
        "OWNER/infx@COMMIT", "acme/infx@0123456789abcdef0123456789abcdef01234567"
    )
    assert pinned != workflow
    repo.write(".github/workflows/changelog-gate.yml", pinned)
    run(tool("actionlint"), ".github/workflows/changelog-gate.yml")
    step = yaml.safe_load(pinned)["jobs"]["check-changelog"]["steps"][1]
    assert step["with"]["command"] == "changelog check"

    # 4. the merge driver
    (driver,) = [b for b in blocks("sh") if "merge-driver" in b]
    run("bash", "-e", "-c", driver)
    run("git", "add", "-A")
    run("git", "commit", "-q", "-m", "adopt infx")
    run("git", "push", "-q", "origin", "HEAD:main")

    # A contributor's branch: the gate with every default, then a commit through the hook.
    run("git", "checkout", "-q", "-b", "aiter")
    history = repo.read().decode()
    ours = ENTRY.format(key=key, text="Switch the MoE backend to aiter", link="XXX")
    repo.write("perf-changelog.yaml", history + ours)
    gate = run("infx", "changelog", "check")
    assert "ok (1 appended entry)" in gate.stdout
    run("git", "commit", "-q", "-am", "aiter")

    # main moves on upstream; merging it into the branch never stops on the changelog.
    theirs = ENTRY.format(
        key=key, text="Bump the image", link=f"https://github.com/{repository}/pull/7"
    )
    run("git", "checkout", "-q", "main")
    repo.write("perf-changelog.yaml", history + theirs)
    run("git", "commit", "-q", "-am", "main moves")
    run("git", "push", "-q", "origin", "main")
    run("git", "checkout", "-q", "aiter")
    run("git", "fetch", "-q", "origin")
    run("git", "merge", "--no-edit", "origin/main")
    assert repo.read().decode() == history + theirs + ours

    # At merge time: the clone's links point upstream; the plan runs with every default.
    done = run("infx", "changelog", "canonicalize", "--pr", "3058")
    assert f"pr-link: https://github.com/{repository}/pull/3058\n".encode() in repo.read()
    assert "rewrote pr-link 'XXX'" in done.stdout
    planned = run("infx", "sweep", "plan", "--format", "text")
    assert f"| {key} |" in planned.stdout
