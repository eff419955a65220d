"""`infx sweep plan` on real git diffs: the changelog selects configs, which expand into buckets."""

from __future__ import annotations

import json
from pathlib import Path

from infx.schemas import errors
from tests.conftest import GitRepo
from tests.matrix.conftest import AMD


def entry(*keys: str, extra: str = "") -> str:
    body = "".join(f'    - "{k}"\n' for k in keys)
    return f'- config-keys:\n{body}{extra}  description:\n    - "change"\n  pr-link: XXX\n'


def plan(repo: GitRepo, *flags: str) -> dict:
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD", *flags)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert errors("sweep-matrix", payload) == []
    return payload


def test_single_node_selection_and_evals(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    payload = plan(bench)
    assert [r["conc"] for r in payload["single_node"]["1k1k"]] == [4, 8, 16, 32]
    assert [(r["tp"], r["conc"]) for r in payload["single_node"]["8k1k"]] == [
        (8, 4),
        (8, 8),
        (8, 16),
        (8, 32),
        (8, 64),
        (4, 16),
        (4, 32),
        (4, 64),
    ]
    prints = [r["recipe-fingerprint"] for r in payload["single_node"]["8k1k"]]
    assert len(set(prints[:5])) == 1 and len(set(prints[5:])) == 1 and prints[0] != prints[5]
    # 8k1k, conc >= 16, grouped across tp: distinct {16, 32, 64} -> max 64 and upper median 32
    assert [(r["tp"], r["conc"]) for r in payload["evals"]] == [(8, 32), (8, 64), (4, 32), (4, 64)]
    assert all(r["run-eval"] and r["eval-only"] for r in payload["evals"])
    assert all("recipe-fingerprint" not in r for r in payload["evals"])
    assert payload["multi_node"] == {} and "agentic" not in payload["single_node"]
    assert payload["changelog_metadata"]["entries"][0]["config-keys"] == ["llama-fp8-mi355x-vllm"]


def test_wildcards_and_multi_node(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("*-mi355x-*")})
    payload = plan(bench)
    (row,) = payload["multi_node"]["8k1k"]
    assert row["conc"] == [1, 8, 32]
    (ev,) = payload["multinode_evals"]
    assert ev["eval-conc"] == 32
    assert len(payload["single_node"]["agentic"]) == 4
    # Default plans evaluate one agentic point per (model, runner, framework, precision).
    assert [r["conc"] for r in payload["agentic_evals"]] == [32]


def test_scenario_type_restricts(bench: GitRepo) -> None:
    text = entry("*", extra="  scenario-type:\n    - agentic-coding\n")
    bench.commit(**{"perf-changelog.yaml": text})
    payload = plan(bench)
    assert list(payload["single_node"]) == ["agentic"] and payload["multi_node"] == {}
    assert [r["conc"] for r in payload["single_node"]["agentic"]] == [1, 4, 16, 32]
    assert payload["evals"] == [] and len(payload["agentic_evals"]) == 1


def test_evals_only_entry(bench: GitRepo) -> None:
    text = entry("dsv41flash-fp4-mi355x-vllm-agentic", extra="  evals-only: true\n")
    bench.commit(**{"perf-changelog.yaml": text})
    payload = plan(bench)
    assert payload["single_node"] == {}
    assert [r["conc"] for r in payload["agentic_evals"]] == [32]


def test_all_evals_flag(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    payload = plan(bench, "--all-evals")
    # The label widens evals to every 8k1k point and keeps the throughput rows.
    assert len(payload["evals"]) == 8 and len(payload["single_node"]["1k1k"]) == 4


def test_all_evals_entry_plans_evals_instead_of_throughput(bench: GitRepo) -> None:
    text = entry("*", extra="  all-evals: true\n")
    bench.commit(**{"perf-changelog.yaml": text})
    payload = plan(bench)
    assert payload["single_node"] == {} and payload["multi_node"] == {}
    assert len(payload["evals"]) == 8 and len(payload["agentic_evals"]) == 4
    (multi,) = payload["multinode_evals"]
    assert multi["conc"] == [1, 8, 32] and multi["eval-all-concs"] is True
    assert "eval-conc" not in multi


def test_trim_conc_keeps_lowest(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("*")})
    payload = plan(bench, "--trim-conc")
    assert [r["conc"] for r in payload["single_node"]["1k1k"]] == [4]
    assert [(r["tp"], r["conc"]) for r in payload["single_node"]["8k1k"]] == [(8, 4), (4, 16)]
    assert [r["conc"] for r in payload["multi_node"]["8k1k"]] == [[1]]
    assert [(r["kv-offloading"], r["conc"]) for r in payload["single_node"]["agentic"]] == [
        ("none", 1),
        ("dram", 32),
    ]


