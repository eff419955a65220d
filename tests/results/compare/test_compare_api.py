"""`infx results compare` through the GitHub API (a local fake): baseline search on main with a
request budget, artifact downloads, and one sticky PR comment edited in place."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.results.ingest.process import document
from infx.results.render.comment import MARKER
from tests.github.fake_api import Fault, State
from tests.results.compare.test_compare import point
from tests.results.simulate import Sweeps

PR = 7


def zipped(rows: list[dict], extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("results.json", json.dumps(document(rows)))
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buffer.getvalue()


def main_runs(state: State, tables: list[list[dict] | None], start: int = 5000) -> list[int]:
    """Successful push runs on main, newest first in `tables` order (None: no results_bmk)."""
    ids = []
    for i, rows in enumerate(tables):
        run_id = start + i
        state.add_run(
            run_id,
            head_sha=f"{i:040x}",
            minute=10_000 - i * 10,
            branch="main",
            event="push",
            artifacts=["results_bmk", "changelog-metadata"] if rows is not None else ["run-stats"],
        )
        if rows is not None:
            state.blobs[run_id * 100] = zipped(rows)
        ids.append(run_id)
    return ids


def compare(tmp_path: Path, rows: list[dict], *args: str, runs: str = "1"):
    """One baseline run unless `runs` says otherwise (the search's request accounting)."""
    current = tmp_path / "results.json"
    current.write_text(json.dumps(document(rows)))
    return CliRunner().invoke(
        cli,
        ["results", "compare", str(current), "--pr", str(PR), "--history-runs", runs, *args],
        env={"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")},
    )


def bot_comments(state: State) -> list[dict]:
    return [
        c
        for c in state.comments
        if c["user"]["login"] == "github-actions[bot]" and c["body"].startswith(MARKER)
    ]


OURS = [point(c, tput=1000, tpot_ms=20) for c in (4, 8)]
OTHER = [point(c, tput=1000, tpot_ms=20, tp=2) for c in (4, 8)]
# OURS measured again: no run repeats another to every digit (a copy of main's is refused).
AGAIN = [point(c, tput=1001, tpot_ms=20) for c in (4, 8)]


def test_newest_main_run_with_these_configs_is_the_baseline(api, tmp_path: Path) -> None:
    older = [point(c, tput=500, tpot_ms=20) for c in (4, 8)]
    ids = main_runs(api.state, [OTHER, None, OURS, older] + [OTHER] * 96)
    api.state.add_run(4000, head_sha="e" * 40, minute=99_999, branch="feature")  # a PR run
    api.state.blobs[400000] = zipped(OTHER)
    api.state.add_run(
        4001, head_sha="d" * 40, minute=99_998, branch="main", event="push", conclusion="failure"
    )
    faster = [point(c, tput=1100, tpot_ms=18) for c in (4, 8)]
    outcome = compare(tmp_path, faster)
    assert outcome.exit_code == 0, outcome.output
    (sticky,) = bot_comments(api.state)
    link = f"newest [{ids[2]}](https://github.com/acme/bench/actions/runs/{ids[2]})"
    assert link in sticky["body"]
    assert "1,000 → 1,100 (+10.0% ±8.3) 🟢" in sticky["body"]  # one run: 2 % assumed
    # runs, artifacts named results_bmk, 2 downloads; then the comment (list + create).
    search = [
        p for m, p in api.state.requests if "/issues/" not in p and not p.startswith("/_blobs")
    ]
    assert len(search) == 4 and api.state.api_requests() - 2 <= 6
    assert api.state.blob_auth == [None, None]  # the token never reaches artifact storage
    assert (tmp_path / "summary.md").read_text().startswith(MARKER)


