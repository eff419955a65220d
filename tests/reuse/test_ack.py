"""`infx reuse ack` on issue_comment events: reacts +1/-1, never comments."""

from __future__ import annotations

from tests.github.scenario import RUN, comment_event, green_pr, invoke


def reactions(api, comment_id: int) -> list[str]:
    return [r["content"] for r in api.state.reactions.get(comment_id, [])]


def test_authorized_request_gets_plus_one(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["merged_at"] = None
    comment = api.state.comments[-1]
    summary = tmp_path / "summary.md"
    result = invoke(
        ["reuse", "ack"],
        {**comment_event(tmp_path, comment), "GITHUB_STEP_SUMMARY": str(summary)},
        cwd=pr.at_main().path,
    )
    assert result.exit_code == 0, result.output
    assert reactions(api, comment["id"]) == ["+1"]
    assert f"run {RUN} of PR \\#7 measured exactly what merges" in summary.read_text()
    # The reaction and the PR head's status; no comment is ever posted.
    assert api.state.count("POST") == 2
    assert not any("/issues/7/comments" in p for m, p in api.state.requests if m == "POST")
    (status,) = api.state.statuses[pr.sha1]
    assert status["context"] == "infx/reuse" and status["state"] == "success"
    assert status["description"] == f"ready: run {RUN} measured exactly this"


def test_unauthorized_author_gets_minus_one(api, tmp_path) -> None:
    pr = green_pr(api.state)
    comment = api.state.add_comment(7, "reader0", "/reuse-sweep-run", 200, "COLLABORATOR")
    result = invoke(["reuse", "ack"], comment_event(tmp_path, comment), cwd=pr.at_main().path)
    assert reactions(api, comment["id"]) == ["-1"] and "lacks write" in result.output


def test_previous_reaction_is_replaced(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["merged_at"] = None
    comment = api.state.comments[-1]
    api.state.reactions[comment["id"]] = [
        {"id": 1, "content": "-1", "user": api.state.user("github-actions[bot]")},
        {"id": 2, "content": "-1", "user": api.state.user("someone")},
    ]
    invoke(["reuse", "ack"], comment_event(tmp_path, comment), cwd=pr.at_main().path)
    assert sorted(reactions(api, comment["id"])) == ["+1", "-1"]
    assert [
        r["user"]["login"] for r in api.state.reactions[comment["id"]] if r["content"] == "-1"
    ] == ["someone"]


def test_stale_event_is_ignored(api, tmp_path) -> None:
    pr = green_pr(api.state)
    comment = dict(api.state.comments[-1])
    api.state.comments[-1]["body"] = "never mind"
    api.state.comments[-1]["updated_at"] = "2026-11-30T14:00:00Z"
    result = invoke(
        ["reuse", "ack"], comment_event(tmp_path, comment, action="edited"), cwd=pr.at_main().path
    )
    assert "changed since this event" in result.output
    assert api.state.count("POST") == 0


def test_edited_comment_is_judged_on_its_current_text(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["merged_at"] = None
    comment = api.state.add_comment(7, "maintainer", "/reuse-sweep-run 424242", 200, edited=210)
    result = invoke(
        ["reuse", "ack"], comment_event(tmp_path, comment, action="edited"), cwd=pr.at_main().path
    )
    assert reactions(api, comment["id"]) == ["-1"]
    assert "run 424242 does not exist in acme/bench" in result.output


def test_comment_on_an_issue_is_ignored(api, tmp_path) -> None:
    pr = green_pr(api.state)
    comment = api.state.comments[-1]
    before = len(api.state.requests)  # the scenario's sweep plans read who set the labels
    result = invoke(
        ["reuse", "ack"], comment_event(tmp_path, comment, on_pr=False), cwd=pr.at_main().path
    )
    assert "not a pull request" in result.output and api.state.requests[before:] == []


def test_comment_without_command_is_ignored(api, tmp_path) -> None:
    pr = green_pr(api.state)
    comment = api.state.add_comment(7, "maintainer", "thanks!", 200)
    result = invoke(["reuse", "ack"], comment_event(tmp_path, comment), cwd=pr.at_main().path)
    assert "no /reuse-sweep-run" in result.output and api.state.requests == []


def test_older_request_is_superseded(api, tmp_path) -> None:
    pr = green_pr(api.state)
    older = api.state.comments[-1]
    api.state.add_comment(7, "owner", "/reuse-sweep-run", 300, "OWNER")
    result = invoke(
        ["reuse", "ack"], comment_event(tmp_path, older, action="edited"), cwd=pr.at_main().path
    )
    assert "not the newest authorized request" in result.output
    assert reactions(api, older["id"]) == ["-1"]


def test_closed_pr_refused(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["state"] = "closed"
    result = invoke(
        ["reuse", "ack"], comment_event(tmp_path, api.state.comments[-1]), cwd=pr.at_main().path
    )
    assert "is closed" in result.output


def test_unresolvable_request_refused(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["merged_at"] = None
    for artifacts in api.state.artifacts.values():
        for artifact in artifacts:
            artifact["expired"] = True
    comment = api.state.comments[-1]
    result = invoke(["reuse", "ack"], comment_event(tmp_path, comment), cwd=pr.at_main().path)
    assert reactions(api, comment["id"]) == ["-1"]
    assert "with an unexpired results_bmk artifact" in result.output
    (status,) = api.state.statuses[pr.sha1]
    assert status["state"] == "failure" and status["description"].startswith("not ready: no ")


def test_a_payload_of_another_shape_is_one_line_and_exit_2(api, tmp_path) -> None:
    pr = green_pr(api.state)
    comment = {**api.state.comments[-1], "id": "not-a-number"}
    result = invoke(["reuse", "ack"], comment_event(tmp_path, comment), cwd=pr.at_main().path)
    assert result.exit_code == 2 and api.state.requests == []
    assert result.output.strip() == (
        "infx: error: the issue_comment payload lacks a numeric issue.number or comment.id"
    )
