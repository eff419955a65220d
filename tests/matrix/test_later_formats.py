"""InferenceX with its files under `inferencex-e2e/` (format e2e, `infx.formats.E2E`), on a
real repository in a temp dir: a fixed-seq-len scenario's `require-power`, a search space's
`srt-recipe` / `eval-srt-recipe` (node counts from the recipe's roles, fingerprints that hash
the recipe variant), `clusters:` in runners.yaml, and a changelog that moved into
`inferencex-e2e/`. Keys whose meaning infx does not know are refused in one line naming them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from infx.changelog.parse import parse_region
from infx.formats import FORMATS
from infx.matrix.load import parse_masters
from infx.matrix.validate import validate_configs
from tests.conftest import LINK, GitRepo, entry, make_repo

E2E = "inferencex-e2e"
RECIPE = f"{E2E}/benchmarks/multi_node/srt-slurm-recipes/trtllm/gb300/dsr1.yaml"

AMD = """\
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
      require-power: true
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [4] }
"""

NVIDIA = """\
dsr1-fp4-gb300-dynamo-trt:
  image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1
  model: deepseek-r1-fp4
  model-prefix: dsr1
  runner: cluster:gb300-nv
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
        srt-recipe: trtllm/gb300/dsr1.yaml:override_wide
        eval-srt-recipe: trtllm/gb300/dsr1.yaml:base
        prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
        decode: { num-worker: 3, tp: 8, ep: 8, dp-attn: false }
"""

DSR1_RECIPE = """\
schema: 2
base:
  name: dsr1-base
  roles:
    prefill: { nodes: 1 }
    decode: { nodes: 6 }
  frontend: { dedicated_node: true }
  backend: { kv_cache_fraction: 0.8 }
  benchmark: { concurrencies: [16, 64] }
override_wide:
  name: dsr1-wide
  roles:
    decode: { nodes: 8 }
"""

RUNNERS = """\
labels:
  cluster:mi355x-amds: [mi355x-amds_00, mi355x-amds_01]
  mi355x: [mi355x-amds_00]
  cluster:gb300-nv: [gb300-nv_00]
clusters:
  mi355x-amds: { gpus-per-node: 8, available-cpu-dram-mib: 3_095_781, partition: compute }
  gb300-nv: { gpus-per-node: 4, available-cpu-dram-mib: 860_160 }
