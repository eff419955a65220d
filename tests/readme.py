"""The README's code blocks, as the tests that follow the README read them, and its merge
driver set up in a repository exactly as the README says."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import GitRepo

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_blocks(kind: str, section: str | None = None) -> list[str]:
    """Every `kind` code block of the README, or of its `## section`, verbatim."""
    text = README.read_text()
    if section is not None:
        start = text.index(f"## {section}")
        text = text[start : text.index("\n## ", start + 3)]
    return re.findall(rf"```{kind}\n(.*?)```", text, flags=re.S)


def readme_block(kind: str, marker: str) -> str:
    """The README's one `kind` code block holding `marker`."""
    found = [block for block in readme_blocks(kind) if marker in block]
    assert len(found) == 1, f"the README holds one {kind} block with {marker!r}"
    return found[0]


def use_readme_driver(repo: GitRepo, env: dict[str, str] | None = None) -> None:
    """Run the README's merge-driver lines in `repo` and commit what they add to the
    repository (.gitattributes); tag that commit `base`."""
    block = readme_block("sh", "merge.infx-changelog.driver")
    subprocess.run(["bash", "-e", "-c", block], cwd=repo.path, check=True, env=env)
    repo.git("add", ".gitattributes")
    repo.git("commit", "-q", "-m", "driver")
    repo.git("tag", "-f", "base")
