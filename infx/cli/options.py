"""Options several commands share, whose defaults come from the repository's settings.

A value given on the command line wins; otherwise the callback fills in infx.toml's
(or `[tool.infx]`'s) value, else the built-in default, so every command reads the same
files without each one resolving settings on its own.
"""

from __future__ import annotations

from typing import Any

import click

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.matrix import MASTER_GLOB, RUNNERS_FILE
from infx.settings import Settings
from infx.settings import load as load_settings

_KEY = "infx.settings"


def settings(ctx: click.Context) -> Settings:
    """The settings of the repository the command runs in, read once per invocation."""
    if _KEY not in ctx.meta:
        ctx.meta[_KEY] = load_settings(git.root())
    found: Settings = ctx.meta[_KEY]
    return found


def _from_settings(attribute: str) -> Any:
    def fill(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        return value if value else getattr(settings(ctx), attribute)

    return fill


changelog_file = click.option(
    "--file",
    "path",
    callback=_from_settings("changelog"),
    help=f"Changelog path from the repository root. Default: changelog in infx.toml, "
    f"else {CHANGELOG_FILE}.",
)
master_configs = click.option(
    "--config",
    "config_globs",
    multiple=True,
    callback=_from_settings("master_configs"),
    help=f"Master config files, as a glob whose '*' stays within one folder; repeat for "
    f"several. Default: master-configs in infx.toml, else {MASTER_GLOB}.",
)
runners_file = click.option(
    "--runners",
    "runners_path",
    callback=_from_settings("runners"),
    help=f"Runner labels and hardware file. Default: runners in infx.toml, else {RUNNERS_FILE}.",
)
