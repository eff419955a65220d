"""The use cases behind `infx reuse ack|gate|status`, `stage-results`, `apply-decision` and
`infx merge` as pure functions: the outcome values they return, Markdown escaped."""

from __future__ import annotations

import pytest

from infx.errors import MergeError, UsageError
from infx.github.client import Status
from infx.merge.rules import GATE_CHECK, checks_state, failed_checks, request_note
from infx.reuse.ack import ack
from infx.reuse.gate import GateEvent, Local, gate, gate_failed
from infx.reuse.handoff import (
    Decision,
    StatusDecision,
    handed_on,
    head_moved,
    received_comment,
    status_update,
)
from infx.reuse.measured import Scope
from infx.reuse.source import PullFacts, Request
from infx.reuse.stage import stage
from infx.reuse.status import asking_pulls, pull_status, standing
from tests.reuse.test_decisions import (
    HEAD,
    MERGING,
    REPO,
    ReuseCommand,
    candidate,
    comment,
    event,
    facts,
    pull,
    reads,
    staged,
)

SCOPE = Scope(REPO, "run-sweep.yml")
EVIL = "x<img src=x onerror=alert(1)>|*@team"


def test_ack_outcome_reacts_sets_the_status_and_escapes_the_summary() -> None:
    mine = comment(1, "m", "/reuse-sweep-run", 5)
    ok = PullFacts(pull(), (mine,), {"m": "write"}, facts(candidate(1)))
    found = ack(event(mine.body), reads(mine, ok), SCOPE)
    assert found.decision.reaction == "+1" and found.decision.dispatch is None
    assert found.decision.status is not None and found.decision.status.sha == HEAD
    assert found.decision.status.status.description == "ready: run 1 measured exactly this"
    assert found.summary == (
        "### /reuse-sweep-run accepted\n\nrun 1 of PR \\#7 measured exactly what merges\n"
    )
    assert found.lines == ("accepted: run 1 of PR #7 measured exactly what merges",)
    # A reason quoting a branch name is data: inert in the summary, as is in the log.
    elsewhere = PullFacts(pull(base_ref=EVIL), (mine,), {"m": "write"}, facts(candidate(1)))
    refused = ack(event(mine.body), reads(mine, elsewhere), SCOPE)
    assert refused.decision.reaction == "-1"
    assert "<img" not in refused.summary and "&lt;img" in refused.summary
    assert "\\|\\*@&#8203;team" in refused.summary
    assert refused.lines == (f"refused: PR #7 merges into {EVIL}, not main",)
    ignored = ack(event("hello"), reads(None, None), SCOPE)
    assert ignored.decision == Decision() and ignored.summary.startswith(
        "### /reuse-sweep-run ignored"
    )


def test_gate_outcome_sets_a_status_on_pr_events_only() -> None:
    mine = comment(1, "m", "/reuse-sweep-run", 5)
    asked = PullFacts(pull(), (mine,), {"m": "write"}, facts(candidate(1)))
    on_pr = GateEvent("pull_request", HEAD, "refs/pull/7/merge", "synchronize", 7)
    skipped = gate(on_pr, (asked,), Local(None, MERGING), SCOPE)
    assert skipped.outputs["skip-pr-sweep"] == "true" and skipped.status is not None
    assert skipped.status.status.state == "success"
    assert (
        skipped.summary
        == "### Sweep reuse\n\nPR sweep skipped: run 1 of PR \\#7 measured exactly what merges\n"
    )
    opened = GateEvent("pull_request", HEAD, "refs/pull/7/merge", "opened", 7)
    assert gate(opened, (asked,), Local(None, MERGING), SCOPE).status is None
    push = GateEvent("push", HEAD, f"refs/heads/{EVIL}", before="b" * 40)
    elsewhere = gate(push, (), Local(None, MERGING), SCOPE)
    assert elsewhere.status is None and "<img" not in elsewhere.summary
    assert elsewhere.outputs["reuse-reason"] == f"push to refs/heads/{EVIL} never reuses"
    failed = gate_failed(UsageError("cap reached"))
    assert failed["reuse-enabled"] == "false" and failed["reuse-reason"] == "no reuse: cap reached"


