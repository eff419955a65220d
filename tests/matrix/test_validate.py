"""Config validation names the config key and the line; rules beyond the schema too."""

from __future__ import annotations

import pytest

from tests.conftest import GitRepo
from tests.matrix.conftest import AMD


def validate(repo: GitRepo, master: str, *flags: str):
    repo.write("configs/amd-master.yaml", master)
    return repo.infx("sweep", "validate", *flags)


def test_own_fixture_is_valid(bench: GitRepo) -> None:
    result = bench.infx("sweep", "validate")
    assert result.exit_code == 0 and "3 config(s) valid" in result.output


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "{ tp: 8, conc-start: 4, conc-end: 32 }",
            "{ tp: 8, conc-start: 4, conc-end: 32, foo: 1 }",
            14,
            "unknown key(s) foo",
        ),
        (
            "{ tp: 8, conc-start: 4, conc-end: 32 }",
            "{ tp: 8, conc-start: 64, conc-end: 32 }",
            14,
            "conc-start 64 is greater than conc-end 32",
        ),
        (
            "{ tp: 8, conc-start: 4, conc-end: 32 }",
            "{ tp: 8, conc-start: 4, conc-end: 32, conc-list: [1] }",
            14,
            "concurrency is either a non-empty conc-list or conc-start with conc-end",
        ),
        (
            "{ tp: 8, conc-start: 4, conc-end: 32 }",
            "{ tp: 6, dcp-size: 4, conc-list: [1] }",
            14,
            "tp 6 is not divisible by dcp-size 4",
        ),
        (
            "{ tp: 8, conc-start: 4, conc-end: 32 }",
            "{ tp: 8, spec-decoding: eagle, conc-list: [1] }",
            14,
            "'eagle' is not one of ['mtp', 'draft_model', 'none']",
        ),
        (
            "{ tp: 8, conc-start: 4, conc-end: 32 }",
            "{ tp: 8, conc-start: 0, conc-end: 32 }",
            14,
            "0 is less than the minimum of 1",
        ),
        (
            "kv-offloading: none, conc-list: [1, 4, 16]",
            "kv-offloading: disk, conc-list: [1, 4, 16]",
            33,
            "'disk' is not one of ['none', 'dram']",
        ),
        (
            "kv-offloading: dram, kv-offload-backend: { name: vllm-simple },",
            "kv-offloading: dram,",
            34,
            "'kv-offload-backend' is a required property",
        ),
        (
            "search-space:\n      - { tp: 8, conc-start: 4, conc-end: 32 }\n",
            "search-space: []\n",
            13,
            "[] should be non-empty",
        ),
    ],
)
def test_bad_config_names_key_and_line(
    bench: GitRepo, old: str, new: str, line: int, message: str
) -> None:
    assert old in AMD
    result = validate(bench, AMD.replace(old, new, 1))
    assert result.exit_code == 1, result.output
    assert f"configs/amd-master.yaml:{line}: error:" in result.output
    assert message in result.output


def test_dram_needs_utilization(bench: GitRepo) -> None:
    result = validate(
        bench,
        AMD.replace("    - dram-utilization: 0.8\n      search-space:", "    - search-space:"),
    )
    assert result.exit_code == 1
    assert (
        "dsv41flash-fp4-mi355x-vllm-agentic" in result.output
        and "dram-utilization" in result.output
    )


def test_disagg_needs_multinode(bench: GitRepo) -> None:
    master = AMD.replace(
        "  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024",
        "  multinode: false\n  disagg: true\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024",
        1,
    )
    result = validate(bench, master)
    assert (
        result.exit_code == 1
        and "disagg: true and kv-p2p-transfer need multinode: true" in result.output
    )


def test_duplicate_key_across_files(bench: GitRepo) -> None:
    bench.write("configs/nvidia-master.yaml", AMD.split("\n\n")[0] + "\n")
    result = bench.infx("sweep", "validate")
    assert (
        result.exit_code == 1 and "is already defined in configs/amd-master.yaml" in result.output
    )


def test_wildcard_key_is_error(bench: GitRepo) -> None:
    result = validate(bench, AMD.replace("llama-fp8-mi355x-vllm:", "llama-*:"))
    assert result.exit_code == 1 and "may not contain '*'" in result.output


def test_missing_runner_label_warning_and_strict(bench: GitRepo) -> None:
    master = AMD.replace("runner: mi355x-disagg", "runner: mi355x-nowhere")
    result = validate(bench, master)
    assert result.exit_code == 0 and "warning: dsr1-fp4-mi355x-sglang-disagg" in result.output
    assert validate(bench, master, "--strict").exit_code == 1


def test_yaml_11_integers_in_runners(bench: GitRepo) -> None:
    bench.write(
        "configs/runners.yaml",
        "labels:\n  mi355x: [a]\nhardware:\n  x:\n    available-cpu-dram-mib: 2_063_837\n    gpus-per-node: 8\n",
    )
    result = bench.infx("sweep", "validate")
    assert "available-cpu-dram-mib" not in result.output
