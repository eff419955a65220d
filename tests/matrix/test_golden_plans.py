"""infx plans what InferenceX's own planner plans, for its golden plans of an entry selecting
every config (default, --trim-conc, all-evals, evals-only). Skipped without ../shared."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

from tests.conftest import SHARED, GitRepo, real_repo

PLANS = SHARED / "plans"
pytestmark = pytest.mark.skipif(not PLANS.is_dir(), reason="../shared/inferencex is not present")
GOLDEN = ["all-keys", "all-keys-trim", "all-keys-all-evals", "all-keys-evals-only"]
BUCKETS = ["evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals"]


@pytest.fixture(scope="module")
def inferencex(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """The real repository layout: history, both master configs, configs/deprecated/, runners."""
    return real_repo(tmp_path_factory.mktemp("ix") / "repo")


def _multiset(rows: list[dict]) -> Counter:
    return Counter(json.dumps(row, sort_keys=True) for row in rows)


def _compare(mine: list[dict], ref: list[dict], where: str) -> list[str]:
    a, b = _multiset(mine), _multiset(ref)
    if a == b:
        return []
    extra, missing = a - b, b - a
    sample = next(iter(extra or missing))
    return [
        f"{where}: {len(mine)} rows vs {len(ref)}; {sum(extra.values())} only in infx, "
        f"{sum(missing.values())} only in the reference, e.g. {sample[:300]}"
    ]


@pytest.mark.parametrize("name", GOLDEN)
def test_plan_equals_the_reference(inferencex: GitRepo, name: str) -> None:
    reference = json.loads(gzip.decompress((PLANS / f"{name}.plan.json.gz").read_bytes()))
    history = (SHARED / "perf-changelog.yaml").read_bytes()
    addition = (PLANS / f"{name}.entry.yaml").read_bytes()
    inferencex.commit(name, **{"perf-changelog.yaml": history + addition})
    flags = ["--trim-conc"] if name.endswith("-trim") else []
    try:
        result = inferencex.infx("sweep", "plan", "--base", "HEAD~1", "--head", "HEAD", *flags)
    finally:
        inferencex.git("reset", "-q", "--hard", "HEAD~1")
    assert result.exit_code == 0, result.output
    mine = json.loads(result.stdout)

    problems = []
    for shape in ("single_node", "multi_node"):
        for bucket in sorted(set(mine[shape]) | set(reference[shape])):
            problems += _compare(
                mine[shape].get(bucket, []),
                reference[shape].get(bucket, []),
                f"{shape}.{bucket}",
            )
    for bucket in BUCKETS:
        problems += _compare(mine[bucket], reference[bucket], bucket)
    assert problems == []
    assert mine["changelog_metadata"] == reference["changelog_metadata"]
    # Field order and row order too, so the workflows see the very same matrix.
    assert json.dumps(mine) == json.dumps(reference)
