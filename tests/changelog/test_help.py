"""The changelog commands' own help (issue #10, item 5); every command's options and exit
codes: tests/test_cli.py."""

from __future__ import annotations

import click
from click.testing import CliRunner

from infx.cli import cli
from infx.cli.changelog import changelog

COMMANDS = sorted(changelog.commands)


def test_canonicalize_help_names_both_placeholder_forms() -> None:
    result = CliRunner().invoke(cli, ["changelog", "canonicalize", "--help"])
    text = " ".join(result.output.split())
    assert "XXX and https://github.com/OWNER/REPO/pull/XXX" in text


def test_fix_is_listed_with_what_it_does() -> None:
    result = CliRunner().invoke(cli, ["changelog", "--help"])
    assert "fix" in COMMANDS and "Apply the mechanical fixes" in result.output


def test_the_short_help_in_infx_help_matches_each_command() -> None:
    from infx.cli import COMMANDS

    ctx = click.Context(cli)
    for name, (_, short) in COMMANDS.items():
        first = (cli.get_command(ctx, name).help or "").strip().splitlines()[0]
        assert short.rstrip(".").split()[0].lower() in first.lower(), (name, first)
