"""`infx security check`: the settings that keep fork code off the GPU runners."""

from __future__ import annotations

import sys

import click

from infx import git
from infx.cli.options import api_repo_option, runners_file, shown
from infx.errors import printable
from infx.settings import SWEEP_WORKFLOW

HELP = {
    "--workflow": "A workflow file whose jobs run on the GPU runners; repeat for several.",
    "--environment": "The environment whose required reviewers approve an over-budget sweep.",
}


@click.group()
def security() -> None:
    """Check the GitHub settings a public repository with GPU runners relies on."""


@security.command()
@api_repo_option
@runners_file
@shown("--workflow", "workflows", multiple=True, default=(SWEEP_WORKFLOW, "benchmark-tmpl.yml"), help=HELP["--workflow"])  # fmt: skip
@shown("--environment", default="gpu-budget", help=HELP["--environment"])
def check(repo: str | None, runners_path: str, workflows: tuple[str, ...], environment: str) -> None:  # fmt: skip
    """Read through the API what the workflow files cannot enforce, and judge it.

    A fork's pull request runs the workflow files of its own merge commit, so only the
    settings stand between its code and the GPU runners: approval of every outside
    contributor's run, ephemeral GPU runners (those with a label or node of the runners
    file), an organization runner group that only the sweep workflows may use, a
    read-only default workflow token, and required reviewers on the environment that holds
    an over-budget sweep (GitHub creates a missing one unprotected). Needs a token that may administer the repository (and
    read the organization's runners). Exit 1 names each setting at fault; a setting the
    token may not read is a usage or environment error, never a pass.
    """
    from infx.matrix.sources import load_runners
    from infx.security import check as judge
    from infx.security import repository_facts

    root = git.root()
    runners = load_runners(root, None, runners_path).runners
    labels = runners.labels if runners is not None else {}
    outcome = judge(repository_facts(repo, environment, root), labels, workflows)
    for line in outcome.lines:
        click.echo(line)
    if outcome.error:
        click.echo(f"infx: error: {printable(outcome.error)}", err=True)
    sys.exit(outcome.exit_code)
