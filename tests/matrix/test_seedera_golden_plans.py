"""infx plans what InferenceX's own planner of September 2026 (format pr3058) plans, for every
case of the seed-era golden set: each entry planned as the one a pull request appends, with
its --trim-conc, --all-evals and --evals-only variants. The repository is built as
../shared/inferencex-seedera/README.md says (its configs/, an infx.toml naming no format,
the changelog cut before and after the entry), so the format is infx's own choice. Skipped
without the data."""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any

import pytest

from tests.conftest import GitRepo, make_repo, shared_folder

DATA = shared_folder(os.environ) / "inferencex-seedera"
PLANS = DATA / "plans"
pytestmark = pytest.mark.skipif(
    not (PLANS / "index.json").is_file(), reason="../shared/inferencex-seedera is not present"
)
# README "Adopt it in your repository", step 1: no `format` key.
SETTINGS = """\
repository = "SemiAnalysisAI/InferenceX"
main-branch = "main"
changelog = "perf-changelog.yaml"
master-configs = ["configs/*-master.yaml"]
runners = "configs/runners.yaml"
"""
BUCKETS = ["evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals"]


def _cases() -> list[dict[str, Any]]:
    if not (PLANS / "index.json").is_file():
        return []
    cases: list[dict[str, Any]] = json.loads((PLANS / "index.json").read_text())["cases"]
    return cases


def _lines(description: str) -> tuple[int, int]:
    found = re.search(r"lines (\d+)-(\d+)", description)
    assert found, description
    return int(found.group(1)), int(found.group(2))


def _cut(lines: list[bytes], description: str) -> bytes:
    first, last = _lines(description)
    return b"\n".join(lines[first - 1 : last]) + b"\n"


@pytest.fixture(scope="module")
def seedera(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    repo = make_repo(tmp_path_factory.mktemp("seedera") / "repo", history="", master="")
    shutil.rmtree(repo.path / "configs")
    shutil.copytree(DATA / "configs", repo.path / "configs")
    for path in (repo.path / "configs").iterdir():
        path.chmod(0o644)
    repo.commit("seed-era data", **{"infx.toml": SETTINGS})
    repo.git("tag", "-f", "data")
    return repo


def _compare(mine: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    problems = []
    for shape in ("single_node", "multi_node"):
        for bucket in sorted(set(mine[shape]) | set(reference[shape])):
            ours, theirs = mine[shape].get(bucket, []), reference[shape].get(bucket, [])
            if ours != theirs:
                problems.append(f"{shape}.{bucket}: {len(ours)} rows vs {len(theirs)}")
    problems += [f"{b}: differs" for b in BUCKETS if mine[b] != reference[b]]
    return problems


@pytest.mark.parametrize("case", _cases(), ids=lambda case: str(case["case"]))
def test_plan_equals_the_seed_era_reference(seedera: GitRepo, case: dict[str, Any]) -> None:
    lines = (DATA / "perf-changelog.yaml").read_bytes().split(b"\n")
    seedera.git("reset", "-q", "--hard", "data")
    base = seedera.commit("base", **{"perf-changelog.yaml": _cut(lines, case["base"])})
    head_text = _cut(lines, case["head"])
    entry = (PLANS / case["entry_file"]).read_bytes()
    assert head_text.endswith(entry), "the head is the base, an empty line, then the entry"
    head = seedera.commit("head", **{"perf-changelog.yaml": head_text})

    result = seedera.infx("sweep", "plan", "--base", base, "--head", head, *case["flags"])
    assert result.exit_code == 0, result.output
    assert "InferenceX format pr3058" in result.stderr
    mine = json.loads(result.stdout)
    reference = json.loads((PLANS / case["plan_file"]).read_text())
    assert {k: len(v) for k, v in _counts(mine).items()} == case["rows"]
    assert _compare(mine, reference) == []
    # The refs are the commits the reference was recorded on: ours stand in for them.
    reference["changelog_metadata"].update(base_ref=base, head_ref=head)
    assert mine["changelog_metadata"] == reference["changelog_metadata"]
    # Field order and row order too, so the workflows see the very same matrix.
    assert json.dumps(mine) == json.dumps(reference)


def _counts(plan: dict[str, Any]) -> dict[str, list[Any]]:
    found = {
        f"{shape}.{name}": rows
        for shape in ("single_node", "multi_node")
        for name, rows in plan[shape].items()
    }
    found.update({b: plan[b] for b in BUCKETS if plan[b]})
    return found


def test_the_cases_cover_the_index() -> None:
    """Every case of the index is planned above (none skipped by a reading mistake)."""
    cases = _cases()
    assert len(cases) == 23
    assert all((PLANS / c["plan_file"]).is_file() for c in cases)


def test_real_configs_and_entries_pass_the_gate_by_default(seedera: GitRepo) -> None:
    """With default options, `sweep validate` accepts all 97 seed-era configs, and the gate
    accepts the changelog's last 38 entries (840 to 877) appended at once: it names config
    keys this subset of nvidia-master.yaml lacks, and two separator lines holding spaces
    (infx's layout rule, stricter than InferenceX's own gate), nothing of the schema, the
    format or what the entries select."""
    seedera.git("reset", "-q", "--hard", "data")
    result = seedera.infx("sweep", "validate")
    assert result.exit_code == 0, result.output
    assert "97 config(s) valid" in result.stdout
    assert "InferenceX format pr3058" in result.stderr
    lines = (DATA / "perf-changelog.yaml").read_bytes().split(b"\n")
    first = _cases()[0]
    assert first["entry"] == 840
    base = seedera.commit("history", **{"perf-changelog.yaml": _cut(lines, first["base"])})
    seedera.write("perf-changelog.yaml", (DATA / "perf-changelog.yaml").read_bytes())
    gate = seedera.infx("changelog", "check", "--base", base, "--format", "json")
    report = json.loads(gate.stdout)
    assert len(report["entries"]) == 38
    assert {v["rule"] for v in report["violations"]} == {"config-keys", "separator"}
    keys = [v for v in report["violations"] if v["rule"] == "config-keys"]
    assert all("not defined in any master config" in v["message"] for v in keys[:-1])