def test_append_only_plans_new_points(bench: GitRepo) -> None:
    grown = AMD.replace(
        "{ tp: 8, conc-start: 4, conc-end: 32 }", "{ tp: 8, conc-start: 4, conc-end: 128 }"
    )
    text = entry("llama-fp8-mi355x-vllm", extra="  append-only: true\n")
    bench.commit(**{"perf-changelog.yaml": text, "configs__amd-master.yaml": grown})
    payload = plan(bench)
    assert [r["conc"] for r in payload["single_node"]["1k1k"]] == [64, 128]
    assert "8k1k" not in payload["single_node"] and payload["evals"] == []


def test_append_only_refuses_changed_points(bench: GitRepo) -> None:
    changed = AMD.replace(
        "image: vllm/vllm-openai-rocm:v0.11.0", "image: vllm/vllm-openai-rocm:v0.12.0"
    )
    text = entry("llama-fp8-mi355x-vllm", extra="  append-only: true\n")
    bench.commit(**{"perf-changelog.yaml": text, "configs__amd-master.yaml": changed})
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1 and "append-only may only add points" in result.output


def test_gate_rejection_is_repeated(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vlm")})
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1
    assert "did you mean 'llama-fp8-mi355x-vllm'?" in result.output


def test_unknown_runner_label_warns_or_fails(bench: GitRepo) -> None:
    bench.commit(
        **{
            "configs__amd-master.yaml": AMD.replace("runner: mi355x\n", "runner: mi999x\n"),
            "perf-changelog.yaml": entry("llama-fp8-mi355x-vllm"),
        }
    )
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0
    assert (
        "warning: llama-fp8-mi355x-vllm: runner label 'mi999x' is not in runners.yaml"
        in result.stderr
    )
    strict = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--strict")
    assert strict.exit_code == 1 and "error: llama-fp8-mi355x-vllm" in strict.output


def test_summary_format_and_step_summary(bench: GitRepo, tmp_path) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("dsv41flash-fp4-mi355x-vllm-agentic")})
    target = tmp_path / "summary.md"
    result = bench.infx(
        "sweep",
        "plan",
        "--base",
        "base",
        "--head",
        "HEAD",
        "--format",
        "summary",
        env={"GITHUB_STEP_SUMMARY": str(target)},
    )
    assert result.exit_code == 0
    # 3 kv-none jobs + 1 dram job and 1 agentic eval, each an hour on tp8: 8 GPU-hours apiece.
    line = (
        "| dsv41flash-fp4-mi355x-vllm-agentic | `dsv41flash-fp4-mi355x-vllm-agentic`: change "
        "| cluster:mi355x-amds | `vllm/vllm-openai-rocm:nightly-1` "
        "| tp8 | agentic-coding | 4 | 1 | 1, 4, 16, 32 | 40.0 | assumed |"
    )
    assert line in result.output and line in target.read_text()
    assert "| **total** | | | | | | **4** | **1** | | **40.0** | |" in result.output
    # Five one-hour jobs on two nodes of cluster:mi355x-amds.
    assert "about 40 GPU-hours, about 2.5 h of wall time" in result.output


def test_summary_counts_gpu_hours_of_multi_node_jobs(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("dsr1-fp4-mi355x-sglang-disagg")})
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--format", "summary")
    # One throughput job running 3 concurrencies and one eval at its eval-conc, on 16 GPUs,
    # at 15 minutes a point: (3 + 1) x 0.25 h x 16 GPUs.
    assert "| P 1x tp8 / D 1x tp8 | fixed-seq-len | 1 | 1 | 1, 8, 32 | 16.0 | assumed |" in (
        result.output
    )


def test_no_entries_plans_nothing(bench: GitRepo) -> None:
    """Every bucket of the plan is empty; the same bench with an entry fills each one."""
    from infx.matrix.rows import buckets

    bench.commit("nothing")
    empty = {name: len(rows) for name, rows in buckets(plan(bench)).items()}
    bench.commit(**{"perf-changelog.yaml": entry("*")})
    full = {name: len(rows) for name, rows in buckets(plan(bench)).items()}
    assert set(empty.values()) == {0} and empty.keys() == full.keys()
    assert [name for name in ("single", "agentic", "multi", "evals") if not full[name]] == []


def test_canary_picks_lowest_single_node_row(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("*")})
    plan_text = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD").stdout
    from click.testing import CliRunner

    from infx.cli import cli

    result = CliRunner().invoke(cli, ["sweep", "canary"], input=plan_text)
    out = json.loads(result.stdout)
    (row,) = out["canary"]
    assert (row["exp-name"], row["conc"]) == ("llama70b_1k1k", 4)
    before = json.loads(plan_text)
    assert len(out["remaining"]["single_node"]["1k1k"]) == len(before["single_node"]["1k1k"]) - 1
    assert out["remaining"]["evals"] == before["evals"]