def test_the_sticky_comment_is_edited_in_place(api, tmp_path: Path) -> None:
    main_runs(api.state, [OURS])
    api.state.add_pull(PR, head_sha="f" * 40)
    api.state.add_comment(PR, "reviewer", f"{MARKER}\nI quote the bot", 5, "MEMBER")
    assert compare(tmp_path, [point(c, tput=1100, tpot_ms=20) for c in (4, 8)]).exit_code == 0
    (first,) = bot_comments(api.state)
    outcome = compare(tmp_path, [point(c, tput=800, tpot_ms=20) for c in (4, 8)])
    assert outcome.exit_code == 1 and "updated the results comment on #7" in outcome.output
    (second,) = bot_comments(api.state)
    assert second["id"] == first["id"] and "-20.0% ±8.3) 🔴" in second["body"]
    assert ("PATCH", f"/repos/acme/bench/issues/comments/{first['id']}") in api.state.requests
    assert sum(1 for m, p in api.state.requests if m == "POST") == 1
    assert api.state.comments[0]["body"] == f"{MARKER}\nI quote the bot"
    assert compare(tmp_path, [point(c, tput=800, tpot_ms=20) for c in (4, 8)]).exit_code == 1
    assert sum(1 for m, _ in api.state.requests if m == "PATCH") == 1  # same body: no edit


def test_the_request_budget_bounds_the_search(api, tmp_path: Path) -> None:
    main_runs(api.state, [OTHER] * 100)
    outcome = compare(tmp_path, OURS, "--budget", "6")
    assert outcome.exit_code == 0, outcome.output
    assert "6 API request(s); request budget of 6 spent" in outcome.output
    (sticky,) = bot_comments(api.state)
    assert "none found (6 API request(s); request budget of 6 spent" in sticky["body"]
    assert "| 4 | 🆕 new | – → 1,000" in sticky["body"]
    assert api.state.api_requests() == 6 + 2


def test_main_runs_older_than_the_artifact_page_are_looked_up(api, tmp_path: Path) -> None:
    main_runs(api.state, [OURS, OTHER])
    for i in range(120):  # newer pull-request runs fill the repository's artifact page
        api.state.add_run(7000 + i, head_sha=f"{i:040x}", minute=20_000 + i, branch="feature")
    outcome = compare(tmp_path, AGAIN)
    assert outcome.exit_code == 0, outcome.output
    assert "4 API request(s)" in outcome.output
    assert (
        "GET",
        "/repos/acme/bench/actions/runs/5000/artifacts?name=results_bmk&per_page=100",
    ) in (api.state.requests)


def test_expired_and_unreadable_results_are_skipped(api, tmp_path: Path) -> None:
    main_runs(api.state, [OURS, OURS, OURS])
    api.state.artifacts[5000][0]["expired"] = True
    api.state.blobs[500100] = b"PK\x03\x04 not really a zip"
    outcome = compare(tmp_path, AGAIN)
    assert outcome.exit_code == 0, outcome.output
    assert "skipped run 5000 (results expired), run 5001: unreadable results.json" in outcome.output
    assert (
        "newest [5002](https://github.com/acme/bench/actions/runs/5002)"
        in (bot_comments(api.state)[0]["body"])
    )


def test_a_pinned_baseline_run(api, tmp_path: Path) -> None:
    main_runs(api.state, [OTHER, OURS])
    outcome = compare(tmp_path, AGAIN, "--baseline-run", "5001")
    assert outcome.exit_code == 0, outcome.output
    assert "newest [5001](" in bot_comments(api.state)[0]["body"]
    assert "3 API request(s)" in outcome.output


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            Fault(r"/actions/workflows/", 404, body={"message": "Not Found"}, times=9),
            "404 Not Found",
        ),
        (Fault(r"/actions/workflows/", 200, body={}, times=9), "no workflow_runs list"),
        (
            Fault(r"/actions/artifacts\?", 200, body={"artifacts": [{"id": "1"}]}, times=9),
            "id is '1'",
        ),
        (Fault(r"/actions/artifacts/\d+/zip", 403, body={"message": "Forbidden"}, times=9), "403"),
    ],
)
def test_api_trouble_fails_closed_without_a_comment(
    api, tmp_path: Path, fault: Fault, message: str
) -> None:
    main_runs(api.state, [OURS])
    api.state.faults.append(fault)
    outcome = compare(tmp_path, OURS)
    assert outcome.exit_code == 2, outcome.output
    assert message in outcome.output and "Traceback" not in outcome.output
    assert not bot_comments(api.state)
    assert not any(m == "POST" for m, _ in api.state.requests)


