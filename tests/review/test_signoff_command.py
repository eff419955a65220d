"""`infx review signoff` end to end: the real CLI, PyGithub against the fake GitHub API,
settings from the repository's infx.toml. The attacks of test_signoff.py that need GitHub's
side of things (CODEOWNERS read at the base, a truncated file list, a PR that moves while
it is read) are tried here."""

from __future__ import annotations

import copy

from infx.review.signoff import MARKER, PARETO_CHECK, STATUS_CONTEXT
from tests.conftest import GitRepo
from tests.github.fake_api import FakeGitHub, Fault

HEAD, BASE = "a" * 40, "b" * 40
CODEOWNERS = b"* @acme/core\nconfigs/ @amd-owner\n"
SETTINGS = '[review]\nexempt = ["@acme/core"]\nescalate = ["@perf-lead"]\npareto-points = 5\n'


def pull_request(api: FakeGitHub, *paths: str) -> None:
    api.state.add_pull(7, head_sha=HEAD)
    api.state.changed(7, *paths)
    api.state.contents[(".github/CODEOWNERS", BASE)] = CODEOWNERS
    api.state.permissions.update({"amd-owner": "write", "author": "write", "intruder": "write"})


def statuses(api: FakeGitHub) -> list[tuple[str, str]]:
    return [(s["context"], s["state"]) for s in api.state.statuses.get(HEAD, [])]


def test_an_owner_approval_sets_success_and_one_comment(repo: GitRepo, api: FakeGitHub) -> None:
    repo.commit("settings", **{"infx.toml": SETTINGS})
    pull_request(api, "configs/amd-master.yaml")
    api.state.review(7, "amd-owner", "APPROVED", HEAD, 10)
    done = repo.infx("review", "signoff", "--pr", "7", "--status", "--comment")
    assert done.exit_code == 0, done.output
    assert statuses(api) == [(STATUS_CONTEXT, "success")]
    (posted,) = api.state.comments
    assert posted["body"].startswith(MARKER) and "✅ signed off" in posted["body"]
    again = repo.infx("review", "signoff", "--pr", "7", "--status", "--comment")
    assert again.exit_code == 0 and len(api.state.comments) == 1  # the same comment, unedited
    assert api.state.count("PATCH") == 0


def test_a_missing_sign_off_is_a_failure_status(repo: GitRepo, api: FakeGitHub) -> None:
    pull_request(api, "configs/amd-master.yaml")
    api.state.add_comment(7, "intruder", "As a CODEOWNER I sign this off. LGTM", 5)
    api.state.review(7, "intruder", "APPROVED", HEAD, 6)
    api.state.review(7, "amd-owner", "APPROVED", "c" * 40, 7)  # before the last push
    done = repo.infx("review", "signoff", "--pr", "7", "--status")
    assert done.exit_code == 0, done.output  # the status carries the verdict
    assert statuses(api) == [(STATUS_CONTEXT, "failure")]
    assert "approved an earlier commit" in done.output
    local = repo.infx("review", "signoff", "--pr", "7")
    assert local.exit_code == 1 and "Waiting for a sign-off from @amd-owner" in local.output


def test_codeowners_is_read_at_the_base_not_the_head(repo: GitRepo, api: FakeGitHub) -> None:
    """The PR makes its author the owner of everything; only the base's file counts."""
    pull_request(api, "configs/amd-master.yaml", ".github/CODEOWNERS")
    api.state.contents[(".github/CODEOWNERS", HEAD)] = b"* @author\n"
    api.state.review(7, "author", "APPROVED", HEAD, 10)
    done = repo.infx("review", "signoff", "--pr", "7", "--status")
    assert statuses(api) == [(STATUS_CONTEXT, "failure")], done.output
    assert all("ref=" + HEAD not in path for _, path in api.state.requests)


def test_a_file_list_shorter_than_the_pr_fails_closed(repo: GitRepo, api: FakeGitHub) -> None:
    pull_request(api, "configs/amd-master.yaml")
    api.state.pulls[7]["changed_files"] = 3001  # GitHub lists at most 3,000 files
    done = repo.infx("review", "signoff", "--pr", "7", "--status")
    assert done.exit_code == 1 and "cannot see every file" in done.output
    assert statuses(api) == []


def test_a_pull_request_that_moves_while_read_fails_closed(repo: GitRepo, api: FakeGitHub) -> None:
    pull_request(api, "configs/amd-master.yaml")
    api.state.review(7, "amd-owner", "APPROVED", HEAD, 10)
    earlier = copy.deepcopy(api.state.pulls[7])
    earlier["head"]["sha"] = "d" * 40
    earlier["changed_files"] = 1
    api.state.faults.append(Fault(r"/pulls/7$", body=earlier))  # the first read only
    done = repo.infx("review", "signoff", "--pr", "7", "--status")
    assert done.exit_code == 1 and "moved while it was read" in done.output
    assert api.state.statuses == {}


def test_a_review_event_names_the_pr_by_its_head(repo: GitRepo, api: FakeGitHub) -> None:
    repo.commit("settings", **{"infx.toml": SETTINGS})  # the core team owns README.md: exempt
    pull_request(api, "README.md")
    done = repo.infx("review", "signoff", "--sha", HEAD, "--status")
    assert done.exit_code == 0, done.output
    assert statuses(api) == [(STATUS_CONTEXT, "success")]
    unknown = repo.infx("review", "signoff", "--sha", "e" * 40)
    assert unknown.exit_code == 1 and "0 open pull requests" in unknown.output


def test_short_pareto_coverage_mentions_who_settings_name(repo: GitRepo, api: FakeGitHub) -> None:
    repo.commit("settings", **{"infx.toml": SETTINGS})
    pull_request(api, "perf-changelog.yaml")
    api.state.check_runs[HEAD] = [
        {"name": PARETO_CHECK, "status": "completed", "conclusion": "neutral"}
    ]
    done = repo.infx("review", "signoff", "--pr", "7", "--status", "--comment")
    assert done.exit_code == 0, done.output
    body = api.state.comments[0]["body"]
    assert "⚠️ Pareto coverage: a curve of the sweep has fewer than 5 frontier points" in body
    assert "Needs another look: @perf-lead." in body
    assert statuses(api) == [(STATUS_CONTEXT, "success")]  # advisory: the status ignores it


def test_an_owner_github_no_longer_knows_signs_nothing(repo: GitRepo, api: FakeGitHub) -> None:
    pull_request(api, "configs/amd-master.yaml")
    api.state.contents[(".github/CODEOWNERS", BASE)] = b"configs/ @ghost @amd-owner\n"
    api.state.faults.append(Fault(r"/collaborators/ghost/permission", status=404,
                                  body={"message": "Not Found"}))  # fmt: skip
    api.state.review(7, "amd-owner", "APPROVED", HEAD, 10)
    done = repo.infx("review", "signoff", "--pr", "7", "--status")
    assert done.exit_code == 0, done.output
    assert statuses(api) == [(STATUS_CONTEXT, "success")]
