"""`infx workflows ...`: checks of the repository's GitHub Actions workflow files."""

from __future__ import annotations

import sys

import click

from infx import git
from infx.cli.options import shown
from infx.settings import load as load_settings


@click.group()
def workflows() -> None:
    """Check the repository's workflow files against its settings."""


@workflows.command()
@shown("--workflows", "pattern", default=".github/workflows/*.yml", help="Workflow files to read, as a glob from the repository root.")  # fmt: skip
def check(pattern: str) -> None:
    """Check that the sweep labels the workflows spell out are the names infx.toml gives.

    A workflow's `if:` and `concurrency:` name labels literally; after a rename under
    [labels], each old name left there, and each label list missing a name, is listed
    with its file and line (exit 1).
    """
    from infx.sweep.facts import read_workflows
    from infx.sweep.label_lists import label_report

    root = git.root()
    lines, code = label_report(read_workflows(root, pattern), pattern, load_settings(root).labels)
    for line in lines:
        click.echo(line)
    if code:
        sys.exit(code)