def test_an_empty_run_asks_nothing_of_the_api(api, tmp_path: Path) -> None:
    main_runs(api.state, [OURS])
    outcome = compare(tmp_path, [])
    assert outcome.exit_code == 1 and "nothing was measured" in outcome.output
    assert api.state.requests == []


HEAD = "f" * 40


def history_runs(api, sweeps: Sweeps, runs: int) -> None:
    main_runs(api.state, [sweeps.run(6000 + r)["rows"] for r in range(runs)])


def test_main_history_is_read_through_the_api_within_budget(api, tmp_path: Path) -> None:
    sweeps = Sweeps(3, seed=4)
    history_runs(api, sweeps, 14)
    outcome = compare(tmp_path, sweeps.run(9000)["rows"], runs="10")
    assert outcome.exit_code == 0, outcome.output
    (sticky,) = bot_comments(api.state)
    assert "Main's history: 10 successful main run(s) read through the API." in sticky["body"]
    assert "History: 10 main run(s), newest [5000]" in sticky["body"]
    assert "12 API request(s)" in outcome.output  # runs, artifacts page, 10 downloads
    assert api.state.api_requests() - 2 <= 16


def verdict_run(api, tmp_path: Path, *args: str, factor: float = 0.8):
    sweeps = Sweeps(2, seed=8)
    if not api.state.runs:  # main's history, once: every run of a test sees the same
        history_runs(api, sweeps, 6)
    else:
        sweeps.history(6)  # the same seeded numbers for this run's rows
    rows = sweeps.run(9000, lambda i, c: factor if i == 0 else 1.0)["rows"]
    return compare(tmp_path, rows, "--check-sha", HEAD, *args, runs="6")


def check_runs(api) -> list[dict]:
    return api.state.check_runs.get(HEAD, [])


def test_a_regression_fails_the_check_run_and_the_job(api, tmp_path: Path) -> None:
    api.state.add_pull(PR, head_sha=HEAD)
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == 1, outcome.output
    (check,) = check_runs(api)
    assert check["name"] == "infx/results" and check["status"] == "completed"
    assert check["conclusion"] == "failure"
    assert check["output"]["title"].startswith("regressed: 8 of 16 point(s) regressed")
    assert "Gate: **fails**" in check["output"]["summary"]
    assert "/ack-regression" in bot_comments(api.state)[0]["body"]


def test_every_place_a_verdict_is_shown_says_the_same(api, tmp_path: Path) -> None:
    """The comment, --out, the check run and the job summary show one rendering; stdout's
    JSON and --verdict-out one document."""
    api.state.add_pull(PR, head_sha=HEAD)
    out, verdict = tmp_path / "comment.md", tmp_path / "verdict.json"
    outcome = verdict_run(
        api, tmp_path, "--out", str(out), "--verdict-out", str(verdict), "--format", "json"
    )
    assert outcome.exit_code == 1, outcome.output
    (sticky,) = bot_comments(api.state)
    (check,) = check_runs(api)
    assert out.read_text() == sticky["body"]
    assert check["output"]["summary"] == sticky["body"].replace(MARKER + "\n", "", 1)
    assert (tmp_path / "summary.md").read_text() == sticky["body"] + "\n"
    shown = json.loads(outcome.stdout)
    assert shown == json.loads(verdict.read_text()) and shown["gate"]["passed"] is False


