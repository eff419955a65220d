"""`infx site build`: the static results site, from main's history."""

from __future__ import annotations

from pathlib import Path

import click

from infx.cli.options import EXISTING, EXISTING_FOLDER, FOLDER, history_option
from infx.errors import printable

HELP = {
    "--pr-results": "A PR's results.json, drawn over main's curves at #/pr/<N>. Repeatable.",
    "--verdicts": "Folder of `results compare --format json` documents named pr-<N>[-run-<ID>].json. Default: the history's verdicts table (what `results compare --pr` recorded).",
    "--repo-dir": "The git repository whose changelog explains main's steps. Default: .",
}


@click.group()
def site() -> None:
    """Build the static results site (HTML, JavaScript, data files) from main's history."""


@site.command()
@history_option
@click.option("--out", required=True, type=FOLDER, help="Site folder.")
@click.option("--pr-results", multiple=True, type=EXISTING, help=HELP["--pr-results"])
@click.option("--verdicts", type=EXISTING_FOLDER, help=HELP["--verdicts"])
@click.option("--repo-dir", type=EXISTING_FOLDER, default=Path("."), help=HELP["--repo-dir"])
def build(history_url: str | None, out: Path, pr_results: tuple[Path, ...], verdicts: Path | None,
          repo_dir: Path) -> None:  # fmt: skip
    """Write the site into OUT: Pareto pages, each config's history with its steps explained
    by the changelog, PR overlays, verdicts and coverage."""
    from infx.site import require_compare

    require_compare()
    from infx.site.build import build_site
    from infx.site.facts import gather
    from infx.site.write import write_site

    built = build_site(gather(history_url, repo_dir, pr_results, verdicts))
    write_site(out, built)
    for note in built.notes:
        click.echo(printable(f"infx: note: {note}"), err=True)
    click.echo(f"wrote {out}: {built.describe()}")
