"""`infx sweep plan --from-event`: the workflow's plan step, deciding from the Actions event
exactly as `infx sweep mode` does (one label policy), with the canary split included."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from infx.matrix.rows import buckets
from tests.actions.harness import pr_payload
from tests.conftest import GitRepo
from tests.github.fake_api import FakeGitHub


def _plan_from_event(bench: GitRepo, payload: dict, tmp_path, name="pull_request"):
    """One planning step: its own event file and plan file, so no call reads another's."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    event = folder / "event.json"
    event.write_text(json.dumps(payload))
    target = folder / "sweep.json"
    env = {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(event)}
    result = bench.infx("sweep", "plan", "--from-event", "--output", str(target), env=env)
    return result, (json.loads(target.read_text()) if target.exists() else None)


def _merge_commit(bench: GitRepo, entry: str) -> None:
    """A PR's merge commit: HEAD^1 is the base branch tip, as on a pull_request checkout."""
    base = bench.git("rev-parse", "HEAD")
    bench.git("checkout", "-q", "-b", "pr")
    bench.commit("pr", **{"perf-changelog.yaml": entry})
    bench.git("checkout", "-q", "--detach", base)
    bench.git("merge", "-q", "--no-ff", "--no-edit", "pr")


ENTRY = '- config-keys:\n    - "*"\n  description:\n    - "x"\n  pr-link: XXX\n'


def test_plan_from_event_applies_the_labels_and_the_canary(
    bench: GitRepo, tmp_path, api: FakeGitHub
) -> None:
    """(`api`: a pull request's plan reads who set its sweep labels.)"""
    _merge_commit(bench, ENTRY)
    result, planned = _plan_from_event(
        bench, pr_payload("synchronize", ["full-sweep-enabled", "all-evals"]), tmp_path
    )
    assert result.exit_code == 0, result.output
    by_hand = json.loads(
        bench.infx("sweep", "plan", "--base", "HEAD^1", "--head", "HEAD", "--all-evals").stdout
    )
    (canary,) = planned["canary"]
    assert canary["conc"] == 4 and canary["exp-name"] == "llama70b_1k1k"
    rest = planned["remaining"]
    assert len(rest["single_node"]["1k1k"]) == len(by_hand["single_node"]["1k1k"]) - 1
    assert rest["evals"] == by_hand["evals"] and len(rest["evals"]) == 8
    assert (rest["changelog_metadata"]["base_ref"], rest["changelog_metadata"]["head_ref"]) == (
        "HEAD^1",
        "HEAD",
    )


def test_agentx_fast_keeps_every_row(bench: GitRepo, tmp_path, api: FakeGitHub) -> None:
    """AgentX's fast profile changes how agentic jobs run, never which rows run."""
    _merge_commit(bench, ENTRY)
    labels = ["non-canary-full-sweep-enabled"]
    ran, fast = _plan_from_event(
        bench, pr_payload("synchronize", [*labels, "agentx-fast"]), tmp_path
    )
    assert ran.exit_code == 0, ran.output
    ran, plain = _plan_from_event(bench, pr_payload("synchronize", labels), tmp_path)
    assert ran.exit_code == 0, ran.output
    rows = {name: len(found) for name, found in buckets(plain).items()}
    # The bench's single-node, agentic and multi-node configs, each with evals.
    assert all(rows[name] for name in ("single", "agentic", "multi", "evals")), rows
    assert fast == plain


def test_a_push_plans_from_before_to_after(bench: GitRepo, tmp_path) -> None:
    before = bench.git("rev-parse", "HEAD")
    after = bench.commit("entry", **{"perf-changelog.yaml": ENTRY})
    payload = {"before": before, "after": after, "repository": {"full_name": "acme/bench"}}
    result, planned = _plan_from_event(bench, payload, tmp_path, name="push")
    assert result.exit_code == 0, result.output
    metadata = planned["remaining"]["changelog_metadata"]
    assert (metadata["base_ref"], metadata["head_ref"]) == (before, after)
    no_before = {**payload, "before": "0" * 40}
    result, _ = _plan_from_event(bench, no_before, tmp_path, name="push")
    assert result.exit_code == 2 and "no `before` commit" in result.output
