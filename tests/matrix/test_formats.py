"""The seed-era rules (format pr3058) on a small synthetic repository, and how infx tells a
repository's format: aggregate workers with num-nodes, node-count, vendor evals,
eval-framework/eval-suite, no-evals, fingerprints after worker defaults, trimming per
deployment shape, and `format` in infx.toml."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LINK, GitRepo, entry, make_repo

AMD = """\
kimik3-fp4-mi355x-vllm-agentic:
  image: vllm/vllm-openai-rocm:nightly-1
  model: moonshotai/Kimi-K3
  model-prefix: kimik3
  runner: cluster:mi355x-amds
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - { tp: 8, kv-offloading: none, conc-list: [1, 4, 8] }

dsv41flash-fp4-mi355x-vllm-agentic:
  image: vllm/vllm-openai-rocm:nightly-2
  model: deepseek-ai/DeepSeek-V4.1-Flash
  model-prefix: dsv41flash
  runner: cluster:mi355x-amds
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - { tp: 4, kv-offloading: none, conc-list: [1, 4, 16, 32] }

llama-fp8-mi355x-vllm:
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: cluster:mi355x-amds
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
"""

NVIDIA = """\
glm-fp8-gb300-dynamo-vllm-agentic-agg:
  image: vllm/vllm-openai:nightly-3
  model: zai-org/GLM-5
  model-prefix: glm5
  runner: cluster:gb300-nv
  precision: fp8
  framework: dynamo-vllm
  multinode: true
  scenarios:
    agentic-coding:
    - search-space:
      - conc-list: [4, 16, 32]
        num-nodes: 2
        worker: { tp: 8, ep: 1, dp-attn: false }

dsr1-fp4-b200-dynamo-trt:
  image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1
  model: deepseek-r1-fp4
  model-prefix: dsr1
  runner: cluster:b200-nscale
  precision: fp4
  framework: dynamo-trt
  kv-p2p-transfer: nixl
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [16, 64]
        prefill:
          num-worker: 1
          tp: 4
          ep: 4
          dp-attn: true
          additional-settings: ["PREFILL_NODES=1"]
        decode: { num-worker: 3, tp: 8, ep: 8, dp-attn: false }
      - conc-list: [8]
        prefill:
          num-worker: 2
          tp: 4
          ep: 4
          dp-attn: true
          additional-settings: ["CONFIG_FILE=recipes/trtllm/b200/ctx2_gen1.yaml"]
        decode: { num-worker: 1, tp: 8, ep: 8, dp-attn: false, additional-settings: [] }
"""

RUNNERS = """\
labels:
  cluster:mi355x-amds: [mi355x-amds_00]
  cluster:gb300-nv: [gb300-nv_00]
  cluster:b200-nscale: [b200-nscale_00]
hardware:
  cluster:mi355x-amds: { available-cpu-dram-mib: 3_095_781, gpus-per-node: 8 }
  cluster:gb300-nv: { available-cpu-dram-mib: 860_160, gpus-per-node: 4 }
  cluster:b200-dgxc: { available-cpu-dram-mib: 3_095_781, gpus-per-node: 8 }
"""

# Written as InferenceX at PR #2707 wrote an aggregate multi-node config: a prefill/decode pair.
PAIRED = """
glm-fp8-gb300-dynamo-vllm-agentic-paired:
  image: vllm/vllm-openai:nightly-3
  model: zai-org/GLM-5
  model-prefix: glm5
  runner: cluster:gb300-nv
  precision: fp8
  framework: dynamo-vllm
  multinode: true
  scenarios:
    agentic-coding:
    - search-space:
      - conc-list: [4]
        prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 0, tp: 8, ep: 1, dp-attn: false }
"""

SETTINGS = 'repository = "acme/bench"\n'


@pytest.fixture
def seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    for name in ("GITHUB_REPOSITORY", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    repo = make_repo(tmp_path / "repo", history="", master=AMD)
    repo.commit(
        "configs",
        **{
            "configs/nvidia-master.yaml": NVIDIA,
            "configs/runners.yaml": RUNNERS,
            "infx.toml": SETTINGS,
            "benchmarks/multi_node/srt-slurm-recipes/trtllm/b200/ctx2_gen1.yaml": (
                "resources:\n  prefill_nodes: 2\n  decode_nodes: 3\n"
            ),
        },
    )
    repo.git("tag", "-f", "base")
    return repo


def _plan(repo: GitRepo, *entries: str, flags: tuple[str, ...] = ()) -> Any:
    repo.commit("entry", **{"perf-changelog.yaml": "\n".join(entries)})
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD", *flags)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def _digest(row: dict[str, Any]) -> str:
    """The fingerprint as published: sha256 of the recipe's canonical JSON."""
    text = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def test_the_format_is_the_one_the_data_needs_and_says_why(seed: GitRepo) -> None:
    plan, stderr = _plan(seed, entry(["llama-fp8-mi355x-vllm"]))
    assert "InferenceX format pr3058" in stderr
    assert "glm-fp8-gb300-dynamo-vllm-agentic-agg" in stderr and "pr2707 refuses" in stderr
    assert plan["evals"][0]["eval-framework"] == "lm-eval"

    # A prefill/decode pair where pr3058 wants one worker: the repository is on pr2707.
    seed.git("reset", "-q", "--hard", "base")
    seed.commit("paired", **{"configs/nvidia-master.yaml": PAIRED})
    seed.git("tag", "-f", "base")
    plan, stderr = _plan(seed, entry(["llama-fp8-mi355x-vllm"]))
    assert "InferenceX format pr2707" in stderr and "which pr3058 refuses" in stderr
    assert "eval-framework" not in plan["evals"][0]
    assert "no-evals" not in plan["changelog_metadata"]["entries"][0]


