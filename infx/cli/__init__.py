"""The `infx` command line: a thin click layer over the pure core."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from infx import __version__
from infx.errors import InfxError

# Groups imported only when invoked or listed, so their dependencies stay off the start-up path.
_LAZY = {"results": "infx.cli.results"}


class InfxGroup(click.Group):
    """Turns domain errors into one line on stderr and the matching exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _LAZY and cmd_name not in self.commands:
            self.add_command(getattr(importlib.import_module(_LAZY[cmd_name]), cmd_name))
        return super().get_command(ctx, cmd_name)

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


@click.group(cls=InfxGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
