"""`infx workflows ...`: checks of the repository's GitHub Actions workflow files."""

from __future__ import annotations

import sys

import click

from infx import git
from infx.settings import load as load_settings


@click.group()
def workflows() -> None:
    """Check the repository's workflow files against its settings."""


@workflows.command()
@click.option(
    "--workflows",
    "pattern",
    default=".github/workflows/*.yml",
    show_default=True,
    help="Workflow files to read, as a glob from the repository root.",
)
def check(pattern: str) -> None:
    """Check that the sweep labels the workflows spell out are the names infx.toml gives.

    A workflow's `if:` and `concurrency:` name labels literally; after a rename under
    [labels], each old name left there, and each label list missing a name, is listed
    with its file and line (exit 1).
    """
    from infx.sweep.label_lists import label_problems

    root = git.root()
    settings = load_settings(root)
    files = sorted(path for path in root.glob(pattern) if path.is_file())
    if not files:
        click.echo(f"no workflow file matches {pattern}: nothing to check")
        return
    problems = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        problems += label_problems(path.relative_to(root).as_posix(), text, settings.labels)
    for problem in problems:
        click.echo(problem.text())
    if problems:
        click.echo(
            f"{len(problems)} label problem(s): edit the workflows to use the names in "
            "infx.toml [labels]"
        )
        sys.exit(1)
    click.echo(f"{len(files)} workflow file(s): label lists match the settings")