def test_data_no_format_accepts_stops_the_plan_and_the_gate(seed: GitRepo) -> None:
    seed.write("configs/nvidia-master.yaml", NVIDIA + PAIRED)
    seed.write("perf-changelog.yaml", entry(["llama-fp8-mi355x-vllm"]))
    seed.commit("both")
    plan = seed.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    gate = seed.infx("changelog", "check", "--base", "base", "--head", "HEAD")
    for result in (plan, gate):
        assert result.exit_code == 1
        assert "no known InferenceX format accepts this repository" in result.output
        assert "glm-fp8-gb300-dynamo-vllm-agentic-paired" in result.output
        assert "Traceback" not in result.output


def test_format_in_infx_toml_wins(seed: GitRepo) -> None:
    seed.commit("pin", **{"infx.toml": SETTINGS + 'format = "pr2707"\n'})
    seed.git("tag", "-f", "base")
    # The pinned format refuses the aggregate worker: its schema says so, at the line.
    result = seed.infx("sweep", "validate")
    assert result.exit_code == 1
    assert "InferenceX format pr2707" in result.stderr and "set by `format`" in result.stderr
    assert "configs/nvidia-master.yaml:" in result.stderr and "worker" in result.stderr
    seed.commit("drop it", **{"configs/nvidia-master.yaml": ""})
    seed.git("tag", "-f", "base")
    plan, _ = _plan(seed, entry(["llama-fp8-mi355x-vllm"]))
    assert "eval-framework" not in plan["evals"][0]
    # ... and a key it does not know, in an appended entry.
    quiet = entry(["llama-fp8-mi355x-vllm"], f"{LINK}5", extra="  no-evals: true\n")
    seed.write("perf-changelog.yaml", quiet)
    gate = seed.infx("changelog", "check", "--base", "base")
    assert gate.exit_code == 1
    assert "problem(s) found" in gate.output and "pr-link" not in gate.output
    assert "no-evals: not a key of InferenceX format pr2707" in gate.output
    assert "set format = 'pr3058'" in gate.output


def test_an_appended_key_of_another_era_fails_its_line_unpinned(seed: GitRepo) -> None:
    """A repository on pr2707 by its data (a paired aggregate config), nothing pinned: an
    appended entry taking `no-evals` from a later era fails the rule `format` at its line,
    beside the entry's other problems; the entry does not change the repository's format."""
    seed.commit("paired", **{"configs/nvidia-master.yaml": PAIRED})
    seed.git("tag", "-f", "base")
    seed.write(
        "perf-changelog.yaml",
        entry(extra="  no-evals: true\n") + "\n" + entry(extra="  scenario-typ: [agentic]\n"),
    )
    gate = seed.infx("changelog", "check", "--base", "base", "--pr", "5")
    assert gate.exit_code == 1, gate.output
    assert "no known InferenceX format" not in gate.output
    assert "perf-changelog.yaml:6: format: no-evals: not a key of InferenceX format pr2707" in (
        gate.output
    )
    assert "did you mean 'scenario-type'?" in gate.output
    assert "2 problem(s) found" in gate.output


def test_aggregate_worker_rows(seed: GitRepo) -> None:
    plan, _ = _plan(seed, entry(["glm-fp8-gb300-dynamo-vllm-agentic-agg"]))
    rows = plan["multi_node"]["agentic"]
    assert [r["conc"] for r in rows] == [[4], [16], [32]]
    assert rows[0]["exp-name"] == "glm5_p1x8_d0x8_conc4"
    first = rows[0]
    assert first["node-count"] == 2
    assert list(first)[5:8] == ["spec-decoding", "runner", "node-count"]
    assert first["prefill"] == {
        "num-worker": 1,
        "tp": 8,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "additional-settings": [],
    }
    assert first["decode"]["num-worker"] == 0 and first["disagg"] is False
    # One eval: the topology's highest concurrency of at least 16.
    (evaluated,) = plan["multinode_agentic_evals"]
    assert evaluated["conc"] == [32] and evaluated["eval-conc"] == 32
    assert (evaluated["eval-framework"], evaluated["eval-suite"]) == ("lm-eval", "")
    assert list(evaluated)[-3:] == ["eval-conc", "eval-framework", "eval-suite"]