"""

SETTINGS = f"""\
repository = "acme/bench"
changelog = "{E2E}/perf-changelog.yaml"
master-configs = ["{E2E}/configs/*-master.yaml"]
runners = "{E2E}/configs/runners.yaml"
"""


@pytest.fixture
def e2e(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    for name in ("GITHUB_REPOSITORY", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    repo = GitRepo(tmp_path / "repo")
    make_repo(repo.path, history="", master="")
    repo.git("rm", "-q", "perf-changelog.yaml", "configs/amd-master.yaml")
    repo.commit(
        "inferencex-e2e",
        **{
            "infx.toml": SETTINGS,
            f"{E2E}/perf-changelog.yaml": "",
            f"{E2E}/configs/amd-master.yaml": AMD,
            f"{E2E}/configs/nvidia-master.yaml": NVIDIA,
            f"{E2E}/configs/runners.yaml": RUNNERS,
            RECIPE: DSR1_RECIPE,
        },
    )
    repo.git("tag", "-f", "base")
    return repo


def _plan(repo: GitRepo, *keys: str) -> tuple[dict[str, Any], str]:
    repo.commit("entry", **{f"{E2E}/perf-changelog.yaml": entry(list(keys))})
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def _refused(repo: GitRepo, *args: str) -> str:
    result = repo.infx(*args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return result.output


def test_require_power_marks_the_throughput_jobs_of_its_scenario(e2e: GitRepo) -> None:
    plan, stderr = _plan(e2e, "llama-fp8-mi355x-vllm")
    assert "InferenceX format e2e" in stderr
    power = plan["single_node"]["8k1k"]
    assert [r["conc"] for r in power] == [4, 8, 16, 32, 64]
    assert all(r["require-power"] is True for r in power)
    keys = list(power[0])
    assert keys[keys.index("osl") + 1] == "require-power"
    # The other scenario of the config does not measure power, nor do the evals.
    assert [r["require-power"] for r in plan["single_node"]["1k1k"]] == [False]
    assert [r["require-power"] for r in plan["evals"]] == [False, False]


def test_require_power_is_for_8k1k_only(e2e: GitRepo) -> None:
    e2e.write(
        f"{E2E}/configs/amd-master.yaml",
        AMD.replace("osl: 1024\n      require", "osl: 2048\n      require"),
    )
    out = _refused(e2e, "sweep", "validate")
    assert "llama-fp8-mi355x-vllm" in out and "require-power is for isl 8192 / osl 1024" in out
    e2e.commit("8k2k", **{f"{E2E}/perf-changelog.yaml": entry(["llama-fp8-mi355x-vllm"])})
    out = _refused(e2e, "sweep", "plan", "--base", "base", "--head", "HEAD")
    assert f"{E2E}/configs/amd-master.yaml:13: error: llama-fp8-mi355x-vllm: " in out
    assert "require-power is for isl 8192 / osl 1024" in out


def test_srt_recipe_counts_nodes_and_fingerprints_the_variant(e2e: GitRepo) -> None:
    plan, _ = _plan(e2e, "dsr1-fp4-gb300-dynamo-trt")
    (row,) = plan["multi_node"]["8k1k"]
    assert row["srt-recipe"] == "trtllm/gb300/dsr1.yaml:override_wide"
    assert row["eval-srt-recipe"] == "trtllm/gb300/dsr1.yaml:base"
    # The variant's roles (1 prefill + 8 decode) and the frontend's own node; the topology
    # alone (4 + 24 GPUs on nodes of 4 GPUs) would have said 7.
    assert row["node-count"] == 10
    # The digest of the row without its point fields beside the variant without its name
    # and its concurrencies, computed here from the YAML above.
    # (eval-only, eval-all-concs and require-power are printed defaults, not hashed.)
    left_out = ("conc", "exp-name", "recipe-fingerprint", "eval-only", "eval-all-concs")
    identity = {k: v for k, v in row.items() if k not in (*left_out, "require-power")}
    variant = {
        "schema": 2,
        "roles": {"prefill": {"nodes": 1}, "decode": {"nodes": 8}},
        "frontend": {"dedicated_node": True},
        "backend": {"kv_cache_fraction": 0.8},
        "benchmark": {},
    }
    text = json.dumps({"row": identity, "recipe": [variant]}, sort_keys=True, separators=(",", ":"))
    assert row["recipe-fingerprint"] == hashlib.sha256(text.encode()).hexdigest()

    # Renaming the job or changing its concurrencies is the same recipe; tuning it is not.
    e2e.commit(
        "rename", **{RECIPE: DSR1_RECIPE.replace("dsr1-wide", "wide2").replace("[16, 64]", "[8]")}
    )
    renamed, _ = _plan(e2e, "dsr1-fp4-gb300-dynamo-trt")
    assert renamed["multi_node"]["8k1k"][0]["recipe-fingerprint"] == row["recipe-fingerprint"]
    e2e.commit("tune", **{RECIPE: DSR1_RECIPE.replace("0.8", "0.9")})
    tuned, _ = _plan(e2e, "dsr1-fp4-gb300-dynamo-trt")
    (other,) = tuned["multi_node"]["8k1k"]
    assert {**other, "recipe-fingerprint": ""} == {**row, "recipe-fingerprint": ""}
    assert other["recipe-fingerprint"] != row["recipe-fingerprint"]


def test_a_recipe_infx_cannot_resolve_stops_the_plan(e2e: GitRepo) -> None:
    e2e.write(f"{E2E}/configs/nvidia-master.yaml", NVIDIA.replace("override_wide", "zip_0"))
    e2e.commit("zip group")
    e2e.git("tag", "-f", "base")
    e2e.commit("entry", **{f"{E2E}/perf-changelog.yaml": entry(["dsr1-fp4-gb300-dynamo-trt"])})
    out = _refused(e2e, "sweep", "plan", "--base", "base", "--head", "HEAD")
    assert "srt-recipe trtllm/gb300/dsr1.yaml:zip_0: cannot fingerprint it" in out
    assert "variant 'zip_0' is not base or one of its overrides" in out


def test_a_recipe_in_a_worker_setting_is_refused_beside_clusters(e2e: GitRepo) -> None:
    old = NVIDIA.replace(
        "prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }",
        'prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true, additional-settings: ["CONFIG_FILE=x.yaml"] }',
    )
    e2e.write(f"{E2E}/configs/nvidia-master.yaml", old)
    out = _refused(e2e, "sweep", "validate")
    assert "no known InferenceX format accepts this repository" in out
    assert "a recipe named in a worker's additional-settings, which e2e refuses" in out
    assert "which pr3058 refuses" in out
    # Pinned to e2e, the schema names the setting at its line.
    e2e.write("infx.toml", SETTINGS + 'format = "e2e"\n')
    out = _refused(e2e, "sweep", "validate")
    assert "recipe selection belongs in the search space's srt-recipe" in out


def test_clusters_hold_the_node_facts(e2e: GitRepo) -> None:
    # Without a recipe the node count is the topology over the cluster's gpus-per-node.
    bare = "\n".join(line for line in NVIDIA.splitlines() if "srt-recipe" not in line) + "\n"
    e2e.commit("no recipe", **{f"{E2E}/configs/nvidia-master.yaml": bare})
    e2e.git("tag", "-f", "base")
    plan, _ = _plan(e2e, "dsr1-fp4-gb300-dynamo-trt")
    assert plan["multi_node"]["8k1k"][0]["node-count"] == 1 + 6

    e2e.write(f"{E2E}/configs/runners.yaml", RUNNERS + "  b200-nscale: { gpus-per-node: 8 }\n")
    out = _refused(e2e, "sweep", "validate")
    assert "clusters.b200-nscale: no label cluster:b200-nscale lists its runners" in out
    stray = RUNNERS.replace("mi355x: [mi355x-amds_00]", "mi355x: [mi355x-amds_09]")
    e2e.write(f"{E2E}/configs/runners.yaml", stray)
    out = _refused(e2e, "sweep", "validate")
    assert "runner 'mi355x-amds_09' must be in exactly one cluster label (none)" in out


@pytest.mark.parametrize("fmt", ["pr2707", "pr3058"])
def test_older_formats_refuse_the_later_keys_in_one_line(e2e: GitRepo, fmt: str) -> None:
    e2e.write("infx.toml", SETTINGS + f'format = "{fmt}"\n')
    out = _refused(e2e, "sweep", "validate")
    assert f"{E2E}/configs/runners.yaml:5: error: runners: clusters: not a section of" in out
    lines = [line for line in out.splitlines() if "unknown key(s)" in line]
    assert any("require-power" in line for line in lines)
    assert any("srt-recipe" in line for line in lines)


def test_a_key_infx_does_not_know_is_refused_in_one_line() -> None:
    _, problems = parse_region(
        b'- config-keys:\n    - llama\n  description:\n    - "x"\n  require-power: true\n'
        b"  pr-link: XXX\n"
    )
    assert [(v.line, v.rule) for v in problems] == [(5, "schema")]
    assert "unknown key(s) require-power" in problems[0].text()
    # `attn-dp-size` is in later InferenceX; what it does to a row is not known here.
    plain = AMD.replace("      require-power: true\n", "")
    config = plain.replace(
        "{ tp: 8, conc-list: [4] }", "{ tp: 8, attn-dp-size: 2, conc-list: [4] }"
    )
    for fmt in FORMATS:
        masters = parse_masters({"configs/amd-master.yaml": config.encode()})
        (problem,) = validate_configs(masters, None, fmt)
        assert problem.line == 18 and "unknown key(s) attn-dp-size" in problem.text()


@pytest.mark.parametrize("key", ["srt-recipe", "eval-srt-recipe"])
def test_a_recipe_at_the_config_top_is_named_in_every_format(key: str) -> None:
    plain = AMD.replace("      require-power: true\n", "")
    config = plain.replace("  multinode: false\n", f"  multinode: false\n  {key}: x.yaml\n")
    for fmt in FORMATS:
        masters = parse_masters({"configs/amd-master.yaml": config.encode()})
        (problem,) = validate_configs(masters, None, fmt)
        assert problem.line == 9 and f"unknown key(s) {key}" in problem.text()


ROOT_RUNNERS = """\
labels:
  cluster:mi355x-amds: [mi355x-amds_00]
