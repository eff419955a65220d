"""`infx merge PR`: the maintainer's merge helper."""

from __future__ import annotations

import click

from infx.cli.options import PR_NUMBER, FiniteRange, api_repo_option, request, shown
from infx.merge.helper import merge_pr
from infx.merge.rules import MergeOptions
from infx.reuse.edge import Checkout
from infx.settings import SWEEP_WORKFLOW

METHODS = click.Choice(["squash", "merge", "rebase"])
# NaN waited for good (no deadline compares true) or crashed sleep() after the PR's branch
# was pushed; so did a negative interval.
SECONDS = FiniteRange(min=0)
HELP = {
    "--dry-run": "Check and prepare everything; post, push and merge nothing.",
    "--workflow-id": "File name of the sweep workflow whose run is reused.",
    "--poll-interval": "Seconds between looks at the checks.",
}


@click.command("merge")
@click.argument("number", type=PR_NUMBER, metavar="PR")
@api_repo_option
@shown("--method", type=METHODS, default="squash", help="How GitHub merges the PR.")
@click.option("--dry-run", is_flag=True, help=HELP["--dry-run"])
@shown("--remote", default="origin", help="The remote holding the PR branch.")
@shown("--workflow-id", "workflow", default=SWEEP_WORKFLOW, help=HELP["--workflow-id"])
@shown("--timeout", type=SECONDS, default=6 * 3600, help="Seconds to wait for checks.")
@shown("--poll-interval", "poll", type=SECONDS, default=30, help=HELP["--poll-interval"])
def merge(number: int, repo: str | None, **options: object) -> None:
    """Merge pull request PR on GitHub, as a maintainer would by hand.

    Its changelog placeholders become its link, its green sweep is reused when it measured
    exactly what merges, and it merges once every check passes and the infx/reuse status
    says ready. Not the changelog's git merge driver (`infx changelog merge-driver`), which
    git runs on a local `git merge`."""
    chosen = request(MergeOptions, options)
    merge_pr(Checkout.open(repo), number, chosen, say=lambda text: click.echo(f"- {text}"))
