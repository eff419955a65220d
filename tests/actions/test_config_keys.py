"""Each benchmark job knows which master config the plan made it from: `sweep plan` writes
config-keys.json beside the plan (the plan itself stays InferenceX's, byte for byte),
`sweep chunk` hands each row's key to its job (`config-keys`), the job's `Export the row`
step exports it through `sweep row-env`, and `results process` writes it into the result
rows. Two configs that measure the same identity (the same model, hardware, parallelism
and concurrencies, another image) are two points, and the verdict judges both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.actions.conftest import SweepRepo
from tests.actions.harness import World, pr_payload, simulate
from tests.conftest import MASTER, entry, make_repo
from tests.github.fake_api import FakeGitHub

TWIN = MASTER.split("\n\n")[0].replace("llama-fp8-mi355x-vllm:", "llama-fp8-mi355x-vllm-next:")
TWIN = TWIN.replace("v0.11.0", "v0.12.0")


@pytest.fixture(scope="module")
def twin_repo(tmp_path_factory: pytest.TempPathFactory) -> SweepRepo:
    repo = make_repo(tmp_path_factory.mktemp("twins") / "repo", master=MASTER + "\n" + TWIN)
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    head = repo.commit(
        "Tune both vLLM configs",
        **{"perf-changelog.yaml": repo.read().decode() + "\n" + entry(["llama-fp8-mi355x-vllm*"])},
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


def test_every_job_carries_its_master_config(
    twin_repo: SweepRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    api.state.add_pull(17, head_sha=twin_repo.head, commits=[twin_repo.head])
    api.state.trusted_labels(17, ["full-sweep-enabled"])  # a maintainer asked for the sweep
    world = World(twin_repo.path, tmp_path, api.url, api.state.requests)
    payload = pr_payload(
        "synchronize", ["full-sweep-enabled"], head_sha=twin_repo.head, base_sha=twin_repo.base
    )
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.ran("single"), run.logs
    jobs = [d for d in run.dispatches if any("ROW" in s.get("env", {}) for s in d.steps)]
    assert len(jobs) == 8, [d.job for d in run.dispatches]
    found = {}
    for job in jobs:
        (step,) = [s for s in job.steps if "ROW" in s.get("env", {})]
        found.setdefault(job.row["image"], set()).add(step["env"]["CONFIG_KEY"])
    assert found == {
        "vllm/vllm-openai-rocm:v0.11.0": {"llama-fp8-mi355x-vllm"},
        "vllm/vllm-openai-rocm:v0.12.0": {"llama-fp8-mi355x-vllm-next"},
    }
    # The job's step exports it for `results process`.
    step = next(s for s in jobs[0].steps if "ROW" in s.get("env", {}))
    exported = CliRunner().invoke(
        cli, ["sweep", "row-env"], env={"ROW": step["env"]["ROW"], **step["env"]}
    )
    assert exported.exit_code == 0, exported.output
    assert f"INFX_CONFIG_KEY={step['env']['CONFIG_KEY']}" in exported.output.splitlines()


@pytest.mark.parametrize(
    "bad", ["a\nGITHUB_TOKEN=x", "$(id)", "-leading-dash", "x" * 300, "spaced key"]
)
def test_a_config_key_that_is_no_key_is_refused(bad: str) -> None:
    """The key comes from the plan, which a pull request's configs shape: it must not carry
    a second line into GITHUB_ENV or anything but a key into the results."""
    row = {"model-prefix": "m", "precision": "fp8", "framework": "vllm", "runner": "mi355x"}
    outcome = CliRunner().invoke(
        cli, ["sweep", "row-env"], env={"ROW": json.dumps(row), "CONFIG_KEY": bad}
    )
    assert outcome.exit_code == 2, outcome.output
    assert "INFX_CONFIG_KEY" not in outcome.output and "GITHUB_TOKEN" not in outcome.stdout