hardware:
  cluster:mi355x-amds: { available-cpu-dram-mib: 3_095_781, gpus-per-node: 8 }
"""


def test_a_changelog_moved_into_inferencex_e2e_is_followed(tmp_path: Path) -> None:
    """The base holds perf-changelog.yaml at the root, the head under inferencex-e2e/: one
    changelog, so the gate sees one appended entry and the plan one config."""
    history = entry(["llama-fp8-mi355x-vllm"], f"{LINK}1")
    plain = AMD.replace("      require-power: true\n", "")
    repo = make_repo(tmp_path / "repo", history=history, master=plain)
    repo.commit(
        "runners",
        **{"configs/runners.yaml": ROOT_RUNNERS, "infx.toml": 'repository = "acme/bench"\n'},
    )
    repo.git("tag", "-f", "base")
    (repo.path / E2E).mkdir()
    repo.git("mv", "perf-changelog.yaml", f"{E2E}/perf-changelog.yaml")
    repo.git("mv", "configs", f"{E2E}/configs")
    settings = SETTINGS.replace(f"{E2E}/configs/runners.yaml", f"{E2E}/configs/runners.yaml")
    appended = history + "\n" + entry(["llama-fp8-mi355x-vllm"], f"{LINK}2", "After the move")
    repo.commit("move", **{"infx.toml": settings, f"{E2E}/perf-changelog.yaml": appended})

    gate = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD")
    assert gate.exit_code == 0, gate.output
    assert gate.output == f"{E2E}/perf-changelog.yaml: ok (1 appended entry)\n"
    repo.git("reset", "-q", "--soft", "HEAD~1")
    # The same, uncommitted (the pre-commit hook's view).
    worktree = repo.infx("changelog", "check", "--base", "base")
    assert worktree.exit_code == 0, worktree.output
    assert worktree.output == gate.output
    repo.commit("move", **{"infx.toml": settings})
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert [e["description"] for e in plan["changelog_metadata"]["entries"]] == [["After the move"]]
    assert len(plan["single_node"]["8k1k"]) == 5

    # Moved and nothing appended: nothing to gate, nothing to plan.
    repo.git("reset", "-q", "--hard", "HEAD~1")
    (repo.path / E2E).mkdir()
    repo.git("mv", "perf-changelog.yaml", f"{E2E}/perf-changelog.yaml")
    repo.git("mv", "configs", f"{E2E}/configs")
    repo.commit("move only", **{"infx.toml": settings})
    gate = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD")
    assert gate.exit_code == 0, gate.output
    assert "problem" not in gate.output
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["changelog_metadata"]["entries"] == []
