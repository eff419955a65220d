"""Plans larger than one GitHub matrix: every row still runs, exactly once, and no matrix or
job output goes over GitHub's limits (256 jobs per matrix, 1 MB of outputs per job)."""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.cli import cli
from infx.matrix.rows import MATRIX_LIMIT, OUTPUT_BUDGET, chunks
from tests.actions.conftest import SweepRepo
from tests.actions.harness import World, key, plan_rows, planned, pr_payload, simulate
from tests.conftest import SHARED, entry, make_repo
from tests.github.fake_api import FakeGitHub
from tests.step_files import read_step_file

CONFIGS = 70
CONCURRENCIES = 10  # conc 1, 2, 4, ... 512
GITHUB_OUTPUT_LIMIT = 1024 * 1024  # bytes per job, counted in UTF-16


def master(count: int) -> str:
    return "\n".join(
        f"""big{i:02d}-fp8-mi355x-vllm:
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: big{i:02d}
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {{ tp: 8, conc-start: 1, conc-end: 512 }}
"""
        for i in range(count)
    )


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> SweepRepo:
    repo = make_repo(tmp_path_factory.mktemp("big") / "repo", master=master(CONFIGS))
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    head = repo.commit(
        "Sweep every big config",
        **{"perf-changelog.yaml": repo.read().decode() + "\n" + entry(["big*"])},
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le"))


def test_a_700_row_bucket_runs_every_row_exactly_once(
    big_repo: SweepRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    api.state.add_pull(17, head_sha=big_repo.head, commits=[big_repo.head])
    api.state.trusted_labels(17, ["non-canary-full-sweep-enabled"])
    world = World(big_repo.path, tmp_path, api.url, api.state.requests)
    payload = pr_payload(
        "synchronize",
        ["non-canary-full-sweep-enabled"],
        head_sha=big_repo.head,
        base_sha=big_repo.base,
    )
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.ran("single"), run.logs
    rows = planned(run)["single_node"]["1k1k"]
    assert len(rows) == CONFIGS * CONCURRENCIES == 700

    assert Counter(key(d.row) for d in run.dispatches) == Counter(map(key, rows))
    assert run.matrices["single"] == math.ceil(len(rows) / MATRIX_LIMIT)
    assert all(0 < size <= MATRIX_LIMIT for size in run.matrices.values())
    artifacts = [name for d in run.dispatches for name in d.artifacts]
    assert len(set(artifacts)) == len(artifacts) == len(rows)
    assert all(name.startswith("bmk_single_") for name in artifacts)
    assert {d.runner for d in run.dispatches} == {"mi355x"}
    assert utf16(json.dumps(run.outputs["setup"])) < GITHUB_OUTPUT_LIMIT
    for name, outputs in run.outputs.items():
        if name.endswith("/rows"):
            assert utf16(outputs["rows"]) < GITHUB_OUTPUT_LIMIT


def _outputs(args: list[str], tmp_path: Path) -> dict[str, str]:
    target = tmp_path / "output"
    target.write_text("")
    result = CliRunner().invoke(cli, args, env={"GITHUB_OUTPUT": str(target)})
    assert result.exit_code == 0, result.output
    return read_step_file(target)


GOLDEN = sorted((SHARED / "plans").glob("*.plan.json.gz")) if SHARED.exists() else []


@pytest.mark.skipif(not GOLDEN, reason="needs ../shared/inferencex/plans")
@pytest.mark.parametrize("golden", GOLDEN, ids=[p.name for p in GOLDEN])
def test_real_full_plans_fit_github_limits(golden: Path, tmp_path: Path) -> None:
    """The reference's plans selecting every real InferenceX config (a 690-row bucket, 1.6 MB
    of rows): setup's outputs stay small, each chunk fits a matrix and a job output, and the
    chunks hold every row once."""
    plan = json.loads(gzip.decompress(golden.read_bytes()))
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(plan))
    setup = _outputs(["sweep", "outputs", str(path)], tmp_path)
    assert utf16(json.dumps(setup)) < 64 * 1024
    seen: list[str] = []
    for bucket, value in setup.items():
        if bucket.startswith("has-") or bucket == "changelog-metadata":
            continue
        for index in json.loads(value):
            rows = json.loads(
                _outputs(
                    ["sweep", "chunk", str(path), "--bucket", bucket, "--index", str(index)],
                    tmp_path,
                )["rows"]
            )
            assert 0 < len(rows) <= MATRIX_LIMIT
            assert utf16(json.dumps(rows, separators=(",", ":"))) < GITHUB_OUTPUT_LIMIT
            seen += map(key, rows)
    assert Counter(seen) == Counter(map(key, plan_rows(plan)))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=900),
)
def test_chunks_keep_order_and_limits(sizes: list[int]) -> None:
    rows = [{"exp-name": f"r{i}", "pad": "x" * size} for i, size in enumerate(sizes)]
    parts = chunks(rows)
    assert [row for part in parts for row in part] == rows
    for part in parts:
        assert 0 < len(part) <= MATRIX_LIMIT
        assert utf16(json.dumps(part, separators=(",", ":"))) <= OUTPUT_BUDGET
    assert len(parts) >= math.ceil(len(rows) / MATRIX_LIMIT)
