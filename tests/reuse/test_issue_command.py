"""`infx receipt issue`, the issuer's command, against the fake GitHub API and a real git
checkout of main: everything it seals comes from GitHub (the run, what it published,
downloaded and hashed here; the certificate of the run's own attestation; the pull
requests of its branch) and git (the code at the commit GitHub says it checked out),
nothing from the run's own claim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.matrix.manifest import sha256
from infx.reuse.issuer import ISSUER_WORKFLOW
from tests.github.scenario import FULCIO, RUN, Green, green_pr, invoke
from tests.github.sigstore import Fulcio, identity
from tests.history.artifacts import zipped_table
from tests.history.tables import curve, table

ISSUER_RUN = 7777


def issue_env(api, pr: Green) -> dict[str, str]:
    tip = pr.runner.git("rev-parse", "origin/main")
    return {
        "GITHUB_API_URL": api.url,
        "GITHUB_TOKEN": "t",
        "GITHUB_REPOSITORY": "acme/bench",
        "GITHUB_WORKFLOW_REF": f"acme/bench/{ISSUER_WORKFLOW}@refs/heads/main",
        "GITHUB_SHA": tip,
        "GITHUB_RUN_ID": str(ISSUER_RUN),
        "GITHUB_RUN_ATTEMPT": "1",
    }


def issued(api, pr: Green, tmp_path: Path, *args: str, root: bool = True) -> tuple[int, str, dict]:
    """`infx receipt issue` as the issuer runs it, with Sigstore's trusted root (`root`)."""
    out = tmp_path / "issued" / "run-receipt.json"
    trusted = tmp_path / "trusted-root.jsonl"
    trusted.write_bytes(FULCIO.trusted_root())
    pr.at_main()
    extra = ["--trusted-root", str(trusted)] if root else []
    result = invoke(["receipt", "issue", "--out", str(out), *extra, *args], issue_env(api, pr),
                    cwd=pr.runner.path)  # fmt: skip
    receipt = json.loads(out.read_text()) if result.exit_code == 0 else {}
    return result.exit_code, result.output, receipt


