"""`infx changelog check` without --base: a contributor's branch, checked against where it
left main, with placeholders allowed (the pre-commit hook runs exactly this)."""

from __future__ import annotations

import pytest

from tests.changelog.conftest import REAL_KEY, UPSTREAM_LINK, real_entry
from tests.conftest import HISTORY, LINK, GitRepo, entry


def _branch(repo: GitRepo) -> None:
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")


def test_a_placeholder_passes_on_a_branch(repo: GitRepo) -> None:
    _branch(repo)
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    result = repo.infx("changelog", "check")
    assert result.exit_code == 0, result.output
    assert "1 appended entry" in result.output


def test_a_wrong_link_on_a_branch_never_mentions_main(repo: GitRepo) -> None:
    _branch(repo)
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link="pull/PENDING"))
    result = repo.infx("changelog", "check")
    assert result.exit_code == 1
    assert "a branch keeps the XXX placeholder until its PR merges" in result.output
    assert f"use XXX or {LINK}XXX or {LINK}<number>" in result.output
    assert "on main" not in result.output


def test_history_rules_apply_against_the_merge_base(repo: GitRepo) -> None:
    _branch(repo)
    repo.commit("branch work", **{"perf-changelog.yaml": HISTORY + "\n" + entry()})
    # main moves on after the branch left it: its new entry is not this branch's deletion
    later = HISTORY + "\n" + entry(link=f"{LINK}3", description="main's own change")
    repo.git("checkout", "-q", "main")
    repo.commit("main moves", **{"perf-changelog.yaml": later})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "feature")
    assert repo.infx("changelog", "check").exit_code == 0
    repo.write("perf-changelog.yaml", HISTORY.replace("Bring up", "Brought up") + "\n" + entry())
    edited = repo.infx("changelog", "check")
    assert edited.exit_code == 1 and "history" in edited.output


def test_upstream_main_is_preferred_over_a_forks_origin(repo: GitRepo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.commit("fork-only entry", **{"perf-changelog.yaml": HISTORY + "\n" + entry()})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("update-ref", "refs/remotes/upstream/main", base)
    # Against upstream, the fork's own unmerged entry is still an appended entry.
    result = repo.infx("changelog", "check", "--head", "HEAD")
    assert result.exit_code == 0 and "1 appended entry" in result.output


def test_without_a_main_to_compare_with_the_fix_is_named(repo: GitRepo) -> None:
    repo.git("branch", "-m", "main", "trunk")
    result = repo.infx("changelog", "check")
    assert result.exit_code == 2
    assert "git fetch origin main" in result.output and "--base" in result.output


def test_a_clone_with_no_remote_compares_with_its_local_main(repo: GitRepo) -> None:
    """A user's own clone (no origin/main fetched): the local main branch is where the
    branch left main, so the default options still check exactly the appended entry."""
    repo.git("remote", "remove", "origin")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    result = repo.infx("changelog", "check")
    assert result.exit_code == 0, result.output
    assert "1 appended entry" in result.output
    repo.write("perf-changelog.yaml", HISTORY.replace("Bring up", "Brought up") + "\n" + entry())
    edited = repo.infx("changelog", "check")
    assert edited.exit_code == 1 and "history" in edited.output


def test_links_follow_the_repository_the_history_names(repo: GitRepo) -> None:
    """No --repo, settings, GITHUB_REPOSITORY or remote: every canonical link of history
    names one repository, so links must point there (and the user is told it was inferred)."""
    repo.git("remote", "remove", "origin")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(
        "perf-changelog.yaml", HISTORY + "\n" + entry(link="https://github.com/else/where/pull/9")
    )
    wrong = repo.infx("changelog", "check")
    assert wrong.exit_code == 1 and f"use XXX or {LINK}XXX or {LINK}<number>" in wrong.output
    assert "taken from the changelog's own pr-links" in wrong.output
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link=f"{LINK}9"))
    assert repo.infx("changelog", "check").exit_code == 0


def test_a_history_naming_two_repositories_is_no_answer(repo: GitRepo) -> None:
    repo.git("remote", "remove", "origin")
    two = HISTORY + "\n" + entry(link="https://github.com/else/where/pull/3")
    repo.commit("an entry of another repository", **{"perf-changelog.yaml": two})
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("perf-changelog.yaml", two + "\n" + entry())
    result = repo.infx("changelog", "check")
    assert result.exit_code == 2 and "cannot tell the repository" in result.output


def _diverged(
    repo: GitRepo, ours_says: str = "branch change", theirs_says: str = "main's own change"
) -> tuple[str, str]:
    """A branch and main that both appended an entry since the branch left main."""
    _branch(repo)
    ours = HISTORY + "\n" + entry(description=ours_says)
    repo.commit("branch work", **{"perf-changelog.yaml": ours})
    theirs = HISTORY + "\n" + entry(link=f"{LINK}3", description=theirs_says)
    repo.git("checkout", "-q", "main")
    repo.commit("main moves", **{"perf-changelog.yaml": theirs})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "feature")
    return ours, theirs


