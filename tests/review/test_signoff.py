"""The sign-off decision on values, tried as an attacker would: every input below that
could make it say "signed off" wrongly is a case here (the end-to-end twins, through the
fake GitHub API, are in test_signoff_command.py)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

import pytest

from infx.github.values import ChangedFile, PullScope, Review
from infx.review.codeowners import parse
from infx.review.signoff import SignoffFacts, comment, decide

HEAD, OLD = "a" * 40, "c" * 40
CODEOWNERS = """\
* @acme/core
configs/amd-master.yaml @amd-owner
configs/nvidia-master.yaml @nv-owner @acme/nvidia
recipes/ @recipe-owner
docs/ ops@example.com
"""
PULL = PullScope(7, "open", False, "author", HEAD, "b" * 40, "main", 1)
PERMISSIONS = {
    "amd-owner": "write", "nv-owner": "write", "recipe-owner": "write", "author": "write",
    "nv-member": "write", "boss": "admin", "reader": "read",
}  # fmt: skip


def approve(login: str, commit: str = HEAD, minute: int = 1, state: str = "APPROVED", bot: bool = False) -> Review:  # fmt: skip
    return Review(minute, login, bot, state, commit, datetime(2026, 9, 1, 12, minute))


def facts(*paths: str, reviews: tuple[Review, ...] = (), **changes: object) -> SignoffFacts:
    files = tuple(ChangedFile(p) for p in paths)
    base = SignoffFacts(
        replace(PULL, changed_files=len(files)),
        files,
        parse(CODEOWNERS),
        reviews,
        PERMISSIONS,
        {"@acme/nvidia": frozenset({"nv-member"}), "@acme/core": frozenset({"boss"})},
        frozenset({"@acme/core"}),
        "perf-changelog.yaml",
        None,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_an_owner_approving_the_head_signs_off() -> None:
    verdict = decide(facts("configs/amd-master.yaml", reviews=(approve("amd-owner"),)))
    assert verdict.passed and verdict.state == "success"
    assert verdict.counted == ("@amd-owner",)


def test_files_owned_only_by_an_exempt_team_need_no_sign_off() -> None:
    verdict = decide(facts("README.md", "infx/cli.py"))
    assert not verdict.required and verdict.passed
    assert verdict.description == "No changed file needs a code-owner sign-off"


def test_admin_owners_are_exempt_but_other_owners_of_the_file_are_not() -> None:
    owners = parse("a.txt @boss\nb.txt @boss @amd-owner\n")
    assert not decide(facts("a.txt", codeowners=owners)).required
    verdict = decide(facts("b.txt", codeowners=owners))
    assert verdict.required and not verdict.passed
    assert decide(facts("b.txt", codeowners=owners, reviews=(approve("boss"),))).passed


def test_a_comment_is_not_a_sign_off() -> None:
    said = approve("amd-owner", state="COMMENTED")
    assert not decide(facts("configs/amd-master.yaml", reviews=(said,))).passed


def test_a_non_owner_approval_signs_off_nothing() -> None:
    verdict = decide(facts("configs/amd-master.yaml", reviews=(approve("nv-owner"),)))
    assert not verdict.passed
    assert verdict.description == "Waiting for a sign-off from @amd-owner"


def test_an_approval_of_an_earlier_commit_does_not_count() -> None:
    verdict = decide(facts("configs/amd-master.yaml", reviews=(approve("amd-owner", OLD),)))
    assert not verdict.passed
    assert "@amd-owner: approved an earlier commit (ccccccc)" in verdict.ignored


@pytest.mark.parametrize("later", ["DISMISSED", "CHANGES_REQUESTED"])
def test_a_dismissed_or_withdrawn_approval_does_not_count(later: str) -> None:
    reviews = (approve("amd-owner", minute=1), approve("amd-owner", minute=2, state=later))
    assert not decide(facts("configs/amd-master.yaml", reviews=reviews)).passed


def test_a_comment_after_an_approval_keeps_it() -> None:
    reviews = (approve("amd-owner", minute=1), approve("amd-owner", minute=2, state="COMMENTED"))
    assert decide(facts("configs/amd-master.yaml", reviews=reviews)).passed


def test_an_owner_cannot_sign_off_their_own_pull_request() -> None:
    pull = replace(PULL, author="amd-owner", changed_files=1)
    verdict = decide(facts("configs/amd-master.yaml", pull=pull, reviews=(approve("amd-owner"),)))
    assert not verdict.passed
    assert "@amd-owner: the PR's author" in verdict.ignored


def test_an_owner_without_write_permission_cannot_sign_off() -> None:
    owners = parse("x.yaml @reader\n")
    verdict = decide(facts("x.yaml", codeowners=owners, reviews=(approve("reader"),)))
    assert not verdict.passed
    assert "@reader: read permission on the repository" in verdict.ignored


def test_a_bot_cannot_sign_off() -> None:
    owners = parse("x.yaml @helper\n")
    perms = {**PERMISSIONS, "helper": "write"}
    reviews = (approve("helper", bot=True),)
    assert not decide(facts("x.yaml", codeowners=owners, permissions=perms, reviews=reviews)).passed


def test_a_rename_needs_the_owners_of_the_old_path_too() -> None:
    moved = (ChangedFile("misc/amd.yaml", previous="configs/amd-master.yaml"),)
    verdict = decide(facts(files=moved, pull=replace(PULL, changed_files=1)))
    assert verdict.required and not verdict.passed
    assert any("configs/amd-master.yaml" in g.paths and g.missing for g in verdict.groups)


def test_every_owned_file_needs_its_own_owner() -> None:
    paths = ("configs/amd-master.yaml", "recipes/x.sh")
    assert not decide(facts(*paths, reviews=(approve("amd-owner"),))).passed
    both = (approve("amd-owner"), approve("recipe-owner", minute=2))
    assert decide(facts(*paths, reviews=both)).passed


def test_a_team_member_signs_for_the_team_and_an_unreadable_team_for_no_one() -> None:
    path = "configs/nvidia-master.yaml"
    assert decide(facts(path, reviews=(approve("nv-member"),))).passed
    hidden = facts(path, reviews=(approve("nv-member"),), teams={"@acme/nvidia": None})
    verdict = decide(hidden)
    assert not verdict.passed
    assert any("cannot read this team" in note for note in verdict.notes)


def test_an_email_owner_is_satisfied_by_no_review() -> None:
    verdict = decide(facts("docs/a.md", reviews=(approve("amd-owner"),)))
    assert not verdict.passed and any("email owner" in n for n in verdict.notes)


def test_owner_logins_match_whatever_their_case() -> None:
    owners = parse("x.yaml @AMD-Owner\n")
    assert decide(facts("x.yaml", codeowners=owners, reviews=(approve("amd-owner"),))).passed


def test_no_codeowners_at_the_base_means_nothing_is_owned() -> None:
    verdict = decide(facts("configs/amd-master.yaml", codeowners=None))
    assert not verdict.required and verdict.passed


@pytest.mark.parametrize(
    ("touched", "check", "pareto"),
    [
        (False, None, "n/a"),
        (True, None, "unverified"),
        (True, "success", "pass"),
        (True, "neutral", "warn"),
    ],
)
def test_the_pareto_line_is_advisory(touched: bool, check: str | None, pareto: str) -> None:
    paths = ("perf-changelog.yaml",) if touched else ("README.md",)
    verdict = decide(facts(*paths, pareto=check))
    assert verdict.pareto == pareto and verdict.passed  # never changes the status
    body = comment(verdict, ("@perf-lead", "@acme/perf"), 5)
    assert ("@perf-lead @acme/perf" in body) is (pareto in ("warn", "unverified"))


def test_the_verdict_escapes_what_the_pr_controls() -> None:
    path = "recipes/<img src=x onerror=alert(1)>@everyone.sh"
    body = comment(decide(facts(path)), (), 5)
    assert f"`{path}`" in body  # a code span: GitHub shows it as text, tag and mention inert
    outside = re.sub(r"`[^`]*`", "", body)
    assert "<img" not in outside and "@everyone" not in outside
