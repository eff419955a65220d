"""`infx site build`: the static results site, from main's history."""

from __future__ import annotations

from pathlib import Path

import click

from infx.errors import UsageError


@click.group()
def site() -> None:
    """Build the static results site (HTML, JavaScript, data files) from main's history."""


@site.command()
@click.option(
    "--history",
    default=None,
    metavar="URL_OR_PATH",
    help="The results history: an SQLite path, sqlite:/// or postgresql:// URL. Default: "
    "INFX_HISTORY_URL, else history in infx.toml, else .infx/history.sqlite.",
)
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Site folder."
)
@click.option(
    "--pr-results",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A PR's results table (results.json of `infx results collect`), drawn over main's "
    "curves with its verdicts at #/pr/<N>. Repeatable.",
)
@click.option(
    "--verdicts",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder of `infx results compare --format json` documents named pr-<N>.json or "
    "pr-<N>-run-<ID>.json: the verdict history page.",
)
@click.option(
    "--repo-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The git repository whose changelog explains main's steps.",
)
def build(
    history: str | None,
    out: Path,
    pr_results: tuple[Path, ...],
    verdicts: Path | None,
    repo_dir: Path,
) -> None:
    """Write the site into OUT: Pareto pages, each config's history with its steps
    explained by the changelog, PR overlays, verdicts and coverage."""
    from infx.site import missing_requirements

    missing = missing_requirements()
    if missing:
        raise UsageError(f"the site needs {', '.join(missing)}: pip install 'infx[compare]'")
    from infx.site.build import build_site
    from infx.site.facts import gather
    from infx.site.write import write_site

    built = build_site(gather(history, repo_dir, pr_results, verdicts))
    write_site(out, built)
    for note in built.notes:
        click.echo(f"infx: note: {note}", err=True)
    click.echo(f"wrote {out}: {built.describe()}")
