"""Options several commands share, whose defaults come from the repository's settings.

A value given on the command line wins; otherwise the callback fills in infx.toml's
(or `[tool.infx]`'s) value, else the built-in default, so every command reads the same
files without each one resolving settings on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.decorators import FC

from infx import git
from infx.context import branch_base as branch_base
from infx.errors import printable
from infx.numbers import PR_NUMBERS, SQLITE_INTEGER_END, decimal
from infx.settings import SWEEP_WORKFLOW, Settings
from infx.settings import load as load_settings
from infx.yamlio import atomic_write

if TYPE_CHECKING:
    from infx.sweep.outcome import Outcome

_KEY = "infx.settings"
T = TypeVar("T")
# The path types of every command: a file to write, a folder, a path that must exist
# (file or folder), a file and a folder that must exist.
PATH = click.Path(path_type=Path)
FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)
EXISTING = click.Path(exists=True, path_type=Path)
EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
EXISTING_FOLDER = click.Path(exists=True, file_okay=False, path_type=Path)
# An option whose help shows its default.
shown = partial(click.option, show_default=True)


class FiniteRange(click.FloatRange):
    """FloatRange refusing NaN (it compares false with both bounds, so passes every check)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        return self.fail(f"{value!r} is not a number", param, ctx) if number != number else number


class Stored(click.IntRange):
    """ASCII digits (int() takes `٣`, `+1`, `1_0`) from `low` below `end`, a power of two: a run
    id, attempt or concurrency the history can store (2**63 overflowed SQLite), or a PR."""

    def __init__(self, low: int = 1, end: int = SQLITE_INTEGER_END) -> None:
        super().__init__(low, end - 1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and decimal(value, below=(end := int(self.max or 0) + 1)) is None:  # fmt: skip
            self.fail(f"{value!r} is not a whole number from {self.min} below 2**{end.bit_length() - 1:d}", param, ctx)  # fmt: skip
        return super().convert(value, param, ctx)


def request(kind: Callable[..., T], options: Mapping[str, object]) -> T:
    """A use case's request from a command's options, which click parsed and typed."""
    return kind(**options)


def emit(outcome: Outcome) -> None:
    """Write what a use case decided: stderr lines, files, step outputs, stdout lines and
    the step summary, then raise its error. The Actions edge is imported here: commands
    that never emit (the gate) start without it."""
    from infx.github.actions import append_summary, set_outputs

    for line in outcome.stderr:  # warnings quote input: a path, a key, an API's answer
        click.echo(printable(line), err=True)
    for path, data in outcome.files.items():
        if outcome.make_folders:
            path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    if outcome.outputs:
        set_outputs(outcome.outputs)
    for line in outcome.stdout:
        click.echo(line)
    if outcome.summary:
        append_summary(outcome.summary)
    if outcome.error is not None:
        raise outcome.error


def settings(ctx: click.Context) -> Settings:
    """The settings of the repository the command runs in, read once per invocation."""
    if _KEY not in ctx.meta:
        ctx.meta[_KEY] = load_settings(git.root())
    found: Settings = ctx.meta[_KEY]
    return found


def _from_settings(attribute: str) -> Any:
    def fill(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        return value if value else getattr(settings(ctx), attribute)

    return fill


def _setting_option(
    flag: str, dest: str, attribute: str, what: str, **extra: Any
) -> Callable[[FC], FC]:
    key = attribute.replace("_", "-")
    default = getattr(Settings(), attribute)
    shown = ", ".join(default) if isinstance(default, tuple) else default
    return click.option(
        flag,
        dest,
        callback=_from_settings(attribute),
        help=f"{what} Default: {key} in infx.toml, else {shown}.",
        **extra,
    )


# fmt: off
changelog_file = _setting_option("--file", "path", "changelog", "Changelog path from the repository root.")
master_configs = _setting_option("--config", "config_globs", "master_configs", "Master config files, as a glob whose '*' stays within one folder; repeat for several.", multiple=True)
runners_file = _setting_option("--runners", "runners_path", "runners", "Runner labels and hardware file.")
PR_NUMBER = Stored(PR_NUMBERS.start, PR_NUMBERS.stop)  # a pull request's number, as the site links it
# fmt: on


# The help of the options several commands share, by flag.
HELP = {
    "links --repo": "OWNER/NAME the pr-links point at. Default: repository in infx.toml, else GITHUB_REPOSITORY, else the upstream or origin remote.",
    "api --repo": "OWNER/NAME to talk to on GitHub. Default: GITHUB_REPOSITORY, else repository in infx.toml, else the upstream or origin remote.",
    "--history": "Where main's results history is: an SQLite path or sqlite:/// URL, or a postgresql:// URL. Default: INFX_HISTORY_URL, else `history` in infx.toml, else .infx/history.sqlite.",
    "--base": "Ref the change is compared against. Default: where this branch left main, the merge base of HEAD and upstream/main, else origin/main, else the local main branch (main-branch in infx.toml names main).",
}
# --repo, by the two precedences of infx.context: where pr-links point, and which
# repository the API talks to (inside Actions, the one the run belongs to).
links_repo_option = click.option("--repo", help=HELP["links --repo"])
api_repo_option = click.option("--repo", help=HELP["api --repo"])
# --history of the commands that read or write the results history database.
history_option = click.option("--history", "history_url", metavar="URL", help=HELP["--history"])
base_option = click.option("--base", help=HELP["--base"])


def env_option(flag: str, variable: str, **extra: Any) -> Callable[[FC], FC]:
    """An option a workflow step leaves to its environment: `variable`, also its help."""
    return click.option(flag, envvar=variable, help=variable, **extra)


class HiddenAlias(click.Option):
    """An option whose first name is shown in the help and whose other names, the old
    spellings of a renamed option, still work unseen."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        names, self.opts = self.opts, self.opts[:1]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = names


# The sweep workflow whose runs the comment commands, reuse and reruns read.
workflow_option = shown(
    "--workflow-id", "workflow", default=SWEEP_WORKFLOW, help="File name of the sweep workflow."
)


# --workflow-id as the sweep commands spell it, for the results commands, whose old name for
# it (--workflow) still works unseen; each command gives its default and help.
workflow_id = partial(shown, "--workflow-id", "--workflow", "workflow", cls=HiddenAlias)
