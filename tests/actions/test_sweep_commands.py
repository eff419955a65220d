"""The small commands the workflows call: mode, outputs, row-env."""

from __future__ import annotations

import json

from click.testing import CliRunner

from infx.cli import cli
from tests.actions.harness import pr_payload
from tests.conftest import GitRepo
from tests.results.formats import fixed_row
from tests.step_files import read_step_file


def mode(repo: GitRepo, payload: dict, tmp_path) -> tuple[int, dict, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    out = tmp_path / "out"
    out.write_text("")
    result = repo.infx(
        "sweep",
        "mode",
        env={
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_OUTPUT": str(out),
        },
    )
    written = read_step_file(out)
    if result.exit_code == 0:
        assert written == json.loads(result.stdout)
    return result.exit_code, written, result.output


def test_skip_sweep_in_head_commit_message(repo: GitRepo, tmp_path) -> None:
    sha = repo.commit("tune flags [skip-sweep]")
    payload = pr_payload("synchronize", ["full-sweep-enabled"])
    payload["pull_request"]["head"]["sha"] = sha
    code, outputs, _ = mode(repo, payload, tmp_path)
    assert code == 0 and outputs["run"] == "false" and "[skip-sweep]" in outputs["reason"]
    payload["pull_request"]["head"]["sha"] = repo.commit("tune flags again")
    code, outputs, _ = mode(repo, payload, tmp_path)
    assert (
        code == 0
        and outputs["run"] == "true"
        and outputs["canary"] == "true"
        and outputs["fail-fast"] == "false"
    )


def test_modifiers(repo: GitRepo, tmp_path) -> None:
    code, outputs, _ = mode(
        repo, pr_payload("synchronize", ["sweep-enabled", "agentx-fast", "all-evals"]), tmp_path
    )
    assert code == 0
    assert (
        outputs["trim-conc"],
        outputs["agentx-fast"],
        outputs["all-evals"],
        outputs["reusable"],
    ) == ("true", "true", "true", "false")
    code, outputs, _ = mode(
        repo, pr_payload("synchronize", ["full-sweep-fail-fast", "evals-only"]), tmp_path
    )
    assert code == 0
    assert (
        outputs["fail-fast"],
        outputs["evals-only"],
        outputs["canary"],
        outputs["reusable"],
    ) == ("true", "true", "false", "false")


def test_mode_outside_actions_is_usage_error(repo: GitRepo) -> None:
    result = repo.infx("sweep", "mode")
    assert result.exit_code == 2 and "GITHUB_EVENT_PATH" in result.output


def test_row_env_lines(repo: GitRepo) -> None:
    row = {
        "exp-name": "x_tp8",
        "conc": [1, 2],
        "kv-offload-backend": {"name": "lmcache"},
        "model-prefix": "x",
        "precision": "fp4",
        "framework": "vllm",
        "runner": "cluster:mi355x-amds",
        "scenario-type": "agentic-coding",
    }
    result = repo.infx(
        "sweep", "row-env", env={"ROW": json.dumps(row), "RUNNER_NAME": "mi355x-amds_07"}
    )
    lines = result.stdout.splitlines()
    assert "EXP_NAME=x_tp8" in lines and "CONC=[1,2]" in lines
    assert 'KV_OFFLOAD_BACKEND={"name":"lmcache"}' in lines
    assert "RECIPE_SCRIPT=recipes/x_fp4_mi355x_vllm_agentic.sh" in lines


def test_row_env_refuses_newlines_and_garbage(repo: GitRepo) -> None:
    bad = repo.infx("sweep", "row-env", env={"ROW": json.dumps({"exp-name": "a\nEVIL=1"})})
    assert bad.exit_code == 2 and "newlines" in bad.output
    assert repo.infx("sweep", "row-env", env={"ROW": "nope"}).exit_code == 2


EMPTY_PLAN = {
    "single_node": {"1k1k": [], "agentic": []},
    "multi_node": {"agentic": []},
    "evals": [],
    "agentic_evals": [],
    "multinode_evals": [],
    "multinode_agentic_evals": [],
    "changelog_metadata": {"base_ref": "", "head_ref": "", "entries": []},
}


def test_outputs_flags_empty_buckets(repo: GitRepo, tmp_path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(EMPTY_PLAN))
    result = repo.infx("sweep", "outputs", str(path))
    values = json.loads(result.stdout)
    assert result.exit_code == 0
    assert {v for k, v in values.items() if k.startswith("has-")} == {"false"}
    assert {v for k, v in values.items() if not k.startswith("has-")} == {"[]"}


def test_chunk_refuses_unknown_buckets_and_chunks(repo: GitRepo, tmp_path) -> None:
    # Plan files are checked against the sweep-matrix schema: eval rows as the planner writes them.
    rows = [
        fixed_row(
            conc=16 << i, isl=8192, **{"exp-name": f"x{i}", "run-eval": True, "eval-only": True}
        )
        for i in range(3)
    ]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({**EMPTY_PLAN, "evals": rows}))
    out = tmp_path / "out"
    ok = repo.infx(
        "sweep",
        "chunk",
        str(path),
        "--bucket",
        "evals",
        "--index",
        "0",
        env={"GITHUB_OUTPUT": str(out)},
    )
    assert ok.exit_code == 0 and "3 row(s)" in ok.stdout
    assert read_step_file(out) == {
        "rows": json.dumps(rows, separators=(",", ":")),
        "runs-on": '["","",""]',  # no row pinned to a node: each runs on its label
        "config-keys": '["","",""]',  # no config-keys.json beside the plan: none known
    }
    unknown = repo.infx("sweep", "chunk", str(path), "--bucket", "gpu", "--index", "0")
    assert unknown.exit_code == 2 and "no bucket 'gpu'" in unknown.output
    beyond = repo.infx("sweep", "chunk", str(path), "--bucket", "evals", "--index", "1")
    assert beyond.exit_code == 2 and "has 1 chunk(s); no chunk 1" in beyond.output
    path.write_text("[1, 2]")
    garbage = repo.infx("sweep", "chunk", str(path), "--bucket", "evals", "--index", "0")
    assert garbage.exit_code == 2 and "Traceback" not in garbage.output