def test_canary_rejects_garbage() -> None:
    from click.testing import CliRunner

    from infx.cli import cli

    result = CliRunner().invoke(cli, ["sweep", "canary"], input="not json")
    assert result.exit_code == 2 and "not a JSON plan" in result.output


def _timings(tmp_path, samples: dict) -> str:
    path = tmp_path / "timings.json"
    path.write_text(json.dumps({"format": "infx-job-timings/1", "jobs": samples}))
    return str(path)


def test_summary_says_which_entry_selected_each_config(bench: GitRepo) -> None:
    bench.commit(
        **{
            "perf-changelog.yaml": entry("llama-*")
            + "\n"
            + entry("dsv41flash-*").replace('"change"', '"Raise | the KV budget"')
        }
    )
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--format", "summary")
    assert "| llama-fp8-mi355x-vllm | `llama-*`: change |" in result.output
    assert "| dsv41flash-fp4-mi355x-vllm-agentic | `dsv41flash-*`: Raise \\| the KV budget |" in (
        result.output
    )


def test_recorded_durations_replace_assumptions(bench: GitRepo, tmp_path) -> None:
    from infx.matrix.cost import job_key

    bench.commit(**{"perf-changelog.yaml": entry("dsr1-fp4-mi355x-sglang-disagg")})
    payload = plan(bench)
    (row,) = payload["multi_node"]["8k1k"]
    # The throughput job took 30 minutes (twice, 90 once): the median, on 16 GPUs.
    timings = _timings(tmp_path, {job_key(row): [[1800, 1], [5400, 2], [1800, 3]]})
    target = tmp_path / "estimate.json"
    result = bench.infx(
        "sweep", "plan", "--base", "base", "--head", "HEAD", "--format", "summary",
        "--durations", timings, "--estimate", str(target),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "| 1 | 1 | 1, 8, 32 | 12.0 | 1 recorded, 1 assumed |" in result.output
    jobs = json.loads(target.read_text())["jobs"]
    assert [(j["eval"], j["gpu-hours"], j["source"]) for j in jobs] == [
        (False, 8.0, "recorded: median of 3"),
        (True, 4.0, "assumed: 15 min per point x 1"),
    ]


def test_a_broken_timings_file_is_one_line(bench: GitRepo, tmp_path) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    bad = tmp_path / "t.json"
    for text in ("{", '{"format": "infx-job-timings/1", "jobs": {"x": [[-5, 1]]}}'):
        bad.write_text(text)
        result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD",
                            "--durations", str(bad))  # fmt: skip
        assert result.exit_code == 2 and "not a job-timings file" in result.stderr
        assert "Traceback" not in result.output


def test_budget_is_read_at_the_base_not_where_the_change_raises_it(
    bench: GitRepo, tmp_path
) -> None:
    """A change cannot raise its own budget: the verdict uses infx.toml at --base."""
    bench.commit("budget", **{"infx.toml": "[budget]\nfull-sweep-enabled = 30\npush = 100\n"})
    bench.git("tag", "-f", "base")
    bench.commit(
        **{
            "perf-changelog.yaml": entry("dsv41flash-fp4-mi355x-vllm-agentic"),
            "infx.toml": "[budget]\nfull-sweep-enabled = 100000\n",
        }
    )
    target = tmp_path / "estimate.json"
    args = ("sweep", "plan", "--base", "base", "--head", "HEAD", "--format", "summary")
    over = bench.infx(*args, "--budget", "full-sweep-enabled", "--estimate", str(target))
    assert over.exit_code == 0, over.output
    assert "**Budget**: over budget: 40.0 of 30.0 GPU-hours for label full-sweep-enabled." in (
        over.output
    )
    document = json.loads(target.read_text())
    assert document["over-budget"] is True and document["budget"] == 30
    within = bench.infx(*args, "--budget", "push")
    assert "within budget: 40.0 of 100.0 GPU-hours for a push to main" in within.output


def test_a_budget_setting_that_is_not_a_number_is_refused(bench: GitRepo) -> None:
    for text in ("[budget]\npush = nan\n", "[budget]\npush = -1\n", '[budget]\npush = "10"\n',
                 "[budget]\nsweep = 10\n"):  # fmt: skip
        bench.commit("budget", **{"infx.toml": text})
        bench.git("tag", "-f", "base")
        bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
        result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--budget", "push")
        assert result.exit_code == 2 and "infx.toml" in result.stderr, (text, result.output)
        assert "budget" in result.stderr and "Traceback" not in result.output


