"""The merge driver orders entries as main's history has them, whichever side git calls
ours: `git merge` either way, `git stash pop`, `git cherry-pick`, `git rebase` (both
backends), `git revert`, and the gate passes on what they leave (issue #25, item 14)."""

from __future__ import annotations

import subprocess

from infx.changelog.merge import main_by_content, takes_back
from tests.changelog.conftest import UPSTREAM_LINK, real_entry
from tests.changelog.test_merge import MAIN_ENTRY, PR_ENTRY, use_driver
from tests.conftest import HISTORY, GitRepo, entry

SECOND = entry(keys=["llama-fp8-mi355x-sglang"], description="PR second change")
MAINS = HISTORY + "\n" + MAIN_ENTRY


def run(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo.path, capture_output=True, text=True)


def gate(repo: GitRepo, *args: str) -> None:
    """The gate as a branch runs it (base: where the branch left main; XXX links allowed)."""
    result = repo.infx("changelog", "check", *args)
    assert result.exit_code == 0, result.output


def pr_branch(repo: GitRepo, name: str = "pr") -> None:
    """A branch `name` appending PR_ENTRY, and main appending MAIN_ENTRY meanwhile."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", name)
    repo.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": MAINS})


def test_stash_pop_on_a_branch_puts_mains_new_entry_first(repo: GitRepo) -> None:
    """The user's entry is in the working tree; the branch takes main's newer entry; the
    stash comes back after it. HEAD is a branch, not main, and nothing is being merged in:
    the old rule called the stash main."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("perf-changelog.yaml", HISTORY + "\n" + PR_ENTRY)
    repo.git("stash", "-q")
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": MAINS})
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--ff-only", "main")
    popped = run(repo, "stash", "pop")
    assert popped.returncode == 0, popped.stderr
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
    gate(repo)


def test_stash_pop_without_a_main_tip_that_holds_the_entry(repo: GitRepo) -> None:
    """Main's entry reached the branch from a ref that is not main (a colleague's branch):
    the stash is still applied onto HEAD, so HEAD's entries come first."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "colleague")
    repo.commit("their entry", **{"perf-changelog.yaml": MAINS})
    repo.git("checkout", "-q", "-b", "feature", "base")
    repo.write("perf-changelog.yaml", HISTORY + "\n" + PR_ENTRY)
    repo.git("stash", "-q")
    repo.git("reset", "-q", "--hard", "colleague")
    assert run(repo, "stash", "pop").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY


def test_cherry_pick_onto_mains_tip_on_a_new_branch(repo: GitRepo) -> None:
    pr_branch(repo)
    repo.git("checkout", "-q", "-b", "again", "main")
    picked = run(repo, "cherry-pick", "pr")
    assert picked.returncode == 0, picked.stderr
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
    gate(repo, "--head", "HEAD")


def test_cherry_pick_onto_a_detached_head_at_an_old_main(repo: GitRepo) -> None:
    """A detached HEAD that is not main's tip (main moved on since): HEAD still comes first."""
    pr_branch(repo)
    repo.commit("main later", **{"perf-changelog.yaml": MAINS + "\n" + entry(description="x")})
    repo.git("checkout", "-q", "--detach", "main~1")
    assert run(repo, "cherry-pick", "pr").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY


def test_rebase_both_backends_keep_main_first(repo: GitRepo) -> None:
    pr_branch(repo)
    repo.git("checkout", "-q", "pr")
    repo.commit("second", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY + "\n" + SECOND})
    for backend in ("--merge", "--apply"):
        rebased = run(repo, "rebase", backend, "main")
        assert rebased.returncode == 0, rebased.stderr
        assert repo.read().decode() == MAINS + "\n" + PR_ENTRY + "\n" + SECOND
        gate(repo, "--head", "HEAD")
        repo.git("reset", "-q", "--hard", "ORIG_HEAD")


