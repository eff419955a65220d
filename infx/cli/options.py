"""Options several commands share, whose defaults come from the repository's settings.

A value given on the command line wins; otherwise the callback fills in infx.toml's
(or `[tool.infx]`'s) value, else the built-in default, so every command reads the same
files without each one resolving settings on its own.
"""

from __future__ import annotations

from typing import Any

import click

from infx import git
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


def _setting_option(flag: str, dest: str, attribute: str, what: str, **extra: Any) -> Any:
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


changelog_file = _setting_option(
    "--file", "path", "changelog", "Changelog path from the repository root."
)
master_configs = _setting_option(
    "--config",
    "config_globs",
    "master_configs",
    "Master config files, as a glob whose '*' stays within one folder; repeat for several.",
    multiple=True,
)
runners_file = _setting_option(
    "--runners", "runners_path", "runners", "Runner labels and hardware file."
)
