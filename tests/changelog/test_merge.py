"""Changelog merge conflicts resolve without a human: resolve-conflict and the merge driver."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HISTORY, LINK, GitRepo, entry
from tests.readme import use_readme_driver

MAIN_ENTRY = entry(keys=["llama-fp8-mi355x-sglang"], link=f"{LINK}30", description="Main change")
PR_ENTRY = entry(description="PR change")


def diverge(repo: GitRepo) -> None:
    """main and a PR branch both append after the same base, so git sees a conflict."""
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY})
    repo.git("checkout", "-q", "pr")


def test_resolve_conflict_keeps_main_then_pr(repo: GitRepo) -> None:
    diverge(repo)
    repo.git("merge", "main", check=False)
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")
    result = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert result.exit_code == 0, result.output
    expected = HISTORY + "\n" + MAIN_ENTRY + "\n" + entry(description="PR change", link=f"{LINK}31")
    assert repo.read().decode() == expected
    assert repo.git("diff", "--name-only", "--diff-filter=U") == ""
    repo.git("commit", "-q", "--no-edit")
    check = repo.infx("changelog", "check", "--base", "main", "--head", "HEAD", "--pr", "31")
    assert check.exit_code == 0, check.output


def test_resolve_conflict_skips_entries_main_already_holds(repo: GitRepo) -> None:
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    landed = entry(description="PR change", link=f"{LINK}31")
    repo.commit("main", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY + "\n" + landed})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "main", check=False)
    repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + landed


def test_resolve_conflict_without_conflict_is_usage_error(repo: GitRepo) -> None:
    result = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert result.exit_code == 2 and "no merge conflict" in result.output


def test_merge_driver_lets_git_merge_cleanly(repo: GitRepo) -> None:
    use_driver(repo, "--pr", "31")
    diverge(repo)
    out = repo.git("merge", "-q", "--no-edit", "main")
    assert "CONFLICT" not in out
    expected = HISTORY + "\n" + MAIN_ENTRY + "\n" + entry(description="PR change", link=f"{LINK}31")
    assert repo.read().decode() == expected


def test_merge_driver_refuses_history_edits(repo: GitRepo, tmp_path) -> None:
    repo.git("checkout", "-q", "-b", "pr")  # ours is the PR branch, main is theirs
    ancestor = tmp_path / "o"
    ours = tmp_path / "a"
    theirs = tmp_path / "b"
    ancestor.write_text(HISTORY)
    ours.write_text(HISTORY.replace("Bring up", "Brought up") + "\n" + PR_ENTRY)
    theirs.write_text(HISTORY + "\n" + MAIN_ENTRY)
    # As `git merge main` runs the driver: it names the commit merged in (GITHEAD_<id>).
    merged_in = {f"GITHEAD_{repo.git('rev-parse', 'main')}": "main"}
    result = repo.infx(
        "changelog", "merge-driver", str(ancestor), str(ours), str(theirs), "perf-changelog.yaml",
        env=merged_in,
    )  # fmt: skip
    assert result.exit_code == 1 and "does more than append" in result.output
    assert ours.read_text().startswith(HISTORY.replace("Bring up", "Brought up"))


def use_driver(repo: GitRepo, *extra: str) -> None:
    """Configure the merge driver as the README says, run through this interpreter."""
    repo.write(".gitattributes", "perf-changelog.yaml merge=infx-changelog\n")
    repo.git("add", ".gitattributes")
    repo.git("commit", "-q", "-m", "attributes")
    repo.git("tag", "-f", "base")
    repo.git("config", "merge.infx-changelog.name", "perf-changelog.yaml append merge")
    repo.git(
        "config",
        "merge.infx-changelog.driver",
        f"{sys.executable} -m infx changelog merge-driver --repo acme/bench {' '.join(extra)} "
        "%O %A %B %P",
    )


def branches(repo: GitRepo, pr_side: str, main_side: str) -> None:
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr", **{"perf-changelog.yaml": pr_side})
    repo.git("checkout", "-q", "main")
    repo.commit("main", **{"perf-changelog.yaml": main_side})
    repo.git("checkout", "-q", "pr")


def test_driver_conflicts_when_pr_extends_the_last_history_entry(repo: GitRepo) -> None:
    """The base stays a byte prefix, but the PR's line belongs to no new entry: it must
    not vanish from a clean merge."""
    use_driver(repo, "--pr", "31")
    branches(repo, HISTORY + "  all-evals: true\n", HISTORY + "\n" + MAIN_ENTRY)
    merge = subprocess.run(
        ["git", "merge", "--no-edit", "main"], cwd=repo.path, capture_output=True
    )
    assert merge.returncode != 0
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")
    text = repo.read().decode()
    assert "  all-evals: true\n" in text and MAIN_ENTRY in text
    assert "<<<<<<< " in text and ">>>>>>> " in text


def test_driver_refusal_leaves_both_sides_between_markers(repo: GitRepo) -> None:
    use_driver(repo, "--pr", "31")
    edited = HISTORY.replace("Bring up", "Brought up")
    branches(repo, edited + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    merge = subprocess.run(
        ["git", "merge", "--no-edit", "main"], cwd=repo.path, capture_output=True
    )
    assert merge.returncode != 0
    assert b"does more than append entries" in merge.stderr
    text = repo.read().decode()
    assert "<<<<<<< ours (pull request)" in text and ">>>>>>> theirs (main)" in text
    assert MAIN_ENTRY in text and PR_ENTRY in text and "Brought up" in text


def test_driver_refusal_without_a_line_conflict_still_leaves_markers(repo: GitRepo) -> None:
    """git's line merge of a history edit and an append is clean; the driver's refusal must
    still leave markers, or a `git add` would take the edit without anyone looking."""
    use_driver(repo, "--pr", "31")
    branches(repo, HISTORY.replace("Bring up", "Brought up"), HISTORY + "\n" + MAIN_ENTRY)
    merge = subprocess.run(
        ["git", "merge", "--no-edit", "main"], cwd=repo.path, capture_output=True
    )
    assert merge.returncode != 0
    text = repo.read().decode()
    assert "<<<<<<< ours (pull request)" in text and "=======\n" in text
    assert "Brought up" in text and "Bring up" in text and MAIN_ENTRY in text


def test_driver_keeps_main_side_history_edits(repo: GitRepo) -> None:
    """Main is taken as it is (it passed the gate when it landed), as the README says."""
    use_driver(repo, "--pr", "31")
    corrected = HISTORY.replace(f"{LINK}2", f"{LINK}20")
    branches(repo, HISTORY + "\n" + PR_ENTRY, corrected + "\n" + MAIN_ENTRY)
    repo.git("merge", "-q", "--no-edit", "main")
    assert repo.read().decode() == corrected + "\n" + MAIN_ENTRY + "\n" + entry(
        description="PR change", link=f"{LINK}31"
    )


def test_resolve_conflict_refuses_when_a_side_deleted_the_file(repo: GitRepo) -> None:
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    repo.git("rm", "-q", "perf-changelog.yaml")
    repo.git("commit", "-q", "-m", "drop")
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "main", check=False)
    result = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert result.exit_code == 1 and "deleted on one side" in result.output
    assert repo.read().decode() == HISTORY + "\n" + PR_ENTRY
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")


def test_resolve_conflict_refusal_leaves_gits_conflict(repo: GitRepo) -> None:
    branches(repo, HISTORY + "  all-evals: true\n", HISTORY + "\n" + MAIN_ENTRY)
    repo.git("merge", "main", check=False)
    before = repo.read()
    result = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert result.exit_code == 1 and "not its base plus whole new entries" in result.output
    assert repo.read() == before and b"<<<<<<<" in before


def git_merge(repo: GitRepo, ref: str, env: dict[str, str] | None = None):
    return subprocess.run(
        ["git", "merge", "--no-edit", ref], cwd=repo.path, capture_output=True, text=True, env=env
    )


SAME_AS_PR = {
    # The README's driver line (no --pr): main landed another PR's entry that reads the same
    # and kept the XXX placeholder (history has such entries).
    "placeholder, no --pr": ((), entry(description="PR change")),
    # With --pr, main's `.../pull/XXX` entry would pass for this PR's own.
    "pull/XXX, --pr 31": (("--pr", "31"), entry(description="PR change", link=f"{LINK}XXX")),
    # This PR's link, but main's copy is not this PR's text: someone else wrote it.
    "this PR's link, other text": (
        ("--pr", "31"),
        entry(description="PR change", link=f"{LINK}31").replace('"PR change"', "'PR change'"),
    ),
}


@pytest.mark.parametrize(("options", "main_copy"), SAME_AS_PR.values(), ids=SAME_AS_PR.keys())
def test_driver_never_drops_the_prs_entry_for_one_main_holds(
    repo: GitRepo, options: tuple[str, ...], main_copy: str
) -> None:
    use_driver(repo, *options)
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY + "\n" + main_copy)
    merge = git_merge(repo, "main")
    assert merge.returncode != 0, merge.stdout
    assert "already holds an entry that reads the same" in merge.stderr
    text = repo.read().decode()
    assert "<<<<<<< " in text and ">>>>>>> " in text
    assert text.count('"PR change"') + text.count("'PR change'") == 2
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")


def test_driver_drops_this_prs_entry_when_main_holds_it_already(repo: GitRepo) -> None:
    """Main's copy is this PR's entry, canonicalized, byte for byte: it landed already."""
    use_driver(repo, "--pr", "31")
    landed = entry(description="PR change", link=f"{LINK}31")
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY + "\n" + landed)
    merge = git_merge(repo, "main")
    assert merge.returncode == 0, merge.stderr
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + landed


def test_merging_the_pr_into_main_keeps_mains_entries_first(repo: GitRepo) -> None:
    """`git merge <pr-branch>` run on main, with the README's driver (no --main-side): main
    is ours, and its newer entry stays before the PR's."""
    use_driver(repo)
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    repo.git("checkout", "-q", "main")
    merge = git_merge(repo, "pr")
    assert merge.returncode == 0, merge.stderr
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + PR_ENTRY
    assert repo.infx("changelog", "check", "--base", "main~1", "--pr", "31").exit_code == 0


