"""From a number in main's history back to the run, its bytes and the person who approved
(issue 25, provenance 7 and 9). A push to main reuses a PR's sweep through run-sweep.yml:
the gate seals the merge, republish checks the members against the source run's receipt,
ingest stores the rows and both receipts. `infx results provenance <config key> <conc>`
then walks from the stored point to the run that measured it, checks every member of its
artifacts (downloaded again) against its receipt, and names who asked, with which
permission, who approved the GPU budget, and the verdict that gated the PR."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.results.table.keys import config_key
from tests.actions.harness import World, push_payload, simulate
from tests.actions.issuer import issuer_run, stored_history
from tests.github.scenario import ISSUER_RUNS, RUN, Green, green_pr, seal
from tests.history.artifacts import zipped_table
from tests.history.tables import curve, table

PULLED = "vllm/vllm-openai-rocm@sha256:" + "ab" * 32


def reused_merge(
    api, tmp_path: Path, before_issuer: Callable[[], None] | None = None, named: int = RUN
) -> tuple[Green, Path, str]:
    """PR #7's run RUN measured real rows, passed its verdict and was approved over budget;
    the issuer sealed it. The merge is pushed, run-sweep.yml runs for it as run 4242 and
    republishes RUN's results; the issuer seals run 4242 and its ingest stores the rows
    (`before_issuer` runs first, and then the ingest's log is not checked). The PR's table
    names run `named` as the one that made it."""
    pr = green_pr(api.state)
    rows = curve(1000)
    (bmk,) = [a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk"]
    api.state.blobs[bmk["id"]] = zipped_table(
        table(named, rows, ref="refs/pull/7/merge", sha=pr.sha1)
    )
    image = rows[0]["recipe"]["image"]
    jobs = [{"job": "results_bmk/bmk_0_0", "image": image, "digest": PULLED}]
    seal(
        api.state,
        RUN,
        json.dumps(pr.manifests[RUN]).encode(),
        api.state.run_checkouts[RUN][1],
        jobs,
    )
    api.state.check_runs[pr.sha1] = [
        {"id": 1, "name": "infx/results", "status": "completed", "conclusion": "success"}
    ]
    api.state.approve(RUN, "lead")
    merged = pr.merge()
    api.state.add_run(4242, head_sha=merged, minute=900, branch="main", event="push",
                      status="in_progress", conclusion=None, artifacts=[])  # fmt: skip
    world = World(pr.runner.path, tmp_path, api.url, api.state.requests)
    run = simulate(world, "run-sweep.yml", "push", push_payload(pr.before, merged))
    assert run.ran("republish"), run.logs
    if before_issuer is not None:
        before_issuer()
    issued = issuer_run(api, world, 4242)
    assert issued.ran("issue") and issued.ran("ingest"), issued.logs
    log = issued.log("ingest")
    assert before_issuer or f"merge receipt of run {RUN} stored for run 4242" in log, log
    key = config_key({k: v for k, v in rows[0]["identity"].items() if k != "conc"})
    return pr, stored_history(world), key


def provenance(api, stored: Path, *args: str) -> tuple[int, str]:
    command = ["results", "provenance", *args, "--history", f"sqlite:///{stored}", "--repo", "acme/bench"]  # fmt: skip
    result = CliRunner().invoke(cli, command, env={"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t"})
    return result.exit_code, result.output


def test_a_reused_row_walks_back_to_the_run_its_bytes_and_who_approved(api, tmp_path) -> None:
    pr, stored, key = reused_merge(api, tmp_path)
    code, output = provenance(api, stored, key, "8", "--verify", "--format", "json")
    assert code == 0, output
    chain = json.loads(output)
    # the row
    assert chain["point"]["key"] == key and chain["point"]["conc"] == 8
    assert chain["run"]["id"] == 4242 and chain["run"]["sha"] == pr.merged
    assert chain["run"]["reused_from"] == RUN
    # the run that measured it
    assert chain["measured_by"]["run"] == RUN and chain["measured_by"]["commit"] == pr.sha1
    # its bytes, checked against the artifacts GitHub serves now
    assert chain["verified"]["problems"] == [] and chain["verified"]["members"] >= 3
    assert chain["bytes"]["manifest"] == pr.manifests[RUN]["digest"]
    assert chain["bytes"]["images"] == [{"image": chain["point"]["data"]["recipe"]["image"],
                                         "digest": PULLED}]  # fmt: skip
    # who approved, and the verdict that gated the PR
    assert chain["approved"]["requested_by"] == "maintainer"
    assert chain["approved"]["permission"] == "write"
    assert chain["approved"]["budget"][0]["user"] == "lead"
    assert chain["verdict"]["conclusion"] == "success" and chain["verdict"]["sha"] == pr.sha1
    assert chain["merge"] == {"commit": pr.merged, "before": pr.before, "pr": 7, "run": 4242}
    assert chain["problems"] == []
    # The same chain as text, by run id.
    code, text = provenance(api, stored, "4242")
    assert code == 0, text
    assert f"measured by: run {RUN} attempt 1 (pull_request) of commit {pr.sha1[:12]}" in text
    assert "approved: /reuse-sweep-run by maintainer (write)" in text
    assert "budget: gpu-budget approved by lead" in text


def test_bytes_that_changed_since_they_were_sealed_break_the_chain(api, tmp_path) -> None:
    _, stored, key = reused_merge(api, tmp_path)
    (bmk,) = [a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk"]
    api.state.blobs[bmk["id"]] = zipped_table(table(RUN, curve(2000)))
    code, output = provenance(api, stored, key, "8", "--verify")
    assert code == 1
    assert "results_bmk/results.json: other bytes than sealed" in output
    assert "Traceback" not in output


def test_a_number_nobody_stored_is_one_line(api, tmp_path) -> None:
    _, stored, key = reused_merge(api, tmp_path)
    code, output = provenance(api, stored, key, "1024")
    assert code == 2 and len(output.strip().splitlines()) == 1


def test_a_receipt_rewritten_with_its_digest_is_caught_by_verify(api, tmp_path) -> None:
    """Issue 31, case 9: someone with write access to the history rewrites the stored run
    receipt and its digest column alike (and the merge receipt's link, so every digest
    recomputed offline agrees). --verify compares it with what the issuer sealed, as GitHub
    serves it."""
    import sqlite3

    from infx.matrix.manifest import canonical, digest

    _, stored, key = reused_merge(api, tmp_path)
    with sqlite3.connect(stored) as conn:
        rows = dict(conn.execute("SELECT kind, data FROM receipts WHERE run_id = 4242"))
        run, merge = json.loads(rows["run"]), json.loads(rows["merge"])
        run["images"] = []
        merge["source"]["receipt"] = digest(run)
        for kind, doc in (("run", run), ("merge", merge)):
            conn.execute("UPDATE receipts SET data = ?, digest = ? WHERE run_id = 4242 AND kind = ?",
                         (canonical(doc).decode(), digest(doc), kind))  # fmt: skip
    code, offline = provenance(api, stored, "4242")
    assert "its merge receipt is not the one its receipt sealed" in offline  # the main receipt
    code, output = provenance(api, stored, key, "8", "--verify")
    assert code == 1
    assert f"the stored run receipt of run {RUN} is not the issuer's" in output


def backfilled(api, tmp_path: Path) -> tuple[int, str, Path]:
    """`infx results backfill` of main's last run into a new history, as the ingest job's
    last step (or an evicted cache's refill) runs it."""
    history = tmp_path / "backfilled.sqlite"
    command = ["results", "backfill", "--runs", "1", "--history", f"sqlite:///{history}", "--repo", "acme/bench"]  # fmt: skip
    result = CliRunner().invoke(cli, command, env={"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t"})
    return result.exit_code, result.output, history


def test_a_backfilled_reused_merge_goes_in_with_the_receipts_that_vouch_for_it(
    api, tmp_path
) -> None:
    """The history rebuilt from main's artifacts (an evicted cache) holds the reused merge
    as the ingest stored it: its rows and the chain of receipts behind them."""
    _, _, key = reused_merge(api, tmp_path)
    code, output, history = backfilled(api, tmp_path)
    assert code == 0 and "stored 1 run(s)" in output, output
    code, chain = provenance(api, history, key, "8")
    assert code == 0, chain
    assert f"measured by: run {RUN} attempt 1 (pull_request)" in chain


def test_a_reused_merge_the_receipts_do_not_vouch_for_stays_out(api, tmp_path) -> None:
    """The ingest's check refuses run 4242: the issuer's receipt of the PR run it
    republished is gone. The backfill the same job runs next must not store the run
    anyway, as rows without the receipts that vouch for them; nor any later backfill."""

    def expire_source_receipt() -> None:
        for artifact in api.state.artifacts[ISSUER_RUNS + RUN]:
            artifact["expired"] = True

    _, stored, _ = reused_merge(api, tmp_path, expire_source_receipt)
    code, output = provenance(api, stored, "4242")
    assert code == 2 and "4242 is not in the history" in output, output
    code, output, history = backfilled(api, tmp_path)
    assert "stored 0 run(s)" in output and f"run {RUN} has no receipt" in output, output
    code, output = provenance(api, history, "4242")
    assert code == 2 and "4242 is not in the history" in output, output


def test_a_reused_table_naming_another_run_stays_out(api, tmp_path) -> None:
    """The PR's code wrote its table, and it names run 1040 (another PR's sweep) as the run
    that made it. Every receipt holds (the issuer sealed those very bytes), but stored, the
    history would say run 1040 measured main's rows and mark its verdicts reused: the ingest
    refuses it, and so does the backfill after it."""
    _, stored, _ = reused_merge(api, tmp_path, lambda: None, named=1040)
    code, output = provenance(api, stored, "4242")
    assert code == 2 and "4242 is not in the history" in output, output
    code, output, _ = backfilled(api, tmp_path)
    assert "its table names run 1040, its run receipt run" in output, output