def test_pull_rebase_on_local_main_puts_upstreams_entry_first(repo: GitRepo) -> None:
    """Local main holds an unpushed entry; origin/main moved on: the rebase replays the
    local entry after upstream's."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "upstream")
    repo.commit("upstream entry", **{"perf-changelog.yaml": MAINS})
    repo.git("update-ref", "refs/remotes/origin/main", "upstream")
    repo.git("checkout", "-q", "main")
    repo.commit("local entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    assert run(repo, "rebase", "origin/main").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
    repo.infx("changelog", "check", "--base", "origin/main")


def test_revert_of_the_branchs_own_earlier_entry(repo: GitRepo) -> None:
    """The branch appended two entries in two commits and reverts the first: ours is
    HEAD, theirs the reverted commit's parent, which drops an entry; only the side that
    drops can be taken as it is, so the result is history then the second entry."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("first", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.commit("second", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY + "\n" + SECOND})
    reverted = run(repo, "revert", "--no-edit", "HEAD~1")
    assert reverted.returncode == 0, reverted.stderr
    assert repo.read().decode() == HISTORY + "\n" + SECOND
    gate(repo, "--head", "HEAD")


def test_merge_of_main_into_the_branch_and_of_the_branch_into_main(repo: GitRepo) -> None:
    pr_branch(repo)
    repo.git("checkout", "-q", "pr")
    assert run(repo, "merge", "--no-edit", "main").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
    gate(repo, "--head", "HEAD")
    repo.git("reset", "-q", "--hard", "ORIG_HEAD")
    repo.git("checkout", "-q", "main")
    assert run(repo, "merge", "--no-edit", "pr").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY


def test_merging_a_stale_branch_into_one_that_holds_mains_entry(repo: GitRepo) -> None:
    """Neither side is main's tip: the branch that took main's entry comes first, as main's
    history has it, not the branch merged in."""
    pr_branch(repo)
    repo.git("checkout", "-q", "-b", "fresh", "main")
    merged = run(repo, "merge", "--no-edit", "pr")
    assert merged.returncode == 0, merged.stderr
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
    gate(repo, "--head", "HEAD")
    repo.git("reset", "-q", "--hard", "main")
    repo.git("checkout", "-q", "pr")
    assert run(repo, "merge", "--no-edit", "fresh").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY


def test_resolve_conflict_in_a_stopped_cherry_pick(repo: GitRepo) -> None:
    """Without the driver, a person resolves the stopped cherry-pick: HEAD's side first."""
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": MAINS})
    repo.git("checkout", "-q", "-b", "again", "main")
    assert run(repo, "cherry-pick", "pr").returncode != 0
    result = repo.infx("changelog", "resolve-conflict")
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY


FIRST_ONLY = HISTORY.split("\n\n")[0] + "\n"


def test_a_merge_never_takes_a_branch_that_drops_its_last_history_entry(repo: GitRepo) -> None:
    """As an insider: a branch deleting history's last entry looks like a revert's side. In
    a `git merge` it is never taken as main's side: the merge conflicts, both sides kept."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("drop", **{"perf-changelog.yaml": FIRST_ONLY})
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": MAINS})
    repo.git("checkout", "-q", "pr")
    merged = run(repo, "merge", "--no-edit", "main")
    assert merged.returncode != 0
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")
    repo.git("merge", "--abort")
    repo.git("checkout", "-q", "main")
    assert run(repo, "merge", "--no-edit", "pr").returncode != 0


def test_a_stash_that_edits_history_is_refused(repo: GitRepo) -> None:
    """Popping a stash that rewrites a history entry onto a branch that took main's entry:
    HEAD is kept as it is, the stash's side must be whole appended entries, so it conflicts
    rather than carrying the edit into the file unseen."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("perf-changelog.yaml", HISTORY.replace("Bring up", "Brought up") + "\n" + PR_ENTRY)
    repo.git("stash", "-q")
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": MAINS})
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--ff-only", "main")
    popped = run(repo, "stash", "pop")
    assert popped.returncode != 0
    text = repo.read().decode()
    assert "<<<<<<< " in text and "Brought up" in text and MAIN_ENTRY in text


