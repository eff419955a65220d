"""A pull request prices its own sweep: the budget is read at the base so it cannot raise
it, and the GPUs a node holds must not be its to lower either. A runners.yaml edit that
says a node has one GPU made every job on it cost the GPUs its server uses instead of the
whole node it holds: a tp4 job half price, a tp1 job an eighth."""

from __future__ import annotations

import json

from tests.conftest import LINK, GitRepo, entry
from tests.matrix.conftest import RUNNERS

SETTINGS = "[budget]\nsweep-enabled = 10\n"


def _estimate(repo: GitRepo) -> dict[str, object]:
    result = repo.infx(
        "sweep", "plan", "--base", "base", "--head", "HEAD", "--budget", "sweep-enabled",
        "--estimate", "estimate.json", "--format", "text",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document: dict[str, object] = json.loads(repo.read("estimate.json"))
    return document


def _appended(repo: GitRepo, runners: str = RUNNERS) -> dict[str, object]:
    """The estimate of a PR appending an entry for a config with tp8 and tp4 jobs, its
    runners.yaml as given, against a base with a budget."""
    repo.git("reset", "-q", "--hard", "base")
    repo.commit("budget", **{"infx.toml": SETTINGS})
    repo.git("tag", "-f", "base")
    appended = entry(["llama-fp8-mi355x-vllm"], f"{LINK}7")
    repo.commit("append", **{"perf-changelog.yaml": appended, "configs/runners.yaml": runners})
    return _estimate(repo)


def test_a_pr_that_shrinks_a_node_is_priced_at_the_bases_nodes(bench: GitRepo) -> None:
    honest = _appended(bench)
    smaller = RUNNERS.replace("gpus-per-node: 8", "gpus-per-node: 1")
    assert smaller != RUNNERS
    dodged = _appended(bench, smaller)
    assert dodged["gpu-hours"] == honest["gpu-hours"] == 32.0
    assert dodged["over-budget"] is True
    jobs = dodged["jobs"]
    assert isinstance(jobs, list) and {job["gpus-held"] for job in jobs} == {8}
    assert {job["gpus"] for job in jobs} == {4, 8}


def test_a_label_the_base_does_not_size_is_priced_at_no_less_than_eight(
    bench: GitRepo,
) -> None:
    """runners.yaml only describes the runners: the label a job runs on is whatever GitHub
    runner carries it. A PR that adds a label of its own, sized one GPU a node, for a
    config it points at that label, is priced as any label runners.yaml never sized."""
    honest = _appended(bench)
    named = RUNNERS.replace(
        "hardware:\n",
        "  mi355x-amds_00: [mi355x-amds_00]\nhardware:\n  mi355x-amds_00:\n"
        "    available-cpu-dram-mib: 3_095_781\n    gpus-per-node: 1\n",
    )
    bench.git("reset", "-q", "--hard", "base")
    bench.commit("budget", **{"infx.toml": SETTINGS})
    bench.git("tag", "-f", "base")
    master = (bench.path / "configs/amd-master.yaml").read_text()
    pointed = master.replace("  runner: mi355x\n", "  runner: mi355x-amds_00\n", 1)
    bench.commit(
        "append",
        **{
            "perf-changelog.yaml": entry(["llama-fp8-mi355x-vllm"], f"{LINK}7"),
            "configs/runners.yaml": named,
            "configs/amd-master.yaml": pointed,
        },
    )
    dodged = _estimate(bench)
    assert dodged["gpu-hours"] == honest["gpu-hours"] == 32.0
    jobs = dodged["jobs"]
    assert isinstance(jobs, list) and {job["runner"] for job in jobs} == {"mi355x-amds_00"}


def test_a_pr_that_grows_a_node_is_priced_at_its_own(bench: GitRepo) -> None:
    """The larger size wins: nodes said to hold more GPUs price every job higher."""
    honest = _appended(bench)
    grown = _appended(bench, RUNNERS.replace("gpus-per-node: 8", "gpus-per-node: 16"))
    assert grown["gpu-hours"] == 2 * honest["gpu-hours"] == 64.0


# An aggregate multi-node config (format pr3058) whose `num-nodes` says one node for a
# worker of 32 GPUs: the row asks for one node, its servers use four nodes' worth.
FEW_NODES = """
dsr1-fp4-mi355x-sglang-agg:
  image: lmsysorg/sglang-rocm:v0.5.12
  model: amd/DeepSeek-R1
  model-prefix: dsr1
  runner: mi355x-disagg
  precision: fp4
  framework: sglang-disagg
  multinode: true
  disagg: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [1, 8, 32]
        num-nodes: NODES
        worker: { num-worker: 1, tp: 32, ep: 1, dp-attn: false }
"""


def _agg(repo: GitRepo, nodes: int) -> dict[str, object]:
    repo.git("reset", "-q", "--hard", "base")
    master = (repo.path / "configs/amd-master.yaml").read_text() + FEW_NODES.replace(
        "NODES", str(nodes)
    )
    repo.commit("budget", **{"infx.toml": SETTINGS})
    repo.git("tag", "-f", "base")
    appended = entry(["dsr1-fp4-mi355x-sglang-agg"], f"{LINK}7")
    repo.commit("append", **{"perf-changelog.yaml": appended, "configs/amd-master.yaml": master})
    return _estimate(repo)


def test_a_job_holds_at_least_the_nodes_its_servers_fill(bench: GitRepo) -> None:
    """`num-nodes: 1` for 32 GPUs priced the job at one node of 8: a quarter of the GPUs its
    servers use. Whatever the row asks the scheduler for, a job is priced at no fewer whole
    nodes than its GPUs fill."""
    honest = _agg(bench, 4)
    few = _agg(bench, 1)
    jobs = few["jobs"]
    assert isinstance(jobs, list) and len(jobs) == 2  # the points and their eval
    assert {(job["gpus"], job["gpus-held"], job["nodes"]) for job in jobs} == {(32, 32, 4)}
    assert few["gpu-hours"] == honest["gpu-hours"] == 32.0
    assert few["over-budget"] is True
    more = _agg(bench, 6)  # more nodes than the GPUs fill: the plan's count stands
    assert more["gpu-hours"] == 48.0