def test_node_count_of_a_disaggregated_config(seed: GitRepo) -> None:
    plan, _ = _plan(seed, entry(["dsr1-fp4-b200-dynamo-trt"]))
    first, second = plan["multi_node"]["8k1k"]
    # PREFILL_NODES=1, and 3 decode workers of tp 8 on 8-GPU nodes (the b200 family's: the
    # runner label has no hardware entry of its own).
    assert first["node-count"] == 1 + 3
    # The recipe the repository holds: prefill_nodes 2 + decode_nodes 3.
    assert second["node-count"] == 5
    evaluated = plan["multinode_evals"]
    assert [(r["conc"], r["eval-conc"], r["node-count"]) for r in evaluated] == [([16, 64], 64, 4)]


def test_a_recipe_path_may_not_leave_the_recipes(seed: GitRepo) -> None:
    seed.commit(
        "escape",
        **{"configs/nvidia-master.yaml": NVIDIA.replace("b200/ctx2_gen1.yaml", "../../../x.yaml")},
    )
    seed.git("tag", "-f", "base")
    seed.commit("entry", **{"perf-changelog.yaml": entry(["dsr1-fp4-b200-dynamo-trt"])})
    result = seed.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1
    assert (
        "dsr1-fp4-b200-dynamo-trt: CONFIG_FILE=recipes/trtllm/../../../x.yaml points outside"
        in (result.output)
    )


def test_vendor_evals_of_a_wildcard_entry(seed: GitRepo) -> None:
    plan, _ = _plan(seed, entry(['"*-mi355x-vllm*"']))
    agentic = [(r["model-prefix"], r["conc"], r["eval-framework"], r["eval-suite"])
               for r in plan["agentic_evals"]]  # fmt: skip
    # Kimi K3: its vendor's verifier at every point; the others: lm-eval at the highest.
    assert agentic == [
        ("kimik3", 1, "kimi-vendor", "kimi_tool_call_schema"),
        ("kimik3", 4, "kimi-vendor", "kimi_tool_call_schema"),
        ("kimik3", 8, "kimi-vendor", "kimi_tool_call_schema"),
        ("dsv41flash", 32, "lm-eval", ""),
    ]
    assert [(r["conc"], r["eval-framework"]) for r in plan["evals"]] == [
        (32, "lm-eval"),
        (64, "lm-eval"),
    ]
    assert len(plan["single_node"]["agentic"]) == 7

    wide, _ = _plan(seed, entry(['"*-mi355x-vllm*"']), flags=("--all-evals",))
    kinds = [(r["model-prefix"], r["eval-framework"]) for r in wide["agentic_evals"]]
    assert kinds.count(("kimik3", "kimi-vendor")) == 3
    assert kinds.count(("dsv41flash", "lm-eval")) == 4


def test_no_evals_entry(seed: GitRepo) -> None:
    quiet = entry(["llama-fp8-mi355x-vllm"], extra="  no-evals: true\n")
    plan, _ = _plan(seed, quiet)
    assert len(plan["single_node"]["8k1k"]) == 5 and plan["evals"] == []
    assert plan["changelog_metadata"]["entries"][0]["no-evals"] is True
    # Another entry of the same diff still evaluates the config.
    plan, _ = _plan(seed, quiet, entry(["llama-fp8-mi355x-vllm"]))
    assert len(plan["evals"]) == 2 and len(plan["single_node"]["8k1k"]) == 5

    seed.commit("entry", **{"perf-changelog.yaml": quiet})
    labelled = seed.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--evals-only")
    assert labelled.exit_code == 1
    assert "no-evals entries cannot share a sweep with the all-evals or evals-only" in (
        labelled.output
    )


def test_the_gate_accepts_no_evals_and_refuses_it_beside_an_eval_field(seed: GitRepo) -> None:
    link = f"{LINK}5"
    seed.write(
        "perf-changelog.yaml", entry(["llama-fp8-mi355x-vllm"], link, extra="  no-evals: true\n")
    )
    accepted = seed.infx("changelog", "check", "--base", "base")
    assert accepted.exit_code == 0, accepted.output
    both = "  no-evals: true\n  all-evals: true\n"
    seed.write("perf-changelog.yaml", entry(["llama-fp8-mi355x-vllm"], link, extra=both))
    gate = seed.infx("changelog", "check", "--base", "base")
    assert gate.exit_code == 1
    assert "no-evals runs no eval, so it cannot be combined with any eval field" in gate.output
    assert "remove no-evals, or remove the eval fields" in gate.output


