"""The `infx` command line: a thin click layer over the pure core.

Command groups are imported only when they run, so `infx --help` and a gate run do not
pay for PyGithub, jsonschema or YAML libraries they never use.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from infx.argv import not_utf8
from infx.errors import EXIT_CODES, EXIT_USAGE, InfxError, escape_message, os_error_line, printable

# name -> (module:attribute in infx.cli, the one-line help `infx --help` shows)
# fmt: off
COMMANDS: dict[str, tuple[str, str]] = {
    "changelog": ("changelog:changelog", "Check and rewrite perf-changelog.yaml."),
    "sweep": ("sweep:sweep", "Plan and check benchmark sweeps."),
    "review": ("review:review", "Maintainer checks of a PR: code-owner sign-off, Pareto coverage."),
    "reuse": ("reuse:reuse", "Reuse a PR's green sweep at merge (/reuse-sweep-run)."),
    "stage-results": ("reuse:stage_results", "Handle a /stage-results [<run_id>] comment."),
    "apply-decision": ("reuse:apply_decision", "React, dispatch and set the status a `--decide-only` comment command decided."),
    "merge": ("merge:merge", "Merge a pull request on GitHub: links, reused sweep, checks (not the git driver)."),
    "rerun-failed": ("rerun:rerun_failed", "Handle a /rerun-failed [<run_id>] comment: rerun a sweep's jobs without a result."),
    "receipt": ("provenance:receipt", "Seal what a sweep run published; store receipts beside the history's rows."),
    "results": ("results:results", "Turn benchmark output into result rows; collect and compare them."),
    "security": ("security:security", "Check the settings that keep fork code off the GPU runners (via the API)."),
    "site": ("site:site", "Build the static results site from main's history (infx[compare])."),
    "workflows": ("workflows:workflows", "Check the workflow files against the settings (sweep label names)."),
}
# fmt: on


def _with_exit_codes(command: click.Command) -> None:
    """Every command's help ends with the exit codes, in the same words."""
    command.epilog = EXIT_CODES
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_exit_codes(sub)


class LazyGroup(click.Group):
    """A group whose commands named in `lazy` (name -> module:attribute in infx.cli) are
    imported on first use, so a command pays only for the modules it runs."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.lazy, *self.commands})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in self.lazy:
            return self.commands.get(name)
        module, attribute = self.lazy[name].split(":")
        command = getattr(importlib.import_module(f"infx.cli.{module}"), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}.{attribute} is not a click command")
        _with_exit_codes(command)
        self.add_command(command, name)
        return command


class InfxGroup(LazyGroup):
    """Loads commands on demand and turns domain errors into one line and an exit code."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Every argument of every command is text, or no command runs (infx.argv)."""
        if not ctx.resilient_parsing and (bad := not_utf8(args)) is not None:
            click.echo(f"infx: error: argument {bad} is not valid UTF-8", err=True)
            ctx.exit(EXIT_USAGE)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InfxError as exc:  # printable: a message quotes input, ESC and all
            click.echo(f"infx: error: {printable(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            click.echo(f"infx: error: {os_error_line(exc)}", err=True)
            ctx.exit(EXIT_USAGE)
        except (click.ClickException, click.exceptions.Exit, click.Abort) as exc:
            escape_message(exc)  # click's own usage errors quote some arguments raw
            raise
        except Exception as exc:
            from infx.crash import report

            ctx.exit(report(exc))


def _version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from infx.context import which

        click.echo(which())
        ctx.exit()


@click.group(
    cls=InfxGroup,
    lazy={name: where for name, (where, _) in COMMANDS.items()},
    epilog=EXIT_CODES,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version, help="Show the version, the package that answers and its distribution, then exit.")  # fmt: skip
def cli() -> None:
    """CI for GPU inference benchmark repositories: changelog gate, sweep planning, comment
    commands.

    A usage or environment error is a bad option, an unknown ref, an unreadable file or an
    API failure. INFX_DEBUG=1 prints the traceback of an internal error.
    """


def main() -> None:
    cli(prog_name="infx")
