"""The `infx` command line: a thin click layer over the pure core."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from infx import __version__
from infx.errors import InfxError

# Command -> (module, attribute). Modules load on first use: a workflow step pays only for
# the command it runs, not for PyGithub when it plans a sweep (half of the start-up time).
COMMANDS: dict[str, tuple[str, str]] = {
    "changelog": ("infx.cli.changelog", "changelog"),
    "sweep": ("infx.cli.sweep", "sweep"),
    "reuse": ("infx.cli.reuse", "reuse"),
    "stage-results": ("infx.cli.reuse", "stage_results"),
    "apply-decision": ("infx.cli.reuse", "apply_decision"),
    "merge": ("infx.cli.merge", "merge"),
}


class InfxGroup(click.Group):
    """Turns domain errors into one line on stderr and the matching exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attribute = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

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


def main() -> None:
    cli(prog_name="infx")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
