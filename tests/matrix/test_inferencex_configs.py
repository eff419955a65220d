"""The real InferenceX configs (when ../shared is present) validate and expand as specified."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infx.matrix.expand import expand, hardware_table
from infx.matrix.load import parse_masters
from infx.matrix.validate import runner_label_problems, validate_configs, validate_runners
from infx.schemas import errors
from infx.yamlio import load_fast
from tests.conftest import SHARED, GitRepo, make_repo

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
    found, problems = validate_runners(load_fast(data), "configs/runners.yaml", data)
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
    single: list = []
    multi: list = []
    for key, config in masters.configs.items():
        expansion = expand(key, config, hardware)
        target = multi if expansion.multinode else single
        target.extend(expansion.fixed + expansion.agentic)
    plan = {
        "single_node": {
            "1k1k": [r for r in single if "isl" in r],
            "agentic": [r for r in single if "isl" not in r],
        },
        "multi_node": {
            "8k1k": [r for r in multi if "isl" in r],
            "agentic": [r for r in multi if "isl" not in r],
        },
        "evals": [],
        "agentic_evals": [],
        "multinode_evals": [],
        "multinode_agentic_evals": [],
        "changelog_metadata": {},
    }
    assert errors("sweep-matrix", plan) == []
    assert len(single) + len(multi) > 1000


def test_dram_budget_on_mi355x_cluster(masters, runners) -> None:
    hardware = hardware_table(runners.hardware)
    key = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"
    rows = expand(key, masters.configs[key], hardware).agentic
    assert {r["total-cpu-dram-gb"] for r in rows} == {2399}
    assert rows[0]["exp-name"] == "dsv4_p1x8_d1x8_conc1_kvdram-hicache"


@pytest.fixture
def real_repo(tmp_path: Path) -> GitRepo:
    repo = make_repo(
        tmp_path / "ix", history=(SHARED / "perf-changelog.yaml").read_text(), master=""
    )
    (repo.path / "configs" / "amd-master.yaml").unlink()
    for path in CONFIGS.glob("*.yaml"):
        shutil.copy(path, repo.path / "configs" / path.name)
    repo.commit("real configs")
    repo.git("tag", "-f", "base")
    return repo


def test_plan_for_a_real_style_diff(real_repo: GitRepo) -> None:
    history = (SHARED / "perf-changelog.yaml").read_text()
    new = (
        "\n- config-keys:\n    - dsr1-fp4-mi355x-sglang\n    - kimik3-fp4-mi355x-*\n"
        '  description:\n    - "Bump images"\n  pr-link: XXX\n'
    )
    real_repo.commit(**{"perf-changelog.yaml": history + new})
    result = real_repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0, result.output
    import json

    payload = json.loads(result.stdout)
    assert [r["conc"] for r in payload["single_node"]["8k1k"]] == [4, 8, 16, 32, 64] * 2
    assert {r["exp-name"] for r in payload["single_node"]["agentic"]} >= {
        "kimik3_tp8_conc10_kvdram-vllm-simple_spec-mtp",
        "kimik3_tp8_conc8_kvdram-lmcache_spec-mtp",
    }
    assert [(r["tp"], r["conc"]) for r in payload["evals"]] == [(4, 32), (4, 64), (8, 32), (8, 64)]