def test_main_branch_name_comes_from_the_settings(repo: GitRepo) -> None:
    repo.commit("settings", **{"infx.toml": 'main-branch = "trunk"\n'})
    repo.git("branch", "-m", "main", "trunk")
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "trunk")
    repo.commit("trunk", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY})
    assert git_merge(repo, "pr").returncode == 0
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + PR_ENTRY


def test_rebasing_the_pr_onto_main_keeps_mains_entries_first(repo: GitRepo) -> None:
    """In a rebase, ours is main (the commits are replayed onto it)."""
    use_driver(repo)
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    rebase = subprocess.run(
        ["git", "rebase", "main"], cwd=repo.path, capture_output=True, text=True
    )
    assert rebase.returncode == 0, rebase.stderr
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + PR_ENTRY


def test_resolve_conflict_finds_main_without_being_told(repo: GitRepo) -> None:
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    repo.git("checkout", "-q", "main")
    git_merge(repo, "pr")
    result = repo.infx("changelog", "resolve-conflict")
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + PR_ENTRY


KEEPS_BLANKS = (
    "- config-keys:\n    - llama-fp8-mi355x-sglang\n  pr-link: https://github.com/acme/bench/pull/30\n"
    "  description:\n    - |+\n      Main change\n"
)


def test_driver_refuses_a_merge_that_would_change_mains_last_entry(repo: GitRepo) -> None:
    """Main's last value keeps its trailing blank lines (`|+`): the empty line before the
    PR's entry would become part of it. The driver reads back what it would write."""
    use_driver(repo, "--pr", "31")
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + KEEPS_BLANKS)
    merge = git_merge(repo, "main")
    assert merge.returncode != 0
    assert "would read differently" in merge.stderr
    text = repo.read().decode()
    assert "<<<<<<< " in text and KEEPS_BLANKS in text and '"PR change"' in text


