"""Every third-party package infx imports is declared in pyproject.toml.

An import that works only because another dependency happens to bring the package along
(requests came with PyGithub) breaks the day that dependency drops it. The imports are
read from infx/'s own source (inside functions too); each top-level name is mapped to
the distributions that install it, as the installed environment records them
(`import yaml` is PyYAML, `import github` is PyGithub).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_packages(package: Path) -> dict[str, set[str]]:
    """Top-level names of the absolute imports under `package`, with the files importing them."""
    found: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(
                    str(path.relative_to(package.parent))
                )
    return found


def declared() -> set[str]:
    """Distributions of [project] dependencies and of the runtime extras (not `test`): an
    extra's package is imported only by the commands that need it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra, listed in project.get("optional-dependencies", {}).items():
        if extra != "test":
            requirements += listed
    return {_normal(Requirement(text).name) for text in requirements}


def test_every_imported_third_party_package_is_declared() -> None:
    owners = packages_distributions()
    wanted = declared()
    undeclared, unknown = [], []
    for name, files in sorted(imported_packages(ROOT / "infx").items()):
        if name == "infx" or name in sys.stdlib_module_names:
            continue
        distributions = {_normal(d) for d in owners.get(name, [])}
        if not distributions:
            unknown.append(f"{name} (imported by {', '.join(sorted(files))})")
        elif not distributions & wanted:
            undeclared.append(f"{name} from {sorted(distributions)} ({', '.join(sorted(files))})")
    assert not unknown, f"imported but not installed, so its distribution is unknown: {unknown}"
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_the_walk_sees_imports_inside_functions(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text("def f():\n    import yaml\n    from github import Auth\n")
    found = imported_packages(package)
    assert set(found) == {"yaml", "github"}
    owners = packages_distributions()
    assert "PyYAML" in owners["yaml"] and "PyGithub" in owners["github"]
