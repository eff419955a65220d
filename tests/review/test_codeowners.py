"""CODEOWNERS read as GitHub reads it: GitHub's documented examples, last match wins, and
the lines GitHub would skip refused (a sign-off never passes on rules it cannot read)."""

from __future__ import annotations

import pytest

from infx.errors import ReviewError
from infx.review.codeowners import parse

# GitHub's example file (docs: "About code owners"), trimmed to what infx reads.
EXAMPLE = """\
# Default owners for everything in the repo.
*       @global-owner1 @global-owner2

# Order is important; the last matching pattern takes the most precedence.
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
"""


@pytest.mark.parametrize(
    ("path", "owners"),
    [
        ("README.md", ("@global-owner1", "@global-owner2")),
        ("src/app.js", ("@js-owner",)),
        ("main.go", ("docs@example.com",)),
        ("notes/a.txt", ("@octo-org/octocats",)),
        ("build/logs/today.log", ("@octocat",)),  # **/logs comes later and wins
        ("docs/getting-started.md", ("@doctocat",)),  # /docs/ wins over docs/*
        ("scripts/run.sh", ("@doctocat", "@octocat")),
        ("deeply/nested/logs/x.txt", ("@octocat",)),
        ("apps/web/index.html", ("@octocat",)),
        ("apps/github/readme.md", ()),  # a pattern with no owners: nobody owns it
        ("x/apps/y.py", ("@octocat",)),  # apps/ matches a folder at any depth
    ],
)
def test_github_documented_example(path: str, owners: tuple[str, ...]) -> None:
    assert parse(EXAMPLE).owners_of(path) == owners


def test_the_last_matching_line_wins_and_owners_do_not_add_up() -> None:
    rules = parse("configs/ @amd @nvidia\nconfigs/nvidia-master.yaml @nvidia\n")
    assert rules.owners_of("configs/nvidia-master.yaml") == ("@nvidia",)
    assert rules.owners_of("configs/amd-master.yaml") == ("@amd", "@nvidia")


def test_a_wildcard_in_the_last_part_does_not_reach_into_subfolders() -> None:
    rules = parse("docs/* @docs\n")
    assert rules.owners_of("docs/a.md") == ("@docs",)
    assert rules.owners_of("docs/build/b.md") == ()
    assert rules.owners_of("other/docs/a.md") == ()  # a middle slash anchors at the root


def test_paths_are_case_sensitive_and_question_mark_is_one_character() -> None:
    rules = parse("/Configs/ @upper\nfile?.txt @q\n")
    assert rules.owners_of("Configs/a.yaml") == ("@upper",)
    assert rules.owners_of("configs/a.yaml") == ()
    assert rules.owners_of("x/file1.txt") == ("@q",)
    assert rules.owners_of("file12.txt") == ()


def test_double_star_spans_folders() -> None:
    rules = parse("a/**/b @x\nrecipes/** @r\n")
    assert rules.owners_of("a/b") == ("@x",)
    assert rules.owners_of("a/1/2/b/c.sh") == ("@x",)
    assert rules.owners_of("recipes/dsv4/run.sh") == ("@r",)
    assert rules.owners_of("other/recipes/x") == ()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("!docs/ @a", "negated"),
        ("docs/[ab].md @a", "character range"),
        ("\\#hash @a", "escape"),
        ("docs/ octocat", "not an @user"),
        ("docs/ @org/team/extra", "not an @user"),
    ],
)
def test_lines_github_would_skip_make_the_file_unreadable(line: str, why: str) -> None:
    with pytest.raises(ReviewError, match=why) as caught:
        parse(f"* @all\n{line}\n", ".github/CODEOWNERS")
    assert ".github/CODEOWNERS:2" in str(caught.value)
