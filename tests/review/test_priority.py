"""CI priority: the score of a job by the policy, read at the sweep's base; the runner
labels a chunk's jobs get; InferenceX's own seed-era policy file read as it stands."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from infx.errors import ConfigError
from infx.matrix.rows import empty_plan, row_id
from infx.review.priority import (
    Context,
    Scored,
    labels_template,
    parse_policy,
    prioritize,
    score,
)
from tests.conftest import GitRepo, shared_folder
from tests.results.formats import fixed_row, multinode_row

SEED = shared_folder(os.environ) / "inferencex-seedera"
POLICY = """\
version: 1
base-score: 1.0
runner-labels: true
adjustments:
  event: {push: 2.0}
  additional-node: 0.5
  multi-node: 1.25
  agentic: 1.0
  precision: {fp4: 0.75}
  spec-decoding: {mtp: 0.75}
  framework-prefix: {sglang: 0.5, vllm: 0.25}
  model-prefix: {llama70b: 0.125}
labels:
  skip-queue: {name: skip_queue}
  checklist-complete: {names: [ci-checklist-complete], adjustment: 0.25}
  patchwork: {names: [ci-patchwork], score: 0.0, waived-by: [ci-patchwork-waived]}
"""


def policy(text: str = POLICY):
    return parse_policy(yaml.safe_load(text), "ci-priority.yaml")


def test_a_score_adds_up_the_policy() -> None:
    row = fixed_row(precision="fp4")  # vllm, llama70b, single node
    assert score(row, 1, policy(), Context("push")) == Decimal("4.125")  # 1+2+.75+.25+.125
    assert score(row, 1, policy(), Context("pull_request")) == Decimal("2.125")


def test_multi_node_rows_and_extra_nodes_score_more() -> None:
    row = multinode_row()  # sglang, fp4, dsr1
    assert score(row, 3, policy(), Context("pull_request")) == Decimal("4.5")  # 1+1+1.25+.75+.5


def test_framework_prefixes_match_whole_words_in_policy_order() -> None:
    assert score(fixed_row(framework="sglang-disagg"), 1, policy(), Context("x")) == Decimal(
        "1.625"
    )
    assert score(fixed_row(framework="sglangx"), 1, policy(), Context("x")) == Decimal("1.125")


def test_patchwork_overrides_unless_waived_and_checklists_add() -> None:
    row = fixed_row()
    patched = Context("pull_request", frozenset({"ci-patchwork", "ci-checklist-complete"}))
    assert score(row, 1, policy(), patched) == Decimal("0.000")
    waived = Context("pull_request", patched.labels | {"ci-patchwork-waived"})
    assert score(row, 1, policy(), waived) == Decimal("1.625")  # 1+.25+.125+.25


def test_scores_round_half_up_to_a_thousandth() -> None:
    text = POLICY.replace("base-score: 1.0", "base-score: 0.0005").replace(
        "llama70b: 0.125", "x: 0"
    )
    assert score(fixed_row(), 1, policy(text), Context("x")).to_eng_string() == "0.251"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("version: 1", "version: 2"), "version"),
        (("agentic: 1.0", "agentic: .nan"), "not a finite number"),
        (("agentic: 1.0", "agentc: 1.0"), "unknown key"),
        (("multi-node: 1.25", "multi-node: yes"), "multi-node"),
    ],
)
def test_a_bad_policy_is_refused_naming_what(change: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        policy(POLICY.replace(*change))


def test_tokens_differ_by_run_and_row_and_labels_carry_the_attempt_slot() -> None:
    rows = [(fixed_row(conc=4), 1), (fixed_row(conc=8), 2)]
    ask = Context("pull_request", frozenset({"skip_queue"}), pr=17)
    first, again = prioritize(rows, policy(), ask, 1), prioritize(rows, policy(), ask, 2)
    tokens = {s.token for s in first.rows.values()}
    assert len(tokens) == 2 and not tokens & {s.token for s in again.rows.values()}
    scored = first.rows[row_id(fixed_row(conc=8))]
    filled = json.loads(labels_template("mi355x", scored, first.skip_queue_pr).replace("{0}", "3"))
    assert filled == ["mi355x", "nodes:2", f"ci-job-{scored.shown}-{scored.token}",
                      "ci-attempt-3", "ci-skip-queue-pr-17"]  # fmt: skip


def test_a_label_that_could_break_the_template_is_refused() -> None:
    with pytest.raises(ConfigError, match="cannot be scheduled"):
        labels_template('x"],"evil', Scored(Decimal("1.000"), 1, "0" * 16), None)


def test_inferencex_seed_era_policy_scores_its_own_rows() -> None:
    """InferenceX's configs/ci-priority.yaml and a row its planner wrote (entry 877)."""
    if not SEED.is_dir():
        pytest.skip(f"{SEED} is not present")
    real = parse_policy(yaml.safe_load((SEED / "configs/ci-priority.yaml").read_text()), "seed")
    plan = json.loads((SEED / "plans/e877.plan.json").read_text())
    row = plan["single_node"]["agentic"][0]  # dsv41flash fp4 vllm mtp agentic on MI355X
    assert not real.runner_labels  # InferenceX gates its labels elsewhere
    # 1 + push 2 + agentic 1 + fp4 .75 + mtp .75 + vllm .5 (dsv41flash has no entry)
    assert score(row, 1, real, Context("push")) == Decimal("6.000")


def plan_repo(repo: GitRepo, base_policy: str | None, head_policy: str) -> tuple[str, Path]:
    files = {"configs__ci-priority.yaml": base_policy} if base_policy else {}
    base = repo.commit("policy", **files)
    repo.commit("the PR raises its own jobs", **{"configs__ci-priority.yaml": head_policy})
    plan = empty_plan()
    plan["single_node"]["1k1k"] = [fixed_row(conc=4), fixed_row(conc=8)]
    path = repo.path / "sweep-plan" / "sweep.json"
    repo.write("sweep-plan/sweep.json", json.dumps(plan))
    return base, path


def test_the_policy_is_read_at_the_base_not_the_head(repo: GitRepo) -> None:
    raised = POLICY.replace("base-score: 1.0", "base-score: 90.0")
    base, plan = plan_repo(repo, POLICY, raised)
    done = repo.infx("sweep", "priority", str(plan), "--at", base, "--event", "pull_request")
    assert done.exit_code == 0, done.output
    written = json.loads((plan.parent / "priority.json").read_text())
    assert {r["score"] for r in written["rows"].values()} == {"1.375"}  # not 90-something
    labels = repo.infx("sweep", "priority-labels", str(plan), "--bucket", "single", "--index", "0")
    assert labels.exit_code == 0, labels.output
    assert "single chunk 0: 2 of 2 row(s) with priority labels" in labels.output


def test_no_policy_at_the_base_writes_nothing(repo: GitRepo) -> None:
    base, plan = plan_repo(repo, None, POLICY)
    done = repo.infx("sweep", "priority", str(plan), "--at", base)
    assert done.exit_code == 0 and "no priority policy at the base" in done.output
    assert not (plan.parent / "priority.json").exists()
    labels = repo.infx("sweep", "priority-labels", str(plan), "--bucket", "single", "--index", "0")
    assert "0 of 2 row(s)" in labels.output