def test_a_merge_that_drops_mains_entry_fails(repo: GitRepo) -> None:
    """The contributor took their own side of the conflict: main's entry would be lost."""
    _, theirs = _diverged(repo)
    repo.git("merge", "--no-edit", "origin/main", check=False)
    repo.git("checkout", "--ours", "perf-changelog.yaml")
    repo.git("add", "perf-changelog.yaml")
    result = repo.infx("changelog", "check")
    assert result.exit_code == 1, result.output
    assert "this merge drops the entry main added at its line 13" in result.output
    both = theirs + "\n" + entry(description="branch change")
    repo.write("perf-changelog.yaml", both)
    assert repo.infx("changelog", "check").exit_code == 0


def test_a_merge_that_drops_the_branchs_entry_fails(repo: GitRepo) -> None:
    _, theirs = _diverged(repo)
    repo.git("merge", "--no-edit", "origin/main", check=False)
    repo.write("perf-changelog.yaml", theirs)
    repo.git("add", "perf-changelog.yaml")
    result = repo.infx("changelog", "check")
    assert result.exit_code == 1, result.output
    assert "this merge drops the entry the branch added at its line 13" in result.output


@pytest.mark.parametrize("kept", ["main", "branch"])
def test_a_merge_that_keeps_one_of_two_alike_entries_fails(repo: GitRepo, kept: str) -> None:
    """Main and the branch each appended an entry that reads the same (another PR's run of
    the same sweep): the driver conflicts, and a resolution that keeps one of them loses
    the other. Each entry of the result stands for one entry of one side."""
    ours, theirs = _diverged(repo, "Rerun the sweep", "Rerun the sweep")
    repo.git("merge", "--no-edit", "origin/main", check=False)
    repo.write("perf-changelog.yaml", theirs if kept == "main" else ours)
    repo.git("add", "perf-changelog.yaml")
    result = repo.infx("changelog", "check")
    assert result.exit_code == 1, result.output
    lost = "the branch" if kept == "main" else "main"
    assert f"this merge drops the entry {lost} added at its line 13" in result.output
    repo.write("perf-changelog.yaml", theirs + "\n" + entry(description="Rerun the sweep"))
    assert repo.infx("changelog", "check").exit_code == 0


def test_merging_a_branch_into_main_is_checked_against_main(repo: GitRepo) -> None:
    _diverged(repo)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "--no-edit", "feature", check=False)
    repo.git("checkout", "--theirs", "perf-changelog.yaml")
    repo.git("add", "perf-changelog.yaml")
    result = repo.infx("changelog", "check")
    assert result.exit_code == 1, result.output
    assert "this merge drops the entry main added at its line 13" in result.output


# --- one default for --base (on the real InferenceX layout) --------------------------------


def test_every_command_defaults_to_where_the_branch_left_main(inferencex: GitRepo) -> None:
    """check, fix, canonicalize and sweep plan, each with no --base, on a contributor's
    branch: all compare with the merge base of HEAD and origin/main."""
    history = inferencex.read().decode()
    inferencex.commit("aiter", **{"perf-changelog.yaml": history + real_entry(link="TBD")})
    # main moves on after the branch left it; the branch is still compared where it left
    inferencex.git("checkout", "-q", "main")
    later = history + real_entry(key="dsv4-fp4-mi355x-sglang", link=f"{UPSTREAM_LINK}3001")
    inferencex.commit("main moves", **{"perf-changelog.yaml": later})
    inferencex.git("update-ref", "refs/remotes/origin/main", "HEAD")
    inferencex.git("checkout", "-q", "feature")

    assert "'TBD' is not accepted" in inferencex.infx("changelog", "check").output
    fixed = inferencex.infx("changelog", "fix")
    assert fixed.exit_code == 0 and "pr-link 'TBD' -> XXX" in fixed.output
    assert inferencex.infx("changelog", "check").exit_code == 0
    planned = inferencex.infx("sweep", "plan", "--format", "text")
    assert planned.exit_code == 0, planned.output
    assert f"| {REAL_KEY} |" in planned.stdout and "dsv4-fp4-mi355x-sglang |" not in planned.stdout
    done = inferencex.infx("changelog", "canonicalize", "--pr", "3058")
    assert done.exit_code == 0, done.output
    assert inferencex.read().decode() == history + real_entry(link=f"{UPSTREAM_LINK}3058")


def test_the_base_option_reads_the_same_everywhere() -> None:
    from infx.cli.changelog import changelog
    from infx.cli.sweep import sweep

    commands = [changelog.commands[n] for n in ("check", "fix", "canonicalize")]
    helps = {
        p.help for c in [*commands, sweep.commands["plan"]] for p in c.params if p.name == "base"
    }
    assert len(helps) == 1, helps
    (text,) = helps
    assert "merge base of HEAD and upstream/main, else origin/main" in str(text)