def test_a_quiet_run_passes_the_check(api, tmp_path: Path) -> None:
    api.state.add_pull(PR, head_sha=HEAD)
    outcome = verdict_run(api, tmp_path, factor=1.0)
    assert outcome.exit_code == 0, outcome.output
    assert [c["conclusion"] for c in check_runs(api)] == ["success"]
    assert not any("/collaborators/" in p for _, p in api.state.requests)  # nothing to ack


def test_the_acknowledge_label_lets_it_pass(api, tmp_path: Path) -> None:
    """A maintainer reads the failing verdict in the sticky comment (posted at minute 900),
    adds the label, and re-runs the job."""
    api.state.add_pull(PR, head_sha=HEAD)
    api.state.permissions["maint"] = "write"
    assert verdict_run(api, tmp_path).exit_code == 1
    api.state.pulls[PR]["labels"] = [{"name": "regression-acknowledged", "id": 1}]
    api.state.label(PR, "labeled", "regression-acknowledged", 950, actor="maint")
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == 0, outcome.output
    assert [c["conclusion"] for c in check_runs(api)] == ["failure", "success"]
    body = bot_comments(api.state)[0]["body"]
    assert "**🔴 regressed**" in body
    assert "Gate: passes, acknowledged (label `regression-acknowledged` added by maint)." in body


@pytest.mark.parametrize(
    ("login", "permission", "association", "text", "passes"),
    [
        ("maint", "write", "MEMBER", "/ack-regression", True),
        ("maint", "admin", "COLLABORATOR", "looked at it\n  /ack-regression  \n", True),
        ("reader", "read", "COLLABORATOR", "/ack-regression", False),
        ("outsider", "write", "NONE", "/ack-regression", False),
        ("maint", "write", "MEMBER", "please /ack-regression", False),
    ],
)
def test_a_maintainers_comment_acknowledges(
    api, tmp_path: Path, login: str, permission: str, association: str, text: str, passes: bool
) -> None:
    api.state.add_pull(PR, head_sha=HEAD)
    api.state.permissions[login] = permission
    assert verdict_run(api, tmp_path).exit_code == 1  # the sticky comment shows the verdict
    api.state.add_comment(PR, login, text, 950, association)
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == (0 if passes else 1), outcome.output
    assert [c["conclusion"] for c in check_runs(api)][-1] == ("success" if passes else "failure")
    if passes:
        assert f"`/ack-regression` by {login}" in bot_comments(api.state)[0]["body"]


def test_an_acknowledgement_before_the_verdict_was_shown_counts_not(
    api, tmp_path: Path, monkeypatch
) -> None:
    """A comment (or the label) given before the sticky comment showed this verdict answers
    another one: it does not wave this sweep through."""
    api.state.add_pull(PR, head_sha=HEAD, labels=["regression-acknowledged"])
    api.state.permissions["maint"] = "write"
    api.state.add_comment(PR, "maint", "/ack-regression", 50, "MEMBER")
    api.state.label(PR, "labeled", "regression-acknowledged", 40, actor="maint")
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == 1, outcome.output
    assert not any("/collaborators/" in p for _, p in api.state.requests)
    body = bot_comments(api.state)[0]["body"]
    assert "was added before this verdict was shown" in body
    # The maintainer looks at this sweep's comment (posted at minute 900), acknowledges
    # it, and re-runs the job.
    api.state.add_comment(PR, "maint", "/ack-regression", 950, "MEMBER")
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == 0, outcome.output
    assert [c["conclusion"] for c in check_runs(api)] == ["failure", "success"]


