"""The reuse and /stage-results rules as pure functions over plain values (no API)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta

import pytest

from infx.errors import ReuseError
from infx.github.actions import CommentEvent
from infx.github.client import Artifact, Comment, LabelEvent, Pull, Run
from infx.matrix.manifest import SweepOptions, build, differences, file_digest, summarize
from infx.matrix.plan import Plan
from infx.reuse.ack import AckReads, decide_ack
from infx.reuse.commands import ReuseCommand
from infx.reuse.gate import GateEvent, Local, decide_gate
from infx.reuse.issuer import Issued
from infx.reuse.measured import STATUS_LENGTH, Derived, Merging, reuse_status, verdict
from infx.reuse.source import (
    MAX_CANDIDATES,
    Candidate,
    PullFacts,
    Request,
    SourceFacts,
    newest_request,
    pick_run,
)
from infx.reuse.stage import StageFacts, decide_stage
from infx.sweep.labels import sweep_label_problem

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
        head_branch="feature",
        head_repo=REPO,
    )
    return Run(**{**values, **kw})


def artifact(name: str = "results_bmk", expired: bool = False) -> Artifact:
    return Artifact(1, name, expired, at(90), digest=zip_of(name))


def zip_of(name: str) -> str:
    """The digest GitHub lists for an artifact of that name (what the issuer sealed)."""
    return "sha256:" + hashlib.sha256(name.encode()).hexdigest()


def candidate(rid: int, sha: str = HEAD, minute: float = 60, names=("results_bmk",), **kw):
    return Candidate(run(rid, sha, minute, **kw), tuple(artifact(n) for n in names))


LABELLED = (LabelEvent("labeled", "full-sweep-fail-fast", at(10)),)
BARE = Request(None, ReuseCommand(None))
ROW = {"runner": "mi355x", "model-prefix": "llama70b", "precision": "fp8", "framework": "vllm"}
CONFIG = {"image": "vllm:1", "search-space": [{"tp": 8, "conc-end": 32}]}


def record(
    *,
    config: dict | None = None,
    rows: int = 2,
    evals: int = 0,
    recipe: bytes | None = b"echo run\n",
    event: str = "pull_request",
    label: str = "full-sweep-fail-fast",
    reusable: bool = True,
    **options: bool,
) -> dict:
    """A manifest as `build` makes it, of a plan with `rows` throughput rows of one config."""
    plan = Plan(
        {
            "single_node": {"1k1k": [{**ROW, "conc": 4 * (i + 1)} for i in range(rows)]},
            "multi_node": {},
            "evals": [{**ROW, "conc": 64, "run-eval": True}] * evals,
            "agentic_evals": [],
            "multinode_evals": [],
            "multinode_agentic_evals": [],
            "changelog_metadata": {"base_ref": "a", "head_ref": "b", "entries": []},
        },
        ["llama"],
    )
    flags = {"trim_conc": False, "all_evals": False, "evals_only": False, "agentx_fast": False}
    flags.update({k.replace("-", "_"): v for k, v in options.items()})
    sweep = SweepOptions(event, label, reusable=reusable, **flags)
    files = {"recipes/llama70b_fp8_mi355x_vllm.sh": file_digest(recipe)}
    return build(plan, {"llama": config or CONFIG}, {"mi355x": ["mi355x-a_01"]}, files, sweep)


class AllDerived(Mapping[int, Derived]):
    """What git derives for every run: the manifest `manifest` (no run forged anything)."""

    def __init__(self, manifest: dict) -> None:
        self.manifest = manifest

    def __getitem__(self, run_id: int) -> Derived:
        return Derived(self.manifest, {})

    def __iter__(self) -> Iterator[int]:
        return iter(())

    def __len__(self) -> int:
        return 0


def honest(manifest: dict) -> Merging:
    """What merges is `manifest`, and git derives it for every source run."""
    return Merging(manifest, derived=AllDerived(manifest))


MERGING = honest(record(event="push", label=""))


def sealed(of: Candidate, manifest: dict) -> Issued:
    """The issuer's receipt of run `of`: its manifest, the archives of its artifacts as
    GitHub lists them, no job images; GitHub's attestation says it ran for PR #7's merge."""
    from infx.reuse.issuer import Checkout, IssueFacts, Issuer, issued_receipt

    checkout = Checkout("refs/pull/7/merge", "c" * 40, "attestation", "github-hosted")
    arts = {a.name: {"x.json": zip_of(a.name)} for a in of.artifacts if not a.expired}
    issuer = Issuer(".github/workflows/sweep-receipt.yml", "refs/heads/main", "e" * 40, 99, 1)
    facts = IssueFacts(REPO, issuer, of.run, checkout, None, None, arts,
                       {name: zip_of(name) for name in arts}, json.dumps(manifest).encode(),
                       [], {}, None)  # fmt: skip
    return Issued(issued_receipt(facts))


def facts(*candidates: Candidate, exhausted: bool = False, **kw) -> SourceFacts:
    """The PR's candidates; the receipt read is the newest candidate's (or `issued`)."""
    kw.setdefault("manifest", record())
    if candidates and kw["manifest"] is not None:
        newest = max(candidates, key=lambda c: (c.run.created_at, c.run.id))
        kw.setdefault("issued", {newest.run.id: sealed(newest, kw["manifest"])})
    return SourceFacts(frozenset({HEAD, OLD}), candidates, exhausted, **kw)


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


@pytest.mark.parametrize("conclusion", ["failure", "cancelled"])
def test_a_pinned_run_that_failed_is_never_published(conclusion) -> None:
    """Issue 31, case 5: `/use <failed run>` published a config whose eval failed its
    accuracy floor (the job failed; main's own sweep would never have been stored)."""
    pinned = Request(None, ReuseCommand(2))
    failed = facts(candidate(2, conclusion=conclusion))
    chosen, why = pick_run(pinned, failed, "run-sweep.yml", 7, REPO)
    assert chosen is None
    assert (
        f"run 2 concluded {conclusion}: reuse publishes only a sweep whose every job passed" in why
    )


def test_a_pinned_run_must_exist_and_carry_results() -> None:
    pinned = Request(None, ReuseCommand(2))
    assert pick_run(pinned, facts(candidate(2)), "run-sweep.yml", 7, REPO)[0].run.id == 2
    assert "does not exist in acme/bench" in pick_run(pinned, facts(), "run-sweep.yml", 7, REPO)[1]
    bare = facts(candidate(2, names=("bmk_agentic_x_0_0",)))
    assert (
        "no unexpired results_bmk artifact" in pick_run(pinned, bare, "run-sweep.yml", 7, REPO)[1]
    )


def test_a_run_of_a_fork_s_commit_is_never_a_source() -> None:
    pinned = Request(None, ReuseCommand(2))
    fork = facts(candidate(2, head_repo="someone/bench"))
    assert (
        "ran commits of someone/bench, not acme/bench"
        in pick_run(pinned, fork, "run-sweep.yml", 7, REPO)[1]
    )
    unknown = facts(candidate(2, head_repo=None))
    assert "an unknown repository" in pick_run(pinned, unknown, "run-sweep.yml", 7, REPO)[1]


def test_a_search_cut_short_says_so_and_asks_for_a_pin() -> None:
    failed = [candidate(i, conclusion="failure") for i in range(MAX_CANDIDATES)]
    chosen, why = pick_run(BARE, facts(*failed, exhausted=True), "run-sweep.yml", 7, REPO)
    assert chosen is None and f"none of the {MAX_CANDIDATES} newest" in why and "pin" in why


# --- did it measure what merges ----------------------------------------------------------


def decide(source: SourceFacts, merging: Merging = MERGING, **kw):
    return verdict(
        pull(**kw), BARE, source, merging, repo=REPO, workflow="run-sweep.yml", require_merged=False
    )


def test_equal_manifests_reuse() -> None:
    found = decide(facts(candidate(1)))
    assert found.ok and found.run.id == 1 and "measured exactly what merges" in found.reason


def test_a_run_that_recorded_a_partial_sweep_is_not_reused() -> None:
    for options, says in (
        ({"evals-only": True}, "full-sweep-fail-fast with evals-only"),
        ({"agentx-fast": True}, "full-sweep-fail-fast with agentx-fast"),
    ):
        partial = facts(candidate(1), manifest=record(reusable=False, **options))
        found = decide(partial)
        assert not found.ok and f"not reusable: planned under {says}" in found.reason
    trimmed = facts(candidate(1), manifest=record(label="sweep-enabled", reusable=False))
    assert "planned under sweep-enabled" in decide(trimmed).reason


def test_every_measured_difference_is_named() -> None:
    merge = record(event="push", label="")
    assert differences(record(), merge) == []
    changed = {**CONFIG, "image": "vllm:2"}
    assert differences(record(), record(config=changed)) == [
        'config llama: image: "vllm:1" -> "vllm:2"'
    ]
    deeper = {**CONFIG, "search-space": [{"tp": 8, "conc-end": 64}]}
    assert differences(record(), record(config=deeper)) == [
        "config llama: search-space[0].conc-end: 32 -> 64"
    ]
    assert differences(record(), record(recipe=b"echo tuned\n")) == [
        "file recipes/llama70b_fp8_mi355x_vllm.sh: differs"
    ]
    assert differences(record(), record(rows=3)) == ["plan rows differ (single 2 -> 3)"]
    assert differences(record(), record(**{"agentx-fast": True})) == [
        "option agentx-fast: false at the run, true at merge"
    ]
    many = differences(record(), record(config=changed, recipe=None, rows=3, **{"all-evals": True}))
    assert summarize(many).endswith("; and 1 more") and len(many) == 4


def test_comments_and_layout_never_count_values_do() -> None:
    """Configs are kept as parsed: the same values in another spelling are equal."""
    assert (
        differences(
            record(config={"image": "vllm:1", "search-space": [{"conc-end": 32, "tp": 8}]}),
            record(),
        )
        == []
    )
    assert (
        differences(record(config={**CONFIG, "extra": 1.0}), record(config={**CONFIG, "extra": 1}))
        != []
    )


def test_what_merges_unplannable_or_different_is_no_reuse() -> None:
    found = decide(facts(candidate(1)), Merging(None, "config keys do not resolve"))
    assert (
        not found.ok and found.reason == "what merges cannot be planned: config keys do not resolve"
    )
    found = decide(facts(candidate(1)), honest(record(event="push", rows=3)))
    assert not found.ok and "run 1 did not measure what merges: plan rows differ" in found.reason


def test_no_manifest_or_no_eval_results_is_no_reuse() -> None:
    missing = facts(candidate(1), manifest=None, manifest_problem="run 1 has no sweep-manifest")
    assert decide(missing).reason == "run 1 has no sweep-manifest"
    evals = facts(candidate(1), manifest=record(evals=1))
    merge = honest(record(event="push", evals=1))
    assert "planned evals but has no unexpired eval_results_all" in decide(evals, merge).reason
    with_evals = facts(
        candidate(1, names=("results_bmk", "eval_results_all")), manifest=record(evals=1)
    )
    assert decide(with_evals, merge).ok


def test_a_pr_into_another_branch_or_from_a_fork_is_not_reused() -> None:
    assert "merges into release, not main" in decide(facts(candidate(1)), base_ref="release").reason
    assert "comes from a fork" in decide(facts(candidate(1)), head_repo="x/bench").reason


def test_the_status_says_ready_or_why_not_within_github_s_limit() -> None:
    ready = reuse_status(decide(facts(candidate(1))))
    assert (ready.context, ready.state) == ("infx/reuse", "success")
    assert ready.description == "ready: run 1 measured exactly this"
    long = honest(record(event="push", config={**CONFIG, "image": "x" * 99, "m": "y" * 99}))
    refused = reuse_status(decide(facts(candidate(1)), long))
    assert refused.state == "failure" and refused.description.startswith("not ready: run 1 did")
    assert len(refused.description) == STATUS_LENGTH and refused.description.endswith("...")


# --- the gate ---------------------------------------------------------------------------------


def pr_facts(number: int, comments: tuple[Comment, ...] = (), perms=None, source=None):
    return PullFacts(pull(number=number), comments, perms or {}, source)


BEFORE, AFTER = "b0" * 20, "c" * 40
LOCAL = Local(BEFORE, MERGING)


def test_gate_push_cases() -> None:
    push = GateEvent("push", AFTER, "refs/heads/main", before=BEFORE)
    assert "belongs to no PR" in decide_gate(push, (), LOCAL, repo=REPO, workflow="w").reason
    quiet = (pr_facts(7), pr_facts(8))
    assert "none asks" in decide_gate(push, quiet, LOCAL, repo=REPO, workflow="w").reason
    asks = (pr_facts(7), pr_facts(8, (comment(1, "m", "/reuse-sweep-run", 5),), {"m": "write"}))
    with pytest.raises(ReuseError, match="refusing to guess"):
        decide_gate(push, asks, LOCAL, repo=REPO, workflow="w")
    other = GateEvent("push", AFTER, "refs/heads/dev", before=BEFORE)
    assert "never reuses" in decide_gate(other, (), LOCAL, repo=REPO, workflow="w").reason
    # The main branch is the settings': a repository whose main is `trunk` reuses there only.
    trunk = GateEvent("push", AFTER, "refs/heads/trunk", before=BEFORE)
    assert "never reuses" in decide_gate(trunk, (), LOCAL, repo=REPO, workflow="w").reason
    assert (
        "belongs to no PR"
        in decide_gate(trunk, (), LOCAL, repo=REPO, workflow="w", main_branch="trunk").reason
    )
    new_branch = GateEvent("push", AFTER, "refs/heads/main", before="0" * 40)
    assert (
        "names no commit before it"
        in decide_gate(new_branch, (), LOCAL, repo=REPO, workflow="w").reason
    )


def merged_pr(**kw) -> PullFacts:
    asked = (comment(1, "m", "/reuse-sweep-run", 5),)
    values = {"merged_at": at(500), "merge_commit_sha": AFTER, **kw}
    return PullFacts(pull(**values), asked, {"m": "write"}, facts(candidate(1)))


def test_gate_on_a_merged_pr_reuses_and_on_a_synchronize_skips() -> None:
    push = GateEvent("push", AFTER, "refs/heads/main", before=BEFORE)
    result = decide_gate(push, (merged_pr(),), LOCAL, repo=REPO, workflow="run-sweep.yml")
    assert result.reuse_enabled and result.outputs()["reuse-source-run-id"] == "1"
    sync = GateEvent("pull_request", HEAD, "refs/pull/7/merge", "synchronize", 7)
    result = decide_gate(sync, (merged_pr(),), LOCAL, repo=REPO, workflow="run-sweep.yml")
    assert result.skip_pr_sweep and not result.reuse_enabled
    moved = GateEvent("pull_request", OLD, "refs/pull/7/merge", "synchronize", 7)
    result = decide_gate(moved, (merged_pr(),), LOCAL, repo=REPO, workflow="run-sweep.yml")
    assert not result.skip_pr_sweep and "a newer event decides" in result.reason
    unmerged = merged_pr(merged_at=None)
    assert (
        "not merged"
        in decide_gate(push, (unmerged,), LOCAL, repo=REPO, workflow="run-sweep.yml").reason
    )


def test_the_push_must_be_the_pr_s_merge_commit_alone() -> None:
    push = GateEvent("push", AFTER, "refs/heads/main", before=BEFORE)
    other = merged_pr(merge_commit_sha="d" * 40)
    result = decide_gate(push, (other,), LOCAL, repo=REPO, workflow="run-sweep.yml")
    assert not result.reuse_enabled and "is not PR #7's merge commit" in result.reason
    extra = Local("e1" * 20, MERGING)  # the merge's parent is a commit the push also brought
    result = decide_gate(push, (merged_pr(),), extra, repo=REPO, workflow="run-sweep.yml")
    assert not result.reuse_enabled and "holds more than PR #7's merge commit" in result.reason
    unknown = Local(None, MERGING)
    result = decide_gate(push, (merged_pr(),), unknown, repo=REPO, workflow="run-sweep.yml")
    assert not result.reuse_enabled and "first parent is unknown" in result.reason


# --- ack and stage ----------------------------------------------------------------------------


def event(body: str, cid: int = 1, on_pr: bool = True, updated: str = "2026-11-30T12:05:00Z"):
    return CommentEvent(7, on_pr, cid, body, updated)


def reads(
    current: Comment | None,
    facts: PullFacts | None,
    merging: Merging = MERGING,
    log: list[str] | None = None,
) -> AckReads:
    """The ack decision's reads, answered from values; `log` lists each read it asked for."""
    asked = [] if log is None else log

    def read(name: str, value):
        asked.append(name)
        assert value is not None, f"{name} was read"
        return value

    return AckReads(
        lambda: read("comment", current),
        lambda _: read("pull", facts and PullFacts(facts.pull, facts.comments, facts.permissions)),
        lambda found, _: read("source", facts and PullFacts(found.pull, found.comments,
                                                            found.permissions, facts.source)),
        lambda _: read("merging", merging),
    )  # fmt: skip


def test_ack_cases() -> None:
    mine = comment(1, "m", "/reuse-sweep-run", 5)
    pr = PullFacts(pull(), (mine,), {"m": "write"}, facts(candidate(1)))
    ok = decide_ack(event(mine.body), reads(mine, pr), repo=REPO, workflow="run-sweep.yml")
    assert ok.reaction == "+1" and "run 1 of PR #7 measured exactly" in ok.reason
    assert ok.verdict is not None and ok.verdict.ok and ok.pull == pr.pull
    edited = decide_ack(event("/reuse-sweep-run 9"), reads(mine, pr), repo=REPO, workflow="w")
    assert edited.reaction is None and "changed since this event" in edited.reason
    assert decide_ack(event("hi"), reads(None, None), repo=REPO, workflow="w").reaction is None
    reader = PullFacts(pull(), (mine,), {"m": "read"}, None)
    refused = decide_ack(event(mine.body), reads(mine, reader), repo=REPO, workflow="w")
    assert refused.reaction == "-1" and refused.verdict is None
    newer = comment(2, "o", "/reuse-sweep-run", 9, "OWNER")
    superseded = PullFacts(pull(), (mine, newer), {"m": "write", "o": "admin"}, None)
    result = decide_ack(event(mine.body), reads(mine, superseded), repo=REPO, workflow="w")
    assert result.reaction == "-1" and "newest: 2" in result.reason
    differs = honest(record(event="push", rows=5))
    no = decide_ack(event(mine.body), reads(mine, pr, differs), repo=REPO, workflow="run-sweep.yml")
    assert no.reaction == "-1" and "did not measure what merges" in no.reason


def test_ack_reads_only_as_far_as_its_answer() -> None:
    """Each early answer stops the reading there: an ignored event reads nothing, a stale
    comment no PR, a refused or closed request no runs, and only a judged request what
    merges."""
    mine = comment(1, "m", "/reuse-sweep-run", 5)
    pr = PullFacts(pull(), (mine,), {"m": "write"}, facts(candidate(1)))
    closed = PullFacts(pull(state="closed"), (mine,), {"m": "write"}, facts(candidate(1)))
    reader = PullFacts(pull(), (mine,), {"m": "read"}, facts(candidate(1)))
    cases = [
        (event("hi"), pr, []),
        (event("/reuse-sweep-run", on_pr=False), pr, []),
        (event("/reuse-sweep-run 9"), pr, ["comment"]),
        (event(mine.body), reader, ["comment", "pull"]),
        (event(mine.body), closed, ["comment", "pull"]),
        (event(mine.body), pr, ["comment", "pull", "source", "merging"]),
    ]
    for sent, found, expected in cases:
        log: list[str] = []
        decide_ack(sent, reads(mine, found, log=log), repo=REPO, workflow="run-sweep.yml")
        assert log == expected, sent


def staged(**kw) -> StageFacts:
    values = dict(
        comment=comment(1, "m", "/stage-results", 5),
        permission="write",
        pull=pull(),
        commits=frozenset({HEAD}),
        label_events=LABELLED,
        candidates=(candidate(1, names=("results_bmk", "changelog-metadata")),),
    )
    values = {**values, **kw}
    # The issuer's receipt of each candidate: it ran for PR #7's merge with main.
    values.setdefault("issued", {c.run.id: sealed(c, record()) for c in values["candidates"]})
    return StageFacts(**values)


def test_stage_cases() -> None:
    done = decide_stage(event("/stage-results"), staged(), "run-sweep.yml", REPO)
    assert done.reaction == "+1" and done.dispatch["run-id"] == 1
    assert [a["staged-as"] for a in done.dispatch["artifacts"]] == [
        "pr7-run1-changelog-metadata",
        "pr7-run1-results_bmk",
    ]
    usage = decide_stage(event("/stage-results now"), None, "run-sweep.yml", REPO)
    assert usage.reaction == "-1" and usage.reason.startswith("usage:") and usage.dispatch is None
    reader = decide_stage(event("/stage-results"), staged(permission="read"), "run-sweep.yml", REPO)
    assert reader.reaction == "-1" and reader.dispatch is None
    missing = decide_stage(event("/stage-results 5"), staged(candidates=()), "run-sweep.yml", REPO)
    assert "run 5 does not exist" in missing.reason
    failed = tuple(candidate(i, conclusion="startup_failure") for i in range(MAX_CANDIDATES))
    cut = decide_stage(
        event("/stage-results"), staged(candidates=failed, exhausted=True), "w", REPO
    )
    assert cut.reaction == "-1" and "pin one of the older runs" in cut.reason
    # Another PR's run from the same branch and commit: the receipt says which merge it ran.
    theirs = sealed(candidate(1, names=("results_bmk", "changelog-metadata")), record())
    assert theirs.receipt is not None
    theirs.receipt["checkout"]["ref"] = "refs/pull/8/merge"
    other = decide_stage(event("/stage-results"), staged(issued={1: theirs}), "run-sweep.yml", REPO)
    assert other.reaction == "-1" and other.dispatch is None
    assert other.reason.startswith("run 1 ran for refs/pull/8/merge, not PR #7's merge")
    unread = decide_stage(event("/stage-results"), staged(issued={}), "run-sweep.yml", REPO)
    assert unread.reaction == "-1" and unread.reason == "run 1's receipt was not read"
    # /stage-results accepts an evals-only sweep; reuse does not.
    evals = staged(pull=pull(labels=("full-sweep-enabled", "evals-only")))
    assert decide_stage(event("/stage-results"), evals, "run-sweep.yml", REPO).reaction == "+1"
