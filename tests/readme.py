"""The documentation's code blocks (the README and the pages in docs/), as the tests that
follow them read them, and the README's merge driver set up in a repository exactly as it
says."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import GitRepo

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = (README, *sorted((ROOT / "docs").glob("*.md")))


def readme_blocks(kind: str, section: str | None = None) -> list[str]:
    """Every `kind` code block of the documentation, or of the `## section` that one of
    its files holds, verbatim."""
    texts = [path.read_text() for path in DOCS]
    if section is not None:
        (text,) = [t for t in texts if f"\n## {section}\n" in t]
        start = text.index(f"\n## {section}\n")
        end = text.find("\n## ", start + 3)
        texts = [text[start : end if end != -1 else len(text)]]
    return [b for text in texts for b in re.findall(rf"```{kind}\n(.*?)```", text, flags=re.S)]


def readme_block(kind: str, marker: str) -> str:
    """The documentation's one `kind` code block holding `marker`."""
    found = [block for block in readme_blocks(kind) if marker in block]
    assert len(found) == 1, f"the documentation holds one {kind} block with {marker!r}"
    return found[0]


def use_readme_driver(repo: GitRepo, env: dict[str, str] | None = None) -> None:
    """Run the README's merge-driver lines in `repo` and commit what they add to the
    repository (.gitattributes); tag that commit `base`."""
    block = readme_block("sh", "merge.infx-changelog.driver")
    subprocess.run(["bash", "-e", "-c", block], cwd=repo.path, check=True, env=env)
    repo.git("add", ".gitattributes")
    repo.git("commit", "-q", "-m", "driver")
    repo.git("tag", "-f", "base")
