"""The reuse and /stage-results rules as pure functions over plain values (no API)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.errors import ReuseError
from infx.github.client import Artifact, Comment, LabelEvent, Pull, Run
from infx.workflows.commands import CommentEvent, ReuseCommand
from infx.workflows.labels import sweep_label_problem
from infx.workflows.reuse import (
    MAX_CANDIDATES,
    Candidate,
    GateEvent,
    PrChange,
    PullFacts,
    Request,
    SourceFacts,
    changes_since,
    decide_ack,
    decide_gate,
    edits,
    newest_request,
    pick_run,
    same_entries,
    to_compare,
    verdict,
)
from infx.workflows.stage import StageFacts, decide_stage

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
REPO = "acme/bench"
HEAD, OLD = "a1" * 20, "a0" * 20
CL = "perf-changelog.yaml"
ENTRY = b"\n- config-keys:\n    - x\n  description:\n    - d\n  pr-link: XXX\n"
LINKED = ENTRY.replace(b"XXX", b"https://github.com/acme/bench/pull/7")
HISTORY = b"- config-keys:\n    - y\n  description:\n    - old\n  pr-link: https://github.com/acme/bench/pull/1\n"


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def comment(cid: int, author: str, body: str, minute: float, assoc: str = "MEMBER") -> Comment:
    return Comment(cid, author, assoc, body, at(minute), at(minute))


def pull(labels: tuple[str, ...] = ("full-sweep-fail-fast",), **kw) -> Pull:
    values = dict(
        number=7,
        state="open",
        merged_at=None,
        head_ref="feature",
        head_sha=HEAD,
        head_repo=REPO,
        base_ref="main",
        labels=labels,
        created_at=at(0),
    )
    return Pull(**{**values, **kw})


def run(rid: int, sha: str = HEAD, minute: float = 60, **kw) -> Run:
    values = dict(
        id=rid,
        head_sha=sha,
        event="pull_request",
        status="completed",
        conclusion="success",
        path=".github/workflows/run-sweep.yml",
        run_attempt=1,
        html_url=f"https://github.com/{REPO}/actions/runs/{rid}",
        created_at=at(minute),
    )
    return Run(**{**values, **kw})


def artifact(name: str = "results_bmk", expired: bool = False) -> Artifact:
    return Artifact(1, name, expired, at(90))


def candidate(rid: int, sha: str = HEAD, minute: float = 60, names=("results_bmk",), **kw):
    return Candidate(run(rid, sha, minute, **kw), tuple(artifact(n) for n in names))


LABELLED = (LabelEvent("labeled", "full-sweep-fail-fast", at(10)),)
BARE = Request(None, ReuseCommand(None))


def facts(*candidates: Candidate, exhausted: bool = False, **kw) -> SourceFacts:
    return SourceFacts(frozenset({HEAD, OLD}), candidates, exhausted, LABELLED, **kw)


# --- who asked ---------------------------------------------------------------------------


def test_newest_authorized_comment_wins_and_a_bare_command_unpins() -> None:
    comments = [
        comment(1, "owner", "/reuse-sweep-run 41", 10, "OWNER"),
        comment(2, "maintainer", "/use 42\n/reuse-sweep-run", 20),
        comment(3, "reader", "/reuse-sweep-run 43", 30, "COLLABORATOR"),
        comment(4, "stranger", "/reuse-sweep-run 44", 40, "CONTRIBUTOR"),
    ]
    perms = {"owner": "admin", "maintainer": "write", "reader": "read"}
    request = newest_request(comments, perms)
    assert request is not None and request.comment.id == 2 and request.command.run_id is None
    assert newest_request(comments, {"owner": "admin"}).command.run_id == 41
    # A permission never read counts as none: the decision never assumes one.
    assert newest_request(comments, {}) is None


# --- one label policy -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "for_reuse", "for_stage"),
    [
        (("full-sweep-fail-fast",), None, None),
        (("full-sweep-enabled", "all-evals", "skip_queue"), None, None),
        (("full-sweep-enabled", "evals-only"), "evals-only", None),
        (("non-canary-full-sweep-enabled", "agentx-fast"), "agentx-fast", None),
        (("sweep-enabled",), "no full-sweep label (only sweep-enabled)", "no full-sweep"),
        ((), "no full-sweep label", "no full-sweep label"),
        (("full-sweep-enabled", "full-sweep-fail-fast"), "exactly one", "exactly one"),
        (("full-sweep-enabled", "sweep-enabled"), "exactly one", "exactly one"),
    ],
)
def test_one_label_policy_for_reuse_stage_and_merge(labels, for_reuse, for_stage) -> None:
    for reuse, expected in ((True, for_reuse), (False, for_stage)):
        problem = sweep_label_problem(7, labels, reuse=reuse)
        assert (problem is None) == (expected is None), (labels, reuse, problem)
        assert expected is None or expected in problem


# --- which run --------------------------------------------------------------------------------


def test_unpinned_takes_the_newest_successful_run_with_results() -> None:
    found = facts(
        candidate(1, minute=50),
        candidate(2, minute=70, conclusion="failure"),
        candidate(3, minute=60),
        candidate(4, minute=80, names=("results_bmk",), event="push"),
        candidate(5, sha="ff" * 20, minute=90),
        Candidate(run(6, minute=95), (artifact(expired=True),)),
    )
    chosen, why = pick_run(BARE, found, "run-sweep.yml", 7, REPO)
    assert chosen is not None and chosen.run.id == 3 and why == ""


def test_pinned_run_may_have_failed_but_must_exist_and_carry_results() -> None:
    pinned = Request(None, ReuseCommand(2))
    failed = facts(candidate(2, conclusion="failure"))
    assert pick_run(pinned, failed, "run-sweep.yml", 7, REPO)[0].run.id == 2
    assert "does not exist in acme/bench" in pick_run(pinned, facts(), "run-sweep.yml", 7, REPO)[1]
    bare = facts(candidate(2, names=("run-stats",)))
    assert "no unexpired result artifacts" in pick_run(pinned, bare, "run-sweep.yml", 7, REPO)[1]


def test_a_search_cut_short_says_so_and_asks_for_a_pin() -> None:
    failed = [candidate(i, conclusion="failure") for i in range(MAX_CANDIDATES)]
    chosen, why = pick_run(BARE, facts(*failed, exhausted=True), "run-sweep.yml", 7, REPO)
    assert chosen is None and f"none of the {MAX_CANDIDATES} newest" in why and "pin" in why


def test_a_run_started_before_the_full_sweep_label_is_not_reused() -> None:
    late = SourceFacts(
        frozenset({HEAD}),
        (candidate(1, minute=5),),
        False,
        (LabelEvent("labeled", "full-sweep-fail-fast", at(10)),),
    )
    found = verdict(pull(), BARE, late, repo=REPO, workflow="run-sweep.yml", require_merged=False)
    assert not found.ok and "without a full-sweep label" in found.reason


# --- does it still stand ----------------------------------------------------------------------

CHANGE_AT_RUN = PrChange(
    {CL: "modified 1", "configs/a.yaml": "modified 2"},
    True,
    {CL: (HISTORY, HISTORY + ENTRY)},
)


def at_head(**files: str) -> dict[str, str]:
    return {CL: "modified 9", "configs/a.yaml": "modified 2", **files}


def test_a_pr_link_correction_after_the_run_keeps_reuse() -> None:
    head = PrChange(at_head(), True, {CL: (HISTORY, HISTORY + LINKED)})
    assert changes_since(CHANGE_AT_RUN, head) == []
    # Main's entries arrived through a merge: each point is measured from its own base.
    main = (
        HISTORY
        + b"\n- config-keys:\n    - z\n  description:\n    - main\n  pr-link: https://github.com/acme/bench/pull/3\n"
    )
    head = PrChange(at_head(), True, {CL: (main, main + LINKED)})
    assert changes_since(CHANGE_AT_RUN, head) == []


@pytest.mark.parametrize(
    "tail",
    [b"++ x\n", b"-- x\n", b"  evals-only: true\n", b"  pr-link: XXX\n"],
)
def test_anything_appended_beyond_the_link_voids_reuse(tail) -> None:
    head = PrChange(at_head(), True, {CL: (HISTORY, HISTORY + LINKED + tail)})
    assert changes_since(CHANGE_AT_RUN, head) == [f"{CL} beyond pr-link lines"]


def test_a_line_appended_after_an_already_linked_entry_voids_reuse() -> None:
    linked_at_run = PrChange(CHANGE_AT_RUN.files, True, {CL: (HISTORY, HISTORY + LINKED)})
    grown = PrChange(at_head(), True, {CL: (HISTORY, HISTORY + LINKED + b"  all-evals: true\n")})
    assert changes_since(linked_at_run, grown) == [f"{CL} beyond pr-link lines"]


def test_a_history_rewrite_voids_reuse() -> None:
    rewritten = HISTORY.replace(b"old", b"new")
    head = PrChange(at_head(), True, {CL: (HISTORY, rewritten + LINKED)})
    assert changes_since(CHANGE_AT_RUN, head) == [f"{CL} beyond pr-link lines"]


def test_files_added_dropped_or_unread_void_reuse() -> None:
    head = PrChange(
        {**at_head(**{"recipes/x.sh": "added 5"}), "configs/a.yaml": "modified 3"},
        True,
        {CL: (HISTORY, HISTORY + LINKED)},
    )
    assert changes_since(CHANGE_AT_RUN, head) == ["configs/a.yaml", "recipes/x.sh"]
    incomplete = PrChange(at_head(), False)
    assert "more than 300 files" in changes_since(CHANGE_AT_RUN, incomplete)[0]


def test_only_files_changed_at_both_points_are_read_changelog_first() -> None:
    run_files = {f"f{i}": "modified 1" for i in range(9)} | {CL: "modified 1", "same": "m 1"}
    head_files = {f"f{i}": "modified 2" for i in range(9)} | {CL: "modified 2", "same": "m 1"}
    assert to_compare(run_files, head_files) == [CL, "f0", "f1", "f2"]


MASTER = b"".join(f"cfg{i}:\n  conc-end: {i}\n".encode() for i in range(20))


def test_the_same_edit_reads_the_same_wherever_main_moved_the_file() -> None:
    tuned = MASTER.replace(b"conc-end: 10\n", b"conc-end: 99\n")
    main = b"new:\n  conc-end: 1\n" + MASTER.replace(b"conc-end: 19\n", b"conc-end: 7\n")
    merged = b"new:\n  conc-end: 1\n" + tuned.replace(b"conc-end: 19\n", b"conc-end: 7\n")
    assert edits(MASTER, tuned) == edits(main, merged)
    # Main's edit within three lines of the PR's: not provably the same edit.
    near = MASTER.replace(b"cfg11:", b"cfg-eleven:")
    assert edits(MASTER, tuned) != edits(near, tuned.replace(b"cfg11:", b"cfg-eleven:"))
    assert edits(MASTER, tuned) != edits(MASTER, tuned.replace(b"99", b"98"))


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.sampled_from([b"a: 1\n", b"b: 2\n", b"c: 3\n", b"- x\n", b"\n"]), min_size=1),
    index=st.integers(min_value=0),
    new=st.sampled_from([b"a: 9\n", b"++ x\n", b"  pr-link: XXX\n", b"\n\n"]),
)
def test_an_entry_edit_other_than_a_link_is_never_the_same_entries(lines, index, new) -> None:
    region = ENTRY + b"".join(lines)
    parts = region.splitlines(keepends=True)
    i = index % len(parts)
    if parts[i] == new:
        return
    changed = b"".join([*parts[:i], new, *parts[i + 1 :]])
    assert not same_entries((HISTORY, HISTORY + region), (HISTORY, HISTORY + changed))


@settings(max_examples=100, deadline=None)
@given(pr=st.integers(min_value=1, max_value=10**6))
def test_any_placeholder_to_link_correction_is_the_same_entries(pr) -> None:
    linked = ENTRY.replace(b"XXX", f"https://github.com/acme/bench/pull/{pr}".encode())
    assert same_entries((HISTORY, HISTORY + ENTRY), (HISTORY, HISTORY + linked))


def test_a_later_commit_with_unknown_changes_is_not_reused() -> None:
    found = facts(candidate(1, sha=OLD))
    result = verdict(pull(), BARE, found, repo=REPO, workflow="run-sweep.yml", require_merged=False)
    assert not result.ok and "unknown" in result.reason


# --- the gate ---------------------------------------------------------------------------------


def pr_facts(number: int, comments: tuple[Comment, ...] = (), perms=None, source=None):
    return PullFacts(pull(number=number), comments, perms or {}, source)


def test_gate_push_cases() -> None:
    push = GateEvent("push", "c" * 40, "refs/heads/main")
    assert "belongs to no PR" in decide_gate(push, (), repo=REPO, workflow="w").reason
    quiet = (pr_facts(7), pr_facts(8))
    assert "none asks" in decide_gate(push, quiet, repo=REPO, workflow="w").reason
    asks = (pr_facts(7), pr_facts(8, (comment(1, "m", "/reuse-sweep-run", 5),), {"m": "write"}))
    with pytest.raises(ReuseError, match="refusing to guess"):
        decide_gate(push, asks, repo=REPO, workflow="w")
    other = GateEvent("push", "c" * 40, "refs/heads/dev")
    assert "never reuses" in decide_gate(other, (), repo=REPO, workflow="w").reason


def test_gate_on_a_merged_pr_reuses_and_on_a_synchronize_skips() -> None:
    asked = (comment(1, "m", "/reuse-sweep-run", 5),)
    source = facts(candidate(1))
    merged = PullFacts(pull(merged_at=at(500)), asked, {"m": "write"}, source)
    push = GateEvent("push", "c" * 40, "refs/heads/main")
    result = decide_gate(push, (merged,), repo=REPO, workflow="run-sweep.yml")
    assert result.reuse_enabled and result.outputs()["reuse-source-run-id"] == "1"
    sync = GateEvent("pull_request", HEAD, "refs/pull/7/merge", "synchronize", 7)
    result = decide_gate(sync, (merged,), repo=REPO, workflow="run-sweep.yml")
    assert result.skip_pr_sweep and not result.reuse_enabled
    unmerged = PullFacts(pull(), asked, {"m": "write"}, source)
    assert (
        "not merged" in decide_gate(push, (unmerged,), repo=REPO, workflow="run-sweep.yml").reason
    )


# --- ack and stage ----------------------------------------------------------------------------


def event(body: str, cid: int = 1, on_pr: bool = True, updated: str = "2026-11-30T12:05:00Z"):
    return CommentEvent(7, on_pr, cid, body, updated)


def test_ack_cases() -> None:
    mine = comment(1, "m", "/reuse-sweep-run", 5)
    pr = PullFacts(pull(), (mine,), {"m": "write"}, facts(candidate(1)))
    ok = decide_ack(event(mine.body), mine, pr, repo=REPO, workflow="run-sweep.yml")
    assert ok.reaction == "+1" and "reusing run 1" in ok.reason
    edited = decide_ack(event("/reuse-sweep-run 9"), mine, pr, repo=REPO, workflow="w")
    assert edited.reaction is None and "changed since this event" in edited.reason
    assert decide_ack(event("hi"), None, None, repo=REPO, workflow="w").reaction is None
    reader = PullFacts(pull(), (mine,), {"m": "read"}, None)
    assert decide_ack(event(mine.body), mine, reader, repo=REPO, workflow="w").reaction == "-1"
    newer = comment(2, "o", "/reuse-sweep-run", 9, "OWNER")
    superseded = PullFacts(pull(), (mine, newer), {"m": "write", "o": "admin"}, None)
    result = decide_ack(event(mine.body), mine, superseded, repo=REPO, workflow="w")
    assert result.reaction == "-1" and "newest: 2" in result.reason


def staged(**kw) -> StageFacts:
    values = dict(
        comment=comment(1, "m", "/stage-results", 5),
        permission="write",
        pull=pull(),
        commits=frozenset({HEAD}),
        label_events=LABELLED,
        candidates=(candidate(1, names=("results_bmk", "changelog-metadata")),),
    )
    return StageFacts(**{**values, **kw})


def test_stage_cases() -> None:
    done = decide_stage(event("/stage-results"), staged(), "run-sweep.yml")
    assert done.reaction == "+1" and done.dispatch["run-id"] == 1
    assert [a["staged-as"] for a in done.dispatch["artifacts"]] == [
        "pr7-run1-changelog-metadata",
        "pr7-run1-results_bmk",
    ]
    usage = decide_stage(event("/stage-results now"), None, "run-sweep.yml")
    assert usage.reaction == "-1" and usage.reason.startswith("usage:") and usage.dispatch is None
    reader = decide_stage(event("/stage-results"), staged(permission="read"), "run-sweep.yml")
    assert reader.reaction == "-1" and reader.dispatch is None
    missing = decide_stage(event("/stage-results 5"), staged(candidates=()), "run-sweep.yml")
    assert "run 5 does not exist" in missing.reason
    failed = tuple(candidate(i, conclusion="startup_failure") for i in range(MAX_CANDIDATES))
    cut = decide_stage(event("/stage-results"), staged(candidates=failed, exhausted=True), "w")
    assert cut.reaction == "-1" and "pin one of the older runs" in cut.reason
    # /stage-results accepts an evals-only sweep; reuse does not.
    evals = staged(pull=pull(labels=("full-sweep-enabled", "evals-only")))
    assert decide_stage(event("/stage-results"), evals, "run-sweep.yml").reaction == "+1"