def test_stage_outcome_tables_what_is_staged_with_names_as_code() -> None:
    names = ("results_bmk", "changelog-metadata", "bmk_agentic_a|b`c")
    found = stage(
        event("/stage-results"),
        staged(candidates=(candidate(1, names=names),)),
        "run-sweep.yml",
        REPO,
    )
    decided = found.decision
    assert decided.reaction == "+1" and decided.dispatch is not None
    assert decided.dispatch.event_type == "stage-results"
    assert decided.dispatch.payload["requested-by"] == "m"
    assert found.summary == (
        "### /stage-results\n\nstaged 3 artifact(s) of run 1\n\n"
        "| artifact | staged as |\n| --- | --- |\n"
        "| `changelog-metadata` | `pr7-run1-changelog-metadata` |\n"
        "| `results_bmk` | `pr7-run1-results_bmk` |\n"
        "| ``bmk_agentic_a\\|b`c`` | ``pr7-run1-bmk_agentic_a\\|b`c`` |\n\n"
    )
    assert found.lines[0] == "staged 3 artifact(s) of run 1"
    assert "  bmk_agentic_a|b`c -> pr7-run1-bmk_agentic_a|b`c" in found.lines
    usage = stage(event("/stage-results now"), None, "w", REPO)
    assert usage.decision == Decision("-1") and usage.lines == (usage.lines[0],)
    assert "\\[&lt;run\\_id&gt;\\]" in usage.summary


def test_status_outcome_only_for_a_standing_request() -> None:
    mine = comment(1, "m", "/reuse-sweep-run", 5)
    nobody = PullFacts(pull(), (mine,), {"m": "read"}, None)
    assert standing(nobody) is None
    asked = standing(PullFacts(pull(), (mine,), {"m": "write"}, facts(candidate(1))))
    assert asked is not None and asked.request.comment == mine
    found = pull_status(asked, MERGING, SCOPE)
    assert found.status.sha == HEAD and found.status.status.state == "success"
    assert found.summary == "- PR #7: run 1 of PR \\#7 measured exactly what merges\n"
    fork = pull(number=8, head_repo="someone/bench")
    unlabelled = pull(number=9, labels=())
    assert asking_pulls([pull(), fork, unlabelled], REPO) == [pull()]


def test_a_decision_survives_the_handoff_between_jobs() -> None:
    payload = {"action": "created", "issue": {"number": 7, "pull_request": {}}}
    payload["comment"] = {"id": 1, "body": "/stage-results", "updated_at": "t"}
    found = stage(event("/stage-results"), staged(), "w", REPO)
    status = StatusDecision(HEAD, Status("infx/reuse", "failure", "not ready: no"))
    sent = Decision(found.decision.reaction, found.decision.dispatch, status)
    outputs = sent.outputs()
    received, got = handed_on(
        "issue_comment", payload, outputs["reaction"], outputs["dispatch"], outputs["status"]
    )
    assert got == sent and received.comment_id == 1
    assert Decision().outputs() == {"reaction": "", "dispatch": "", "status": ""}
    with pytest.raises(UsageError, match="runs on an issue_comment event"):
        handed_on("push", payload, "", "", "")


def test_which_comment_events_a_command_takes() -> None:
    payload = {"action": "deleted", "issue": {"number": 7}, "comment": {"id": 1}}
    assert received_comment("issue_comment", payload, ("created", "edited")) == (
        None,
        "ignored: issue_comment deleted is not a comment created or edited",
    )
    payload["action"] = "edited"
    received, why = received_comment("issue_comment", payload, ("created", "edited"))
    assert received is not None and received.issue_number == 7 and why == ""


def test_status_updates_say_what_they_did() -> None:
    decided = StatusDecision(HEAD, Status("infx/reuse", "success", "ready: run 1"))
    assert status_update(decided, decided.status) == (
        False,
        f"infx/reuse on {HEAD[:12]} already says: ready: run 1",
    )
    assert status_update(decided, None) == (True, f"infx/reuse on {HEAD[:12]}: ready: run 1")
    assert head_moved(decided, HEAD, 7) is None
    assert head_moved(decided, "b" * 40, 7) == "PR #7's head moved to bbbbbbbbbbbb; status left"


def test_the_merge_helper_merges_only_on_passed_checks_and_a_ready_status() -> None:
    passed = [(GATE_CHECK, "completed", "success"), ("tests", "completed", "skipped")]
    ready = Status("infx/reuse", "success", "ready")
    assert failed_checks(passed, HEAD) is None
    assert failed_checks([("tests", "completed", "failure")], HEAD) == (
        f"checks failed on {HEAD[:12]}: tests"
    )
    assert checks_state(passed, ready, HEAD).passed == (
        f"all 2 checks passed and infx/reuse says ready on {HEAD[:12]}"
    )
    assert checks_state(passed, None, HEAD).waiting == ("infx/reuse",)
    assert checks_state(passed[1:], ready, HEAD).waiting == (GATE_CHECK,)
    running = [*passed, ("lint", "in_progress", None)]
    assert checks_state(running, Status("infx/reuse", "pending", ""), HEAD).waiting == ("lint",)
    with pytest.raises(MergeError, match=r"infx/reuse on \w+: not ready: run 1 did not"):
        checks_state(passed, Status("infx/reuse", "failure", "not ready: run 1 did not"), HEAD)
    pinned = request_note(Request(None, ReuseCommand(500)))
    assert pinned == "an authorized request exists (pinned to run 500); not posting another"