def test_the_readme_driver_keeps_both_sides_when_infx_is_not_on_path(repo: GitRepo) -> None:
    """A shell without the virtualenv: git must not keep the branch's side alone."""
    bare = "/usr/bin:/bin"
    if shutil.which("infx", path=bare):
        pytest.skip("infx is installed system-wide")
    use_readme_driver(repo)
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    merge = git_merge(repo, "main", env={**os.environ, "PATH": bare})
    assert merge.returncode != 0
    assert "merge-driver did not run (exit 127)" in merge.stderr
    text = repo.read().decode()
    assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text
    assert MAIN_ENTRY in text and PR_ENTRY in text
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")


def test_the_readme_driver_merges_when_infx_is_on_path(repo: GitRepo) -> None:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path}
    use_readme_driver(repo, env)
    branches(repo, HISTORY + "\n" + PR_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    merge = git_merge(repo, "main", env=env)
    assert merge.returncode == 0, merge.stderr
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + PR_ENTRY


def test_a_forks_own_main_merging_upstream_keeps_upstreams_entries_first(repo: GitRepo) -> None:
    """A contributor works on their fork's `main` and merges upstream's: the branch name
    says main, but the commit merged in is upstream's main tip, so that side is main."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "upstream-main")
    repo.commit("upstream", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY})
    repo.git("update-ref", "refs/remotes/upstream/main", "HEAD")
    repo.git("checkout", "-q", "main")
    repo.commit("fork work", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    merge = git_merge(repo, "upstream/main")
    assert merge.returncode == 0, merge.stderr
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + PR_ENTRY


@pytest.mark.parametrize("value", ["|-\n    XXX", ">-\n    XXX", '"XX\\\n    X"'])
def test_driver_never_splices_a_link_into_a_spread_pr_link(repo: GitRepo, value: str) -> None:
    """Writing the link on the `pr-link:` line would leave `    XXX` below it: the value
    would read `.../pull/31 XXX`. The PR side breaks the gate's one-line rule: conflict."""
    use_driver(repo, "--pr", "31")
    spread = entry(description="PR change", link=value)
    branches(repo, HISTORY + "\n" + spread, HISTORY + "\n" + MAIN_ENTRY)
    merge = git_merge(repo, "main")
    assert merge.returncode != 0
    assert "write `pr-link: XXX` on one line" in merge.stderr
    text = repo.read().decode()
    assert spread in text and MAIN_ENTRY in text and f"{LINK}31" not in text


def test_driver_canonicalizes_a_quoted_placeholder_with_a_comment_right_after_it(
    repo: GitRepo,
) -> None:
    """The gate accepts `pr-link: "XXX"#draft` (a value, then a comment): the merge must
    not conflict on it, nor make the comment part of the link."""
    use_driver(repo, "--pr", "31")
    pr_side = entry(description="PR change", link='"XXX"#draft')
    branches(repo, HISTORY + "\n" + pr_side, HISTORY + "\n" + MAIN_ENTRY)
    merge = git_merge(repo, "main")
    assert merge.returncode == 0, merge.stderr
    landed = entry(description="PR change", link=f"{LINK}31 #draft")
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + landed


@pytest.mark.parametrize("options", [(), ("--pr", "31")], ids=["no --pr", "--pr 31"])
def test_rebasing_a_pr_whose_commits_append_entries_that_read_alike_keeps_both(
    repo: GitRepo, options: tuple[str, ...]
) -> None:
    """Two commits of one PR each append an entry that reads the same (a sweep run twice).
    Replaying the second onto main, its ancestor is the first commit, and the side git calls
    main holds main's entry and the first one (canonicalized with --pr): the first one is
    not an entry main landed, so the second is neither dropped nor a conflict."""
    use_driver(repo, *options)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("first run", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.commit(
        "second run", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY + "\n" + PR_ENTRY}
    )
    repo.git("checkout", "-q", "main")
    repo.commit("main", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY})
    repo.git("checkout", "-q", "pr")
    rebase = subprocess.run(
        ["git", "rebase", "main"], cwd=repo.path, capture_output=True, text=True
    )
    assert rebase.returncode == 0, rebase.stderr
    landed = entry(description="PR change", link=f"{LINK}31") if options else PR_ENTRY
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + landed + "\n" + landed
    assert repo.git("rev-list", "--count", "main..pr") == "2"


