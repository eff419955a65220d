"""CI priority through the workflows: setup scores every job by the policy committed at the
PR's base (the PR's own edit to it does nothing), and each benchmark job runs on its runner
label plus nodes:N, ci-job-<score>-<token> and ci-attempt-<attempt>, which a priority
scheduler registers runners for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.actions.conftest import SweepRepo
from tests.actions.harness import World, pr_payload, simulate
from tests.conftest import entry, make_repo
from tests.github.fake_api import FakeGitHub

POLICY = """\
version: 1
base-score: 1.0
runner-labels: true
adjustments:
  event: {pull_request: 0.5}
  precision: {fp8: 0.25}
"""


@pytest.fixture(scope="module")
def ranked_repo(tmp_path_factory: pytest.TempPathFactory) -> SweepRepo:
    repo = make_repo(tmp_path_factory.mktemp("priority") / "repo")
    base = repo.commit("priority policy", **{"configs__ci-priority.yaml": POLICY})
    repo.git("checkout", "-q", "-b", "feature")
    head = repo.commit(
        "Tune Llama, and rank my own jobs first",
        **{
            "perf-changelog.yaml": repo.read().decode() + "\n" + entry(["llama-fp8-mi355x-vllm"]),
            "configs__ci-priority.yaml": POLICY.replace("base-score: 1.0", "base-score: 99.0"),
        },
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


def test_jobs_run_on_their_priority_labels(
    ranked_repo: SweepRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    api.state.add_pull(17, head_sha=ranked_repo.head, commits=[ranked_repo.head])
    api.state.trusted_labels(17, ["full-sweep-enabled"])
    world = World(ranked_repo.path, tmp_path, api.url, api.state.requests)
    payload = pr_payload(
        "synchronize", ["full-sweep-enabled"], head_sha=ranked_repo.head, base_sha=ranked_repo.base
    )
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.ran("setup"), run.logs
    jobs = [d for d in run.dispatches if any("ROW" in s.get("env", {}) for s in d.steps)]
    assert jobs, run.logs
    tokens = set()
    for job in jobs:
        runner, nodes, ranked, attempt = job.runner
        assert (runner, nodes, attempt) == (job.row["runner"], "nodes:1", "ci-attempt-1")
        assert ranked.startswith("ci-job-1.750-")  # the base's policy: 1 + 0.5 + 0.25
        tokens.add(ranked)
    assert len(tokens) == len(jobs)  # one label per job: a runner takes exactly that job
    assert "priority of" in run.log("setup")
