"""The real InferenceX configs (when ../shared is present) validate and expand as specified."""

from __future__ import annotations

from pathlib import Path

import pytest

from infx.matrix.contract import printed
from infx.matrix.expand import expand, fingerprint, hardware_table, is_agentic, is_multinode
from infx.matrix.load import load_yaml, parse_masters
from infx.matrix.validate import runner_label_problems, validate_configs, validate_runners
from infx.schemas import errors
from tests.conftest import SHARED, real_repo

CONFIGS = SHARED / "configs"
pytestmark = pytest.mark.skipif(not CONFIGS.is_dir(), reason="../shared/inferencex is not present")


@pytest.fixture(scope="module")
def masters():
    return parse_masters(
        {f"configs/{p.name}": p.read_bytes() for p in sorted(CONFIGS.glob("*-master.yaml"))}
    )


@pytest.fixture(scope="module")
def runners():
    data = (CONFIGS / "runners.yaml").read_bytes()
    found, problems = validate_runners(load_yaml(data), "configs/runners.yaml", data)
    assert problems == []
    return found


def test_every_real_config_validates(masters) -> None:
    assert validate_configs(masters) == []


def test_three_runner_labels_are_missing(masters, runners) -> None:
    labels = {
        p.message.split("'")[1] for p in runner_label_problems(masters, runners, strict=False)
    }
    assert labels == {"cluster:mi325x-tw", "gb300-nv", "h200-dgxc"}


def test_every_real_config_expands_to_schema_valid_rows(masters, runners) -> None:
    hardware = hardware_table(runners.hardware)
    plan: dict = {"single_node": {}, "multi_node": {}}
    for key, config in masters.items():
        for row in expand(key, config, hardware):
            shape = "multi_node" if is_multinode(row) else "single_node"
            bucket = "agentic" if is_agentic(row) else f"{row['isl']}_{row['osl']}"
            out = printed({**row, "recipe-fingerprint": fingerprint(row)})
            plan[shape].setdefault(bucket, []).append(out)
    plan.update(
        evals=[],
        agentic_evals=[],
        multinode_evals=[],
        multinode_agentic_evals=[],
        changelog_metadata={"base_ref": "a", "head_ref": "b", "entries": []},
    )
    assert errors("sweep-matrix", plan) == []
    assert (
        sum(len(rows) for shape in ("single_node", "multi_node") for rows in plan[shape].values())
        > 1000
    )


def test_dram_budget_on_mi355x_cluster(masters, runners) -> None:
    hardware = hardware_table(runners.hardware)
    key = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"
    rows = [r for r in expand(key, masters.config(key), hardware) if is_agentic(r)]
    assert {r["total-cpu-dram-gb"] for r in rows} == {2399}
    assert rows[0]["exp-name"] == "dsv4_p1x8_d1x8_conc1_kvdram-hicache"


def test_plan_for_a_real_style_diff(tmp_path: Path) -> None:
    real = real_repo(tmp_path / "ix")
    history = (SHARED / "perf-changelog.yaml").read_text()
    new = (
        "\n- config-keys:\n    - dsr1-fp4-mi355x-sglang\n    - kimik3-fp4-mi355x-*\n"
        '  description:\n    - "Bump images"\n  pr-link: XXX\n'
    )
    real.commit(**{"perf-changelog.yaml": history + new})
    result = real.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0, result.output
    import json

    payload = json.loads(result.stdout)
    assert [r["conc"] for r in payload["single_node"]["8k1k"]] == [4, 8, 16, 32, 64] * 2
    assert {r["exp-name"] for r in payload["single_node"]["agentic"]} >= {
        "kimik3_tp8_conc10_kvdram-vllm-simple_spec-mtp",
        "kimik3_tp8_conc8_kvdram-lmcache_spec-mtp",
    }
    assert [(r["tp"], r["conc"]) for r in payload["evals"]] == [(4, 32), (4, 64), (8, 32), (8, 64)]


@pytest.mark.parametrize("name", ["amd-master.yaml", "nvidia-master.yaml"])
def test_configs_read_as_inferencex_reads_them(name: str) -> None:
    """Config by config through the line index, infx gets InferenceX's data (PyYAML's
    safe_load of the whole file), for every real config."""
    import yaml

    data = (CONFIGS / name).read_bytes()
    reference = yaml.safe_load(data)
    indexed = parse_masters({f"configs/{name}": data})
    assert indexed.keys() == list(reference)
    for key in reference:
        assert indexed.config(key) == reference[key], key
    assert dict(parse_masters({f"configs/{name}": data}).items()) == reference