def with_table(api, pr: Green) -> bytes:
    (bmk,) = [a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk"]
    api.state.blobs[bmk["id"]] = zipped_table(table(RUN, curve(1000), sha=pr.sha1))
    return api.state.blobs[bmk["id"]]


def test_the_issuer_seals_what_github_says_and_serves(api, tmp_path) -> None:
    pr = green_pr(api.state)
    blob = with_table(api, pr)
    code, output, receipt = issued(api, pr, tmp_path, "--run", str(RUN), "--attempt", "1")
    assert code == 0, output
    assert receipt["issuer"] == {"workflow": ISSUER_WORKFLOW, "ref": "refs/heads/main",
                                 "sha": pr.runner.git("rev-parse", "origin/main"),
                                 "run": ISSUER_RUN, "attempt": 1}  # fmt: skip
    ref, merge = api.state.run_checkouts[RUN]
    assert receipt["checkout"] == {"ref": ref, "sha": merge, "by": "attestation",
                                   "runner": "github-hosted"}  # fmt: skip
    assert receipt["run"]["sha"] == merge and receipt["run"]["head_sha"] == pr.sha1
    assert receipt["archives"]["results_bmk"] == sha256(blob)
    assert set(receipt["artifacts"]["results_bmk"]) == {"results.json", "results.csv"}
    assert receipt["table"]["rows"] == 3 and receipt["table"]["points"].startswith("sha256:")
    assert receipt["manifest"]["digest"] == pr.manifests[RUN]["digest"]
    # The code at the merge commit GitHub vouched for, read from git by the issuer.
    assert "perf-changelog.yaml" not in receipt["code"]
    claim = next(a for a in api.state.artifacts[RUN] if a["name"] == "sweep-receipt")
    assert receipt["claim"] is not None and claim["id"] in api.state.blobs
    assert f"receipt of run {RUN} attempt 1" in output


def test_without_the_run_s_own_attestation_the_issuer_lists_the_branch_s_prs(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.attestations.clear()
    api.state.add_pull(8, head_sha=pr.sha1, base="evil-base", state="closed")
    code, output, receipt = issued(api, pr, tmp_path, "--run", str(RUN))
    assert code == 0, output
    assert receipt["checkout"] == {"ref": None, "sha": None, "by": "pulls", "runner": None}
    assert receipt["pulls"] == [
        {"number": 7, "base": "main", "base_changed": False},
        {"number": 8, "base": "evil-base", "base_changed": False},
    ]


@pytest.mark.parametrize("case", ["self-made certificate", "no trusted root"])
def test_an_attestation_no_trusted_authority_issued_is_not_believed(api, tmp_path, case) -> None:
    """The run's own workflow stored a bundle whose certificate it made itself, naming PR
    #7's merge; or the issuer could not fetch Sigstore's trusted root. Either way the
    certificate says nothing, and the pull requests of the branch decide."""
    pr = green_pr(api.state)
    api.state.attestations.clear()
    (claim,) = [a for a in api.state.artifacts[RUN] if a["name"] == "sweep-receipt"]
    from infx.matrix.manifest import sha256 as digest_of
    from tests.github.scenario import unzipped

    digest = digest_of(unzipped(api.state.blobs[claim["id"]])["receipt.json"])
    ref, merge = api.state.run_checkouts[RUN]
    fields = identity("acme/bench", ".github/workflows/run-sweep.yml", ref, merge,
                      "pull_request", RUN)  # fmt: skip
    signer = Fulcio() if case == "self-made certificate" else FULCIO
    api.state.attestations[digest] = [signer.attest(digest, fields)]
    code, output, receipt = issued(api, pr, tmp_path, "--run", str(RUN),
                                   root=case != "no trusted root")  # fmt: skip
    assert code == 0, output
    assert receipt["checkout"]["by"] == "pulls"


def test_an_attestation_of_another_run_says_nothing_of_this_one(api, tmp_path) -> None:
    """The claim's bytes copied from another run, with that run's attestation."""
    pr = green_pr(api.state)
    (claim,) = [a for a in api.state.artifacts[RUN] if a["name"] == "sweep-receipt"]
    (earlier,) = [a for a in api.state.artifacts[RUN - 1] if a["name"] == "sweep-receipt"]
    api.state.blobs[claim["id"]] = api.state.blobs[earlier["id"]]
    code, output, receipt = issued(api, pr, tmp_path, "--run", str(RUN))
    assert code == 0, output
    assert receipt["checkout"]["by"] == "pulls"


def test_what_cannot_be_sealed_is_one_line(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.runs[-1]["status"] = "in_progress"
    code, output, _ = issued(api, pr, tmp_path, "--run", str(RUN))
    assert code == 2 and output.strip() == f"infx: error: run {RUN} is in_progress: only a completed run is sealed"  # fmt: skip
    api.state.runs[-1]["status"] = "completed"
    code, output, _ = issued(api, pr, tmp_path, "--run", str(RUN), "--attempt", "2")
    assert code == 2 and "is at attempt 1 now, not 2" in output
    run = api.state.runs[-1]
    api.state.artifacts[RUN].append(api.state.artifact(run, 99, "results_bmk"))
    code, output, _ = issued(api, pr, tmp_path, "--run", str(RUN))
    assert code == 2 and "has two results_bmk artifacts" in output
    assert len(output.strip().splitlines()) == 1 and "Traceback" not in output


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GITHUB_RUN_ID", "abc"),
        ("GITHUB_RUN_ID", "\u0663"),  # Arabic-Indic three: int() read it as 3
        ("GITHUB_RUN_ID", str(2**63)),  # past the history, beside whose rows receipts go
        ("GITHUB_RUN_ATTEMPT", "1_0"),
    ],
)
def test_an_issuer_run_id_or_attempt_that_is_not_one_is_one_line(
    api, tmp_path, name: str, value: str
) -> None:
    """int() of the issuer's GITHUB_RUN_ID or GITHUB_RUN_ATTEMPT crashed on junk (exit 3,
    a traceback) and sealed `٣` as run 3 and 2**63, which no history can store."""
    pr = green_pr(api.state)
    pr.at_main()
    out = tmp_path / "run-receipt.json"
    env = {**issue_env(api, pr), name: value}
    result = invoke(
        ["receipt", "issue", "--out", str(out), "--run", str(RUN)], env, cwd=pr.runner.path
    )
    assert result.exit_code == 2, result.output
    assert (
        result.output.strip() == f"infx: error: {name} must be a whole number from 1, not {value!r}"
    )
    assert not out.exists()
