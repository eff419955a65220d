"""Help a user can act on (issue #10, item 5): every option explained, exit codes, forms."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.cli.changelog import changelog

COMMANDS = sorted(changelog.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_has_help(name: str) -> None:
    command = changelog.commands[name]
    assert command.help
    missing = [
        p.name for p in command.params if isinstance(p, click.Option) and not (p.help or "").strip()
    ]
    assert missing == []


@pytest.mark.parametrize("args", [["--help"], ["changelog", "--help"]])
def test_group_help_lists_exit_codes(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    text = " ".join(result.output.split())
    assert result.exit_code == 0
    assert "Exit codes: 0 ok, 1 a rule is broken, 2 usage or environment error" in text


def test_canonicalize_help_names_both_placeholder_forms() -> None:
    result = CliRunner().invoke(cli, ["changelog", "canonicalize", "--help"])
    text = " ".join(result.output.split())
    assert "XXX and https://github.com/OWNER/REPO/pull/XXX" in text


def test_fix_is_listed_with_what_it_does() -> None:
    result = CliRunner().invoke(cli, ["changelog", "--help"])
    assert "fix" in COMMANDS and "Apply the mechanical fixes" in result.output


def _every_command():
    from infx.cli import COMMANDS

    def walk(command: click.Command, path: tuple[str, ...]):
        yield path, command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))

    ctx = click.Context(cli)
    for name in COMMANDS:
        yield from walk(cli.get_command(ctx, name), (name,))


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [
        f"infx {' '.join(path)} {param.opts[0]}"
        for path, command in _every_command()
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert missing == []
    undocumented = [" ".join(path) for path, command in _every_command() if not command.help]
    assert undocumented == []


def test_the_short_help_in_infx_help_matches_each_command() -> None:
    from infx.cli import COMMANDS

    ctx = click.Context(cli)
    for name, (_, _, short) in COMMANDS.items():
        first = (cli.get_command(ctx, name).help or "").strip().splitlines()[0]
        assert short.rstrip(".").split()[0].lower() in first.lower(), (name, first)