def test_the_gate_during_a_stopped_merge_agrees_with_the_driver(repo: GitRepo) -> None:
    """A stopped merge of a stale branch into one holding main's newer entry: the gate reads
    main's side as the driver does (the branch that holds main's entry)."""
    pr_branch(repo)
    repo.git("checkout", "-q", "-b", "fresh", "main")
    assert run(repo, "-c", "merge.infx-changelog.driver=false", "merge", "pr").returncode != 0
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")
    repo.git("checkout", "--merge", "--", "perf-changelog.yaml")
    assert repo.infx("changelog", "resolve-conflict").exit_code == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
    result = repo.infx("changelog", "check")
    assert result.exit_code == 0, result.output


def test_stash_pop_on_inferencex_history(inferencex: GitRepo) -> None:
    """The real history (hundreds of entries): main's newer entry lands on origin/main, the
    branch merges it, the stash comes back after it and the gate passes."""
    repo = inferencex
    use_driver(repo)
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    history = repo.read().decode()
    mine = real_entry(link="XXX")
    theirs = real_entry(link=f"{UPSTREAM_LINK}99999").replace("aiter", "triton")
    repo.write("perf-changelog.yaml", history + mine)
    repo.git("stash", "-q")
    repo.git("checkout", "-q", "-b", "upstream")
    repo.commit("upstream entry", **{"perf-changelog.yaml": history + theirs})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--ff-only", "origin/main")
    popped = run(repo, "stash", "pop")
    assert popped.returncode == 0, popped.stderr
    assert repo.read().decode() == history + theirs + mine
    result = repo.infx("changelog", "check")
    assert result.exit_code == 0, result.output


def test_main_by_content_and_takes_back_are_pure_rules() -> None:
    ancestor, pr, mains = HISTORY, HISTORY + "\n" + PR_ENTRY, MAINS
    sides = [s.encode() for s in (ancestor, mains, pr)]
    assert main_by_content(*sides, [mains.encode()]) == "ours"
    assert main_by_content(sides[0], sides[2], sides[1], [mains.encode()]) == "theirs"
    assert main_by_content(*sides, [HISTORY.encode()]) is None
    assert main_by_content(*sides, []) is None
    both = (mains + "\n" + PR_ENTRY).encode()
    assert main_by_content(*sides, [both]) is None
    assert takes_back(pr.encode(), HISTORY.encode())
    assert not takes_back(HISTORY.encode(), HISTORY.encode())
    assert not takes_back(HISTORY.encode(), FIRST_ONLY.encode() + b"\n" + PR_ENTRY.encode())


def test_cherry_picking_mains_commit_onto_the_branch(repo: GitRepo) -> None:
    """The branch picks main's commit (to take a fix): ours is the branch, theirs main's
    commit; main's history says main's entry comes first."""
    pr_branch(repo)
    repo.git("checkout", "-q", "pr")
    picked = run(repo, "cherry-pick", "main")
    assert picked.returncode == 0, picked.stderr
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY


def test_pull_with_a_merge_on_local_main_puts_upstreams_entry_first(repo: GitRepo) -> None:
    """Both sides hold main's entries (local main's unpushed one, origin/main's newer one):
    the commit merged in is origin/main's tip, so it is main's side."""
    use_driver(repo)
    repo.git("checkout", "-q", "-b", "upstream")
    repo.commit("upstream entry", **{"perf-changelog.yaml": MAINS})
    repo.git("update-ref", "refs/remotes/origin/main", "upstream")
    repo.git("checkout", "-q", "main")
    repo.commit("local entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    assert run(repo, "merge", "--no-edit", "origin/main").returncode == 0
    assert repo.read().decode() == MAINS + "\n" + PR_ENTRY