def test_fingerprints_hash_the_workers_after_defaults(seed: GitRepo) -> None:
    """An empty `additional-settings` written out or left out is one recipe; node-count is
    part of it."""
    plan, _ = _plan(seed, entry(["dsr1-fp4-b200-dynamo-trt"]))
    for row in plan["multi_node"]["8k1k"]:
        recipe = {k: v for k, v in row.items() if k not in ("conc", "exp-name", "eval-only")}
        recipe.pop("recipe-fingerprint")
        recipe.pop("eval-all-concs")
        assert row["recipe-fingerprint"] == _digest(recipe)
    explicit = NVIDIA.replace(
        "decode: { num-worker: 3, tp: 8, ep: 8, dp-attn: false }",
        "decode: { num-worker: 3, tp: 8, ep: 8, dp-attn: false, additional-settings: [] }",
    )
    seed.git("reset", "-q", "--hard", "base")
    seed.commit("explicit", **{"configs/nvidia-master.yaml": explicit})
    seed.git("tag", "-f", "base")
    again, _ = _plan(seed, entry(["dsr1-fp4-b200-dynamo-trt"]))
    assert again["multi_node"] == plan["multi_node"]


def test_trim_keeps_one_row_per_deployment_shape(seed: GitRepo) -> None:
    plan, _ = _plan(
        seed, entry(["glm-fp8-gb300-dynamo-vllm-agentic-agg", "dsr1-*"]), flags=("--trim-conc",)
    )
    assert [r["conc"] for r in plan["multi_node"]["agentic"]] == [[4]]
    assert [r["conc"] for r in plan["multi_node"]["8k1k"]] == [[16], [8]]
    # Evals are not trimmed.
    assert [r["eval-conc"] for r in plan["multinode_agentic_evals"]] == [32]


def _planned_and_priced(seed: GitRepo, nvidia: str) -> tuple[list[int], list[int]]:
    """The node counts of the plan's multi-node rows and the nodes the estimate prices."""
    seed.commit("nodes", **{"configs/nvidia-master.yaml": nvidia})
    seed.git("tag", "-f", "base")
    estimate = seed.path / "estimate.json"
    plan, _ = _plan(seed, entry(["dsr1-fp4-b200-dynamo-trt"]), flags=("--estimate", str(estimate)))
    planned = [r["node-count"] for r in plan["multi_node"]["8k1k"] + plan["multinode_evals"]]
    jobs = json.loads(estimate.read_text())["jobs"]
    return planned, [job["nodes"] for job in jobs]


@pytest.mark.parametrize(
    ("setting", "first"),
    [
        ("PREFILL_NODES=1", 1 + 3),
        # InferenceX's planner reads a role's count with Python's `\d` and int(), which take
        # any script's decimal digits: Arabic-Indic 3 is 3.
        ("PREFILL_NODES=\u0663", 3 + 3),
        # ... and only a setting that is the whole assignment: this one counts nothing, so
        # the role's GPUs over a node's do (4 of 8: one node).
        ("PREFILL_NODES=2 ", 1 + 3),
    ],
)
def test_the_estimate_prices_a_job_at_the_nodes_the_plan_counts(
    seed: GitRepo, setting: str, first: int
) -> None:
    planned, priced = _planned_and_priced(seed, NVIDIA.replace("PREFILL_NODES=1", setting))
    # The first topology's two rows and its eval, then the recipe's 5 nodes (2 + 3), which
    # the estimate once priced from the workers' GPUs (3 nodes).
    assert planned == [first, 5, first]
    assert sorted(priced) == sorted(planned)


@pytest.mark.parametrize(
    "digits", ["9" * 5000, str(2**63), "0"], ids=["past-int-digits", "2**63", "zero"]
)
def test_a_node_setting_that_is_no_node_count_refuses_the_plan_in_one_line(
    seed: GitRepo, digits: str
) -> None:
    seed.commit(
        "nodes",
        **{
            "configs/nvidia-master.yaml": NVIDIA.replace(
                "PREFILL_NODES=1", f"PREFILL_NODES={digits}"
            )
        },
    )
    seed.git("tag", "-f", "base")
    seed.commit("entry", **{"perf-changelog.yaml": entry(["dsr1-fp4-b200-dynamo-trt"])})
    result = seed.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("infx: error: dsr1-fp4-b200-dynamo-trt: PREFILL_NODES=")
    assert "is not a node count" in line and len(line) < 300
