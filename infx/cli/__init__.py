"""The `infx` command line: a thin click layer over the pure core."""

from __future__ import annotations

import sys
from typing import Any

import click

from infx import __version__
from infx.errors import EXIT_CODES, InfxError


class InfxGroup(click.Group):
    """Turns domain errors into one line on stderr and the matching exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InfxError as exc:
            click.echo(f"infx: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            click.echo(
                f"infx: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), err=True
            )
            ctx.exit(2)


@click.group(
    cls=InfxGroup, epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="infx")
def cli() -> None:
    """CI for GPU inference benchmark repositories: changelog gate, sweep planning, comment commands."""


def _register() -> None:
    from infx.cli.changelog import changelog
    from infx.cli.merge import merge
    from infx.cli.reuse import reuse, stage_results
    from infx.cli.sweep import sweep

    for command in (changelog, sweep, reuse, stage_results, merge):
        cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="infx")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