@pytest.mark.parametrize("on", ["pr", "main"])
def test_a_pr_that_corrects_a_pr_link_merges_with_mains_new_entries(repo: GitRepo, on: str) -> None:
    """A correction is a change the gate accepts: git's own line merge of it with main's
    new entries is clean, and the driver must not turn it into a conflict that repeats
    every line from the correction to the end of the file on both sides."""
    use_driver(repo, "--pr", "31")
    corrected = HISTORY.replace(f"{LINK}1\n", f"{LINK}10\n")
    branches(repo, corrected, HISTORY + "\n" + MAIN_ENTRY)
    repo.git("checkout", "-q", on)
    merge = git_merge(repo, "main" if on == "pr" else "pr")
    assert merge.returncode == 0, merge.stderr
    assert repo.read().decode() == corrected + "\n" + MAIN_ENTRY
    check = repo.infx("changelog", "check", "--base", "main" if on == "pr" else "HEAD^1")
    assert check.exit_code == 0, check.output
    assert "ok (1 pr-link correction(s))" in check.output


@pytest.mark.parametrize(
    "pr_side",
    [HISTORY + "  all-evals: true\n", HISTORY.replace("Bring up", "Brought up")],
    ids=["git's line merge conflicts", "git's line merge is clean"],
)
def test_driver_markers_follow_the_conflict_marker_size(repo: GitRepo, pr_side: str) -> None:
    """git passes a file's `conflict-marker-size` as %L: the driver's markers use it, so
    they are the ones git, rerere and editors look for in that file."""
    use_driver(repo, "--marker-size", "%L")
    repo.write(
        ".gitattributes", "perf-changelog.yaml merge=infx-changelog conflict-marker-size=12\n"
    )
    repo.commit("marker size")
    branches(repo, pr_side, HISTORY + "\n" + MAIN_ENTRY)
    merge = git_merge(repo, "main")
    assert merge.returncode != 0
    text = repo.read().decode()
    for marker in ("<" * 12 + " ", "=" * 12 + "\n", ">" * 12 + " "):
        assert "\n" + marker in text
    assert "\n<<<<<<< " not in text
    assert ("all-evals" in text or "Brought up" in text) and MAIN_ENTRY in text
