"""`infx security check` against the fake API: each setting that keeps fork code off the GPU
runners, read as GitHub answers it, and each way it can be wrong or out of reach."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.github.fake_api import HTML, REPO, FakeGitHub, Fault

RUNNERS = (
    "labels:\n  mi355x: [mi355x-amds_00, mi355x-amds_01]\n  cluster:mi355x-amds: [mi355x-amds_02]\n"
)
BASE = f"/repos/{REPO}"
SWEEP = [
    f"{REPO}/.github/workflows/run-sweep.yml@refs/heads/main",
    f"{REPO}/.github/workflows/benchmark-tmpl.yml@refs/heads/main",
]


def safe(api: FakeGitHub, **changes: Any) -> None:
    """An organization's public repository set up as the README's security model says:
    approval for every outside contributor, a read-only token, ephemeral GPU runners in a
    group only the sweep workflows may use. `changes` replace answers by path."""
    s = api.state
    s.admin.update(
        {
            BASE: {
                "full_name": REPO,
                "private": False,
                "visibility": "public",
                "owner": {"login": "acme", "type": "Organization"},
            },
            f"{BASE}/actions/permissions/fork-pr-contributor-approval": {
                "approval_policy": "all_external_contributors"
            },
            f"{BASE}/actions/permissions/workflow": {
                "default_workflow_permissions": "read",
                "can_approve_pull_request_reviews": False,
            },
            f"{BASE}/actions/runners": ("runners", []),
            "/orgs/acme/actions/runners": (
                "runners",
                [
                    s.runner("mi355x-amds_00", ["mi355x"], group=7),
                    s.runner("mi355x-amds_02", ["cluster:mi355x-amds"], group=7),
                    s.runner("cpu-01", ["ubuntu-cpu"], ephemeral=False, group=1),
                ],
            ),
            "/orgs/acme/actions/runner-groups": (
                "runner_groups",
                [s.runner_group(1, "Default", None), s.runner_group(7, "gpu", SWEEP)],
            ),
        }
    )
    s.environment("gpu-budget", ["lead"], teams=["gpu-owners"])
    s.admin.update(changes)


def check(repo: GitRepo, *args: str):
    repo.write("configs/runners.yaml", RUNNERS)
    return repo.infx("security", "check", *args)


def lines(output: str) -> dict[str, str]:
    found = {}
    for line in output.splitlines():
        state, _, rest = line.partition(" ")
        name, _, text = rest.strip().partition(": ")
        if state in ("ok", "PROBLEM", "unread"):
            found[name] = f"{state}: {text}"
    return found


def test_the_documented_settings_pass(api: FakeGitHub, repo: GitRepo) -> None:
    safe(api)
    result = check(repo)
    assert result.exit_code == 0, result.output
    found = lines(result.output)
    assert sorted(found) == [
        "budget-environment",
        "ephemeral-runners",
        "fork-approval",
        "runner-groups",
        "workflow-token",
    ]
    assert all(text.startswith("ok: ") for text in found.values()), found
    assert "2 GPU runner(s), each ephemeral" in found["ephemeral-runners"]
    assert found["budget-environment"] == (
        "ok: an over-budget sweep waits in gpu-budget for lead or gpu-owners"
    )
    # Reads only, and no more than the settings need.
    assert {method for method, _ in api.state.requests} == {"GET"}
    assert len(api.state.requests) == 7


@pytest.mark.parametrize(
    ("environment", "says"),
    [
        ("missing", "gpu-budget does not exist: GitHub creates it unprotected"),
        ("unprotected", "gpu-budget has no required reviewers"),
        ("wait timer", "gpu-budget has no required reviewers"),
    ],
)
def test_a_budget_environment_no_one_approves_in_is_a_problem(
    api: FakeGitHub, repo: GitRepo, environment: str, says: str
) -> None:
    """The budget holds an over-budget sweep only while its environment has required
    reviewers; a missing one is created unprotected by the first sweep that names it."""
    safe(api)
    if environment == "missing":
        api.state.environments.clear()
    else:
        api.state.environment("gpu-budget", None, wait=5 if environment == "wait timer" else 0)
    result = check(repo)
    assert result.exit_code == 1, result.output
    found = lines(result.output)
    assert (
        found["budget-environment"].startswith("PROBLEM: ") and says in found["budget-environment"]
    )
    assert [n for n, text in found.items() if not text.startswith("ok: ")] == ["budget-environment"]


def test_an_environment_the_token_may_not_read_is_unread(api: FakeGitHub, repo: GitRepo) -> None:
    safe(api)
    api.state.faults.append(Fault("/environments/gpu-budget", status=403))
    result = check(repo)
    assert result.exit_code == 2, result.output
    assert lines(result.output)["budget-environment"].startswith("unread: ")


WRONG = {
    "approval for first-time contributors only": (
        {
            f"{BASE}/actions/permissions/fork-pr-contributor-approval": {
                "approval_policy": "first_time_contributors"
            }
        },
        "fork-approval",
        "approval policy is first_time_contributors",
    ),
    "a write token by default": (
        {
            f"{BASE}/actions/permissions/workflow": {
                "default_workflow_permissions": "write",
                "can_approve_pull_request_reviews": True,
            }
        },
        "workflow-token",
        "the default workflow token is write, not read; workflows may approve pull requests",
    ),
    "a GPU runner that keeps its state": (
        {
            "/orgs/acme/actions/runners": lambda s: (
                "runners",
                [s.runner("mi355x-amds_01", ["mi355x"], ephemeral=False, group=7)],
            )
        },
        "ephemeral-runners",
        "mi355x-amds_01 keep their state between jobs",
    ),
    "GPU runners in the default group": (
        {
            "/orgs/acme/actions/runners": lambda s: (
                "runners",
                [s.runner("mi355x-amds_00", ["mi355x"], group=1)],
            )
        },
        "runner-groups",
        "group 'Default' lets every workflow use its runners",
    ),
    "a group that lets CI in too": (
        {
            "/orgs/acme/actions/runner-groups": lambda s: (
                "runner_groups",
                [s.runner_group(7, "gpu", [*SWEEP, f"{REPO}/.github/workflows/ci.yml@main"])],
            )
        },
        "runner-groups",
        f"group 'gpu' also lets {REPO}/.github/workflows/ci.yml@main in",
    ),
    "a GPU runner of the repository itself": (
        {
            f"{BASE}/actions/runners": lambda s: (
                "runners",
                [s.runner("mi355x-amds_01", ["mi355x"])],
            )
        },
        "runner-groups",
        "mi355x-amds_01 belong to no organization runner group",
    ),
    "a repository of a user": (
        {
            BASE: {"full_name": REPO, "private": False, "owner": {"login": "acme", "type": "User"}},
            f"{BASE}/actions/runners": lambda s: ("runners", [s.runner("mi355x-amds_00", [])]),
        },
        "runner-groups",
        f"{REPO} belongs to a user",
    ),
    "a private repository running fork PRs unapproved": (
        {
            BASE: {
                "full_name": REPO,
                "private": True,
                "owner": {"login": "acme", "type": "Organization"},
            },
            f"{BASE}/actions/permissions/fork-pr-workflows-private-repos": {
                "run_workflows_from_fork_pull_requests": True,
                "send_write_tokens_to_workflows": False,
                "send_secrets_and_variables": True,
                "require_approval_for_fork_pr_workflows": False,
            },
        },
        "fork-approval",
        "fork PR runs need no approval; they get secrets and variables",
    ),
}


@pytest.mark.parametrize(("changes", "name", "says"), WRONG.values(), ids=WRONG)
def test_each_unsafe_setting_is_named(api: FakeGitHub, repo: GitRepo, changes, name, says) -> None:
    safe(api, **{p: a(api.state) if callable(a) else a for p, a in changes.items()})
    result = check(repo)
    assert result.exit_code == 1, result.output
    found = lines(result.output)
    assert found[name].startswith("PROBLEM: ") and says in found[name], found[name]
    others = [n for n, text in found.items() if n != name and not text.startswith("ok: ")]
    assert others == [], found


def test_a_token_that_may_not_read_a_setting_never_passes(api: FakeGitHub, repo: GitRepo) -> None:
    safe(api)
    api.state.faults.append(
        Fault(
            "fork-pr-contributor-approval",
            status=403,
            body={"message": "Resource not accessible by integration"},
        )
    )
    api.state.faults.append(Fault("/orgs/acme/actions/runner-groups", status=404, times=9))
    result = check(repo)
    assert result.exit_code == 2, result.output
    found = lines(result.output)
    assert found["fork-approval"].startswith("unread: GitHub API error while reading the fork")
    assert "403 Resource not accessible by integration" in found["fork-approval"]
    assert found["runner-groups"].startswith("unread: ") and "404" in found["runner-groups"]
    assert found["workflow-token"].startswith("ok: ")
    assert "use a token that may administer acme/bench" in result.output


def test_no_gpu_runner_in_sight_is_unread_not_ok(api: FakeGitHub, repo: GitRepo) -> None:
    safe(api, **{"/orgs/acme/actions/runners": ("runners", [])})
    result = check(repo)
    assert result.exit_code == 2, result.output
    assert lines(result.output)["ephemeral-runners"] == (
        "unread: no runner with a runners.yaml label or node name is visible to this token"
    )


def test_an_answer_of_the_wrong_shape_is_one_line(api: FakeGitHub, repo: GitRepo) -> None:
    safe(api)
    api.state.faults.append(
        Fault("/actions/permissions/workflow", raw=HTML, content_type="text/html")
    )
    result = check(repo)
    assert result.exit_code == 2
    assert (
        result.output.strip()
        .splitlines()[-1]
        .startswith(
            "infx: error: unexpected GitHub response while reading the default workflow permissions"
        )
    )
    assert "Traceback" not in result.output


def test_without_a_token_it_says_so_at_once(
    api: FakeGitHub, repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No token: GitHub hides every setting, so asking is pointless; one line, no request."""
    monkeypatch.delenv("GITHUB_TOKEN")
    done = check(repo, "--repo", REPO)
    assert done.exit_code == 2, done.output
    assert done.stderr.count("\n") == 1 and "set GH_TOKEN" in done.stderr
    assert api.state.requests == []


def test_an_api_nobody_answers_is_one_short_line(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused connection used to print urllib3's whole chain of wrappers."""
    monkeypatch.setenv("GITHUB_TOKEN", "test-token")
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # discard: nothing listens
    done = check(repo, "--repo", REPO)
    assert done.exit_code == 2, done.output
    (line,) = done.stderr.splitlines()
    assert line.endswith("GitHub API unreachable while reading acme/bench: connection refused")
