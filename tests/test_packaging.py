"""The wheel and sdist `python -m build` makes (the README's third way to install): the
sdist builds the wheel, the wheel holds every schema, and installed on its own, away from
this checkout, `infx --help` and a gate run work."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import HISTORY, entry, make_repo

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("build", reason="the build package is not installed")
pytest.importorskip("hatchling", reason="the build backend is not installed")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` of this checkout (offline: the backend is installed here)."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    return out


def test_the_wheel_holds_every_schema(dist: Path) -> None:
    (wheel,) = dist.glob("infx-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    schemas = sorted(p.name for p in (ROOT / "schemas").glob("*.json"))
    assert schemas
    assert [n for n in schemas if f"infx/schemas/{n}" not in names] == []
    (sdist,) = dist.glob("infx-*.tar.gz")
    assert sdist.stat().st_size > 0


def test_the_wheel_holds_the_site_pages(dist: Path) -> None:
    """`infx site build` copies its HTML, CSS and JavaScript from the package."""
    (wheel,) = dist.glob("infx-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    pages = sorted(p.name for p in (ROOT / "infx" / "site" / "static").iterdir())
    assert "index.html" in pages
    assert [n for n in pages if f"infx/site/static/{n}" not in names] == []


def test_the_wheel_works_installed_on_its_own(dist: Path, tmp_path: Path) -> None:
    """A throw-away virtualenv holding only the wheel (its dependencies are borrowed from
    this environment through a .pth file, so no index is needed)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (wheel,) = dist.glob("infx-*.whl")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "borrowed_deps.pth").write_text("\n".join(sorted(borrowed)) + "\n")

    alone = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    where = subprocess.run(
        [str(python), "-c", "import infx; print(infx.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env=alone,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(str(venv)), where
    infx = str(venv / "bin" / "infx")
    assert subprocess.run([infx, "--help"], capture_output=True, env=alone).returncode == 0

    repo = make_repo(tmp_path / "bench")
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    gate = subprocess.run(
        [infx, "changelog", "check", "--base", "base", "--pr", "5"],
        cwd=repo.path, capture_output=True, text=True, env=alone,
    )  # fmt: skip
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "ok (1 appended entry)" in gate.stdout
    # The schemas come from the wheel: a wrong type is described from them.
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(extra="  evals-only: yes\n"))
    bad = subprocess.run(
        [infx, "changelog", "check", "--base", "base", "--pr", "5"],
        cwd=repo.path, capture_output=True, text=True, env=alone,
    )  # fmt: skip
    assert bad.returncode == 1
    assert "evals-only: 'yes' is not of type 'boolean'" in bad.stdout

    # InferenceX's own package is named infx too: on PYTHONPATH it comes first, yet the
    # installed command runs this infx, says so, and `--version` names the package.
    shadow = tmp_path / "InferenceX"
    (shadow / "infx").mkdir(parents=True)
    (shadow / "infx" / "__init__.py").write_text('"""InferenceX."""\n')
    (shadow / "infx" / "cli.py").write_text("def main():\n    print('InferenceX CLI')\n")
    shadowed = subprocess.run(
        [infx, "--version"], capture_output=True, text=True,
        env={**alone, "PYTHONPATH": str(shadow)},
    )  # fmt: skip
    assert shadowed.returncode == 0, shadowed.stderr
    assert f"package: {Path(site).resolve() / 'infx'}" in shadowed.stdout
    assert "InferenceX CLI" not in shadowed.stdout
    assert f"another package named infx first ({(shadow / 'infx').resolve()})" in shadowed.stderr