def test_the_approval_table_counts_whole_nodes_and_says_what_the_servers_use(
    bench: GitRepo, tmp_path
) -> None:
    """The llama config's tp4 points use 4 GPUs of an 8-GPU mi355x node and hold all 8: the
    table, the total, estimate.json and the budget count what is held, beside what is used."""
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    target = tmp_path / "estimate.json"
    result = bench.infx(
        "sweep", "plan", "--base", "base", "--head", "HEAD", "--format", "summary",
        "--estimate", str(target), "--budget", "full-sweep-enabled",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        "| tp4 | fixed-seq-len | 3 | 2 | 16, 32, 64 | 10.0 (5.0 used) | assumed |" in result.output
    )
    doc = json.loads(target.read_text())
    assert doc["gpu-hours"] > doc["gpu-hours-used"]
    tp4 = [job for job in doc["jobs"] if job["gpus"] == 4]
    assert tp4 and {(job["gpus-held"], job["nodes"]) for job in tp4} == {(8, 1)}
    assert f"about {doc['gpu-hours']:.0f} GPU-hours held as whole nodes" in result.output


def test_a_budget_category_nobody_has_is_refused(bench: GitRepo) -> None:
    """`--budget nonsense` used to plan as if no budget applied: a typo in the workflow
    would lift the limit silently."""
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--budget", "nonsense")
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "'nonsense' is no budget category" in result.stderr
    assert "push" in result.stderr and "full-sweep-enabled" in result.stderr
    for known in ("push", "full-sweep-enabled"):
        fine = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD", "--budget", known)
        assert fine.exit_code == 0, fine.output


def test_a_plan_file_is_readable_as_the_umask_says(bench: GitRepo, tmp_path) -> None:
    """Plans, receipts and results were written 0600 whatever the umask: a later job run
    as another user could not read them."""
    import os

    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    for umask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        target = tmp_path / f"plan-{umask:o}.json"
        old = os.umask(umask)
        try:
            result = bench.infx(
                "sweep", "plan", "--base", "base", "--head", "HEAD", "--output", str(target)
            )
        finally:
            os.umask(old)
        assert result.exit_code == 0, result.output
        assert target.stat().st_mode & 0o777 == mode
    target.chmod(0o640)  # a file that exists keeps its mode
    assert (
        bench.infx(
            "sweep", "plan", "--base", "base", "--head", "HEAD", "--output", str(target)
        ).exit_code
        == 0
    )
    assert target.stat().st_mode & 0o777 == 0o640


def test_text_is_the_summary_and_summary_still_works(bench: GitRepo) -> None:
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    args = ("sweep", "plan", "--base", "base", "--head", "HEAD", "--format")
    text, summary = bench.infx(*args, "text"), bench.infx(*args, "summary")
    assert text.exit_code == summary.exit_code == 0, text.output
    assert text.stdout == summary.stdout and text.stdout.startswith("|")


def test_text_is_the_step_summarys_markdown_and_says_so(bench: GitRepo, tmp_path) -> None:
    """`--format text` is the Markdown table the step summary gets (escapes and all), not
    text laid out for a terminal: its help and the sweeps page say so."""
    bench.commit(**{"perf-changelog.yaml": entry("llama-fp8-mi355x-vllm")})
    target = tmp_path / "summary.md"
    args = ("sweep", "plan", "--base", "base", "--head", "HEAD", "--format", "text")
    result = bench.infx(*args, env={"GITHUB_STEP_SUMMARY": str(target)})
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() in target.read_text()
    shown = " ".join(bench.infx("sweep", "plan", "--help").stdout.split())
    assert "text: the summary table in GitHub Markdown, as the step summary gets it" in shown
    page = " ".join((Path(__file__).parents[2] / "docs" / "sweeps.md").read_text().split())
    assert "`--format text` prints that table in place of the JSON" in page
    assert "in GitHub Markdown: the bytes a step summary or a comment renders" in page


def test_unknown_keys_are_listed_as_the_gate_lists_them(bench: GitRepo) -> None:
    # 25 unknown keys: the first 20 named, the rest counted in one line, as the gate does
    # (a plan of a long history printed one line per key, 800 lines for InferenceX's).
    keys = [f"gone-fp8-mi355x-vllm-{n}" for n in range(25)]
    bench.commit(**{"perf-changelog.yaml": entry(*keys)})
    result = bench.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1
    named = [line for line in result.output.splitlines() if "is not defined" in line]
    assert len(named) == 20, result.output
    assert "and 5 more config-keys problem(s) like the ones above" in result.output