def test_an_acknowledgement_covers_only_the_verdict_the_maintainer_saw(
    api, tmp_path: Path, monkeypatch
) -> None:
    """Run 4242 failed (-20 %) and its comment is up; run 4243 of the same head measured
    -40 %. The acknowledgement of 4242's verdict must not wave 4243's through; once shown
    and acknowledged, it passes, and re-running the job again keeps it acknowledged."""
    api.state.add_pull(PR, head_sha=HEAD)
    api.state.permissions["maint"] = "write"
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    assert verdict_run(api, tmp_path).exit_code == 1  # the sticky comment shows run 4242
    api.state.add_comment(PR, "maint", "/ack-regression", 1000, "MEMBER")  # after reading it
    monkeypatch.setenv("GITHUB_RUN_ID", "4243")
    outcome = verdict_run(api, tmp_path, factor=0.6)
    assert outcome.exit_code == 1, outcome.output
    body = bot_comments(api.state)[0]["body"]
    assert "Gate: **fails**" in body and "needs a new one" in body
    # Now 4243's verdict is up (edited at minute 1200); acknowledged, the job re-run twice.
    api.state.add_comment(PR, "maint", "/ack-regression", 1300, "MEMBER")
    for _ in range(2):
        outcome = verdict_run(api, tmp_path, factor=0.6)
        assert outcome.exit_code == 0, outcome.output
    assert "`/ack-regression` by maint" in bot_comments(api.state)[0]["body"]


def test_a_label_added_by_someone_with_triage_acknowledges_nothing(api, tmp_path: Path) -> None:
    """Triage may add labels; who added the label decides, not that it is there."""
    api.state.add_pull(PR, head_sha=HEAD)
    api.state.permissions["triager"] = "read"  # triage reads as read in this API
    assert verdict_run(api, tmp_path).exit_code == 1
    api.state.pulls[PR]["labels"] = [{"name": "regression-acknowledged", "id": 1}]
    api.state.label(PR, "labeled", "regression-acknowledged", 950, actor="triager")
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == 1, outcome.output
    body = bot_comments(api.state)[0]["body"]
    assert "was added by triager, who may not acknowledge a regression" in body
    assert ("GET", "/repos/acme/bench/collaborators/triager/permission") in api.state.requests
    # A maintainer removes and adds it again: now it counts.
    api.state.permissions["maint"] = "maintain"
    api.state.label(PR, "unlabeled", "regression-acknowledged", 1250, actor="maint")
    api.state.label(PR, "labeled", "regression-acknowledged", 1260, actor="maint")
    assert verdict_run(api, tmp_path).exit_code == 0


def test_the_label_of_one_push_passes_not_the_next_pushs_regression(api, tmp_path: Path) -> None:
    """The label added for one push's verdict stayed on the PR and passed a later push's
    -40 %: the verdict is bound to the head it judged."""
    api.state.add_pull(PR, head_sha=HEAD)
    api.state.permissions["maint"] = "write"
    assert verdict_run(api, tmp_path, factor=0.8).exit_code == 1
    api.state.pulls[PR]["labels"] = [{"name": "regression-acknowledged", "id": 1}]
    api.state.label(PR, "labeled", "regression-acknowledged", 950, actor="maint")
    assert verdict_run(api, tmp_path, factor=0.8).exit_code == 0
    later = "e" * 40
    api.state.pulls[PR]["head"]["sha"] = later
    outcome = verdict_run(api, tmp_path, "--check-sha", later, factor=0.6)
    assert outcome.exit_code == 1, outcome.output
    body = bot_comments(api.state)[0]["body"]
    assert "was added before this verdict was shown" in body
    assert [c["conclusion"] for c in api.state.check_runs[later]] == ["failure"]


def test_an_acknowledgement_comment_by_a_bot_or_an_unnamed_actor(api, tmp_path: Path) -> None:
    """A label added by an app (its token may write labels for anyone who asks it) names no
    person's permission: it does not count, and no permission is asked for it."""
    api.state.add_pull(PR, head_sha=HEAD)
    assert verdict_run(api, tmp_path).exit_code == 1
    api.state.pulls[PR]["labels"] = [{"name": "regression-acknowledged", "id": 1}]
    api.state.label(PR, "labeled", "regression-acknowledged", 950, actor="labeler[bot]")
    outcome = verdict_run(api, tmp_path)
    assert outcome.exit_code == 1, outcome.output
    assert not any("/collaborators/" in p for _, p in api.state.requests)
