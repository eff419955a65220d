"""docs/review.md as it stands: its command lines name real commands and options, its
settings, policy and CODEOWNERS blocks are read by infx as written, and what the page says
the example CODEOWNERS asks of three PRs is what the sign-off decides."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from infx.cli import cli
from infx.github.values import ChangedFile, PullScope
from infx.review.codeowners import parse
from infx.review.priority import parse_policy
from infx.review.signoff import SignoffFacts, decide
from infx.settings import parse as parse_settings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "review.md"
TEXT = PAGE.read_text()


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", TEXT, flags=re.S)


@pytest.mark.parametrize("line", [ln for b in blocks("sh") for ln in b.splitlines() if ln])
def test_each_command_line_names_a_real_command_and_its_options(line: str) -> None:
    words = line.split()
    assert words[0] == "infx"
    path = [w for w in words[1:3] if re.fullmatch(r"[a-z-]+", w)]
    shown = CliRunner().invoke(cli, [*path, "--help"])
    assert shown.exit_code == 0, shown.output
    for option in re.findall(r"--[a-z-]+", line):
        assert option in shown.output, f"{' '.join(path)} has no {option}"


def test_the_settings_block_is_infx_settings() -> None:
    (block,) = blocks("toml")
    found = parse_settings(tomllib.loads(block), "docs/review.md").review
    assert found.exempt == ("@acme/core",) and found.pareto_points == 5


def test_the_policy_block_is_a_policy() -> None:
    (block,) = blocks("yaml")
    policy = parse_policy(yaml.safe_load(block), "docs/review.md")
    assert not policy.runner_labels  # off unless a scheduler registers runners


@pytest.mark.parametrize(
    ("paths", "needs"),
    [
        (("README.md",), set()),
        (("configs/amd-master.yaml",), {"@amd-owner"}),
        (("configs/amd-master.yaml", "recipes/run.sh"), {"@amd-owner", "@recipe-owner"}),
    ],
)
def test_the_codeowners_example_asks_what_the_page_says(
    paths: tuple[str, ...], needs: set[str]
) -> None:
    (block,) = blocks("text")
    (settings,) = blocks("toml")
    exempt = parse_settings(tomllib.loads(settings), "docs").review.exempt
    facts = SignoffFacts(
        PullScope(7, "open", False, "author", "a" * 40, "b" * 40, "main", len(paths)),
        tuple(ChangedFile(p) for p in paths),
        parse(block),
        (),
        {"amd-owner": "write", "nv-owner": "write", "recipe-owner": "write"},
        {},
        frozenset(exempt),
        "perf-changelog.yaml",
        None,
    )
    verdict = decide(facts)
    assert {o for g in verdict.groups if g.missing for o in g.owners} == needs