def test_renamed_labels_from_settings(repo: GitRepo, tmp_path) -> None:
    repo.write("infx.toml", '[labels]\nsweep-enabled = "quick-sweep"\nall-evals = "evals:all"\n')
    code, outputs, _ = mode(repo, pr_payload("synchronize", ["quick-sweep", "evals:all"]), tmp_path)
    assert code == 0 and outputs["label"] == "sweep-enabled"
    assert (outputs["trim-conc"], outputs["all-evals"]) == ("true", "true")
    # The role's own name no longer counts once the repository renamed it... and still
    # counts where it is not renamed.
    code, outputs, _ = mode(repo, pr_payload("synchronize", ["full-sweep-enabled"]), tmp_path)
    assert code == 0 and outputs["run"] == "true"


def test_plans_nested_beyond_what_json_reads_are_usage_errors(repo: GitRepo, tmp_path) -> None:
    """Python's JSON reader gives up on deep nesting with a RecursionError, not a
    JSONDecodeError: still bad input, said in one line."""
    deep = "[" * 100_000 + "]" * 100_000
    canary = CliRunner().invoke(cli, ["sweep", "canary"], input=deep)
    assert canary.exit_code == 2, canary.output
    assert canary.output.strip() == "infx: error: stdin is not a JSON plan: nested too deeply"
    path = tmp_path / "plan.json"
    path.write_text(deep)
    outputs = repo.infx("sweep", "outputs", str(path))
    assert outputs.exit_code == 2, outputs.output
    assert outputs.output.strip() == f"infx: error: {path} is not JSON: nested too deeply"


def test_plan_names_each_rows_master_config_beside_the_plan(tmp_path) -> None:
    """Two configs measuring one identity (another image): the plan (InferenceX's shape,
    rows naming no config) gets config-keys.json beside it, and each chunk row its key."""
    from tests.actions.test_config_keys import TWIN
    from tests.conftest import MASTER, entry, make_repo

    repo = make_repo(tmp_path / "repo", master=MASTER + "\n" + TWIN)
    repo.commit(
        "Tune both",
        **{"perf-changelog.yaml": repo.read().decode() + "\n" + entry(["llama-fp8-mi355x-vllm*"])},
    )
    plan = tmp_path / "plan" / "sweep.json"
    plan.parent.mkdir()
    planned = repo.infx(
        "sweep", "plan", "--base", "HEAD~1", "--head", "HEAD", "--output", str(plan)
    )
    assert planned.exit_code == 0, planned.output
    assert all(
        "config-key" not in r
        for rs in json.loads(plan.read_text())["single_node"].values()
        for r in rs
    )
    assert (plan.parent / "config-keys.json").is_file()
    out = tmp_path / "out"
    chunked = repo.infx(
        "sweep", "chunk", str(plan), "--bucket", "single", "--index", "0",
        env={"GITHUB_OUTPUT": str(out)},
    )  # fmt: skip
    assert chunked.exit_code == 0, chunked.output
    written = read_step_file(out)
    rows, keys = json.loads(written["rows"]), json.loads(written["config-keys"])
    assert len(rows) == len(keys) == 8
    assert {(r["image"], k) for r, k in zip(rows, keys, strict=True)} == {
        ("vllm/vllm-openai-rocm:v0.11.0", "llama-fp8-mi355x-vllm"),
        ("vllm/vllm-openai-rocm:v0.12.0", "llama-fp8-mi355x-vllm-next"),
    }
    (plan.parent / "config-keys.json").write_text("[]")
    broken = repo.infx("sweep", "chunk", str(plan), "--bucket", "single", "--index", "0")
    assert broken.exit_code == 2 and "config-keys.json" in broken.output
