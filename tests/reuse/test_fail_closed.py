"""`infx reuse gate` under a GitHub API that answers wrongly, slowly or endlessly.

Doubt means no reuse: a body of the wrong shape, a page link that loops, a connection
that never answers or a search that would cost a request per run all end the decision
with reuse-enabled=false, a one-line reason and a bounded number of requests.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import LINK
from tests.github.fake_api import HTML, Fault
from tests.github.scenario import MAIN_ENTRY, PR_ENTRY, RUN, changelog, green_pr
from tests.step_files import read_step_file


@pytest.fixture
def gate_outputs(tmp_path, monkeypatch):
    target = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(target))
    return lambda: read_step_file(target)


def assert_one_line_no_reuse(result, read_outputs, *, says: str) -> None:
    """Exit 2 with one line on stderr matching `says`, and no-reuse outputs with that reason."""
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("infx: error: ") and re.search(says, line), line
    out = read_outputs()
    assert out["reuse-enabled"] == "false" and out["skip-pr-sweep"] == "false"
    assert re.search(says, out["reuse-reason"])


# --- the changelog: what merges plans the same rows, or no reuse ----------------------------


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("++ x", "what merges cannot be planned"),
        ("-- x", "what merges cannot be planned"),
        ("+++ b/x", "what merges cannot be planned"),
        ("  pr-link: https://example.com/pull/1", "what merges cannot be planned"),
        ("  evals-only: true", "plan rows differ"),
    ],
)
def test_a_line_beyond_pr_link_after_the_run_voids_reuse(api, line, says) -> None:
    pr = green_pr(api.state)
    text = changelog(PR_ENTRY, link=f"{LINK}7") + line + "\n"
    pr.branch.commit("sneak", **{"perf-changelog.yaml": text})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false", out["reuse-reason"]
    assert says in out["reuse-reason"]


def test_a_line_added_to_an_already_linked_entry_voids_reuse(api) -> None:
    pr = green_pr(api.state)  # the sweep ran the commit with the canonical link
    grown = changelog(PR_ENTRY + "  all-evals: true\n", link=f"{LINK}7")
    pr.branch.commit("grow", **{"perf-changelog.yaml": grown})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and "plan rows differ" in out["reuse-reason"]


def test_a_history_edit_hidden_next_to_a_link_fix_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    text = changelog(PR_ENTRY, link=f"{LINK}7").replace("Raise max", "Lower max")
    pr.branch.commit("rewrite", **{"perf-changelog.yaml": text})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "what merges cannot be planned" in out["reuse-reason"]


def test_a_pr_link_correction_is_the_only_change_allowed(api) -> None:
    pr = green_pr(api.state)
    api.state.runs = [r for r in api.state.runs if r["id"] != RUN]  # the sweep ran sha0
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


def test_a_merge_of_main_that_rewrites_main_history_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    pr.branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY)})
    evil = changelog(MAIN_ENTRY.replace("Main change", "Main chang3"), PR_ENTRY, link=f"{LINK}7")
    pr.branch.merge_main(**{"perf-changelog.yaml": evil})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "what merges cannot be planned" in out["reuse-reason"]


# --- item 7: bounded cost ---------------------------------------------------------------


def test_a_page_link_that_loops_ends_the_decision(api, gate_outputs) -> None:
    pr = green_pr(api.state, comments=250)
    api.state.page_links[r"/issues/7/comments"] = "loop"
    result, _ = pr.gate()
    assert_one_line_no_reuse(result, gate_outputs, says="repeats a page")
    assert sum("/issues/7/comments" in p for _, p in api.state.requests) <= 4


def test_a_page_link_that_never_ends_hits_the_page_cap(api, gate_outputs) -> None:
    pr = green_pr(api.state, comments=150)
    api.state.page_links[r"/issues/7/comments"] = "endless"
    result, _ = pr.gate()
    assert_one_line_no_reuse(result, gate_outputs, says="pages")
    assert sum("/issues/7/comments" in p for _, p in api.state.requests) == 30


def test_a_connection_that_never_answers_ends_at_the_time_cap(
    api, gate_outputs, monkeypatch
) -> None:
    pr = green_pr(api.state)
    monkeypatch.setenv("INFX_API_SECONDS", "1.5")
    api.state.faults.append(Fault(r"/", hang=True, times=1000))
    result, _ = pr.gate()
    assert_one_line_no_reuse(result, gate_outputs, says="1.5 s")


def test_newest_run_with_artifacts_behind_1000_runs_without_any(api) -> None:
    pr = green_pr(api.state)
    for i in range(1000):
        api.state.add_run(20_000 + i, head_sha=pr.sha1, minute=70 + i / 100, artifacts=[])
    result, out = pr.gate()
    assert result.exit_code == 0 and out["reuse-source-run-id"] == str(RUN), result.output
    assert len(api.state.requests) <= 16, api.state.requests
    assert not any(f"/runs/{20_000 + i}/" in p for i in range(1000) for _, p in api.state.requests)


def test_too_many_requests_in_one_decision_end_it(api, gate_outputs) -> None:
    pr = green_pr(api.state)
    # 200 read-only collaborators each post the command: one permission lookup apiece.
    for i in range(200):
        api.state.add_comment(7, f"drive-by{i}", "/reuse-sweep-run", 300 + i, "COLLABORATOR")
    result, _ = pr.gate()
    assert_one_line_no_reuse(result, gate_outputs, says="requests")
    assert len(api.state.requests) <= 100


# --- item 8: bodies that are not JSON on any endpoint --------------------------------------

ENDPOINTS = {
    "commit-pulls": r"/commits/[0-9a-f]+/pulls",
    "comments": r"/issues/7/comments",
    "permission": r"/collaborators/",
    "pull-commits": r"/pulls/7/commits",
    "artifacts": r"/actions/artifacts",
    "runs": r"/actions/workflows/run-sweep.yml/runs",
    "pinned-run": rf"/actions/runs/{RUN}$",
    "run-artifacts": rf"/actions/runs/{RUN}/artifacts",
}
BODIES = {
    "html": (HTML, "text/html", "not JSON"),
    "truncated": (b'[{"id": 1, "body": "/reuse', "application/json", "malformed JSON"),
    "empty": (b"", "application/json", "an empty body"),
    "object": (b"{}", "application/json", r"no \w+ list|\w+ is None|a JSON object, not a list"),
    "scalar": (b"42", "application/json", "a JSON number, not (a list|an object)"),
}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("body", BODIES)
def test_a_body_that_is_not_the_expected_json_ends_in_one_line(
    api, gate_outputs, endpoint, body
) -> None:
    pr = green_pr(api.state)
    if endpoint == "pinned-run":
        api.state.add_comment(7, "owner", f"/reuse-sweep-run {RUN}", 150, "OWNER")
    raw, content_type, says = BODIES[body]
    api.state.faults.append(
        Fault(ENDPOINTS[endpoint], raw=raw, content_type=content_type, times=99)
    )
    result, _ = pr.gate()
    assert_one_line_no_reuse(result, gate_outputs, says=says)
    assert any(re.search(ENDPOINTS[endpoint], path) for _, path in api.state.requests)
