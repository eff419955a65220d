"""Attestations checked offline: the statement names the bytes, the signature verifies with
the certificate's key, and the certificate's identity is GitHub's word on the signer. Each
forgery below is one a job holding `attestations: write` could try."""

from __future__ import annotations

import base64
import copy
import hashlib
import json

import pytest

from infx.github.client import Run
from infx.reuse.attestation import verified
from infx.reuse.issuer import issuer_signer_problem, signed_by_run
from tests.github.sigstore import Fulcio, identity

REPO = "acme/bench"
DIGEST = "sha256:" + hashlib.sha256(b"receipt").hexdigest()
SWEEP = ".github/workflows/run-sweep.yml"
ISSUER = ".github/workflows/sweep-receipt.yml"


@pytest.fixture(scope="module")
def fulcio() -> Fulcio:
    return Fulcio()


def sweep_run(**kw) -> Run:
    from datetime import UTC, datetime

    values = dict(id=2000, head_sha="a" * 40, event="pull_request", status="completed",
                  conclusion="success", path=SWEEP, run_attempt=1, html_url="",
                  created_at=datetime(2026, 1, 1, tzinfo=UTC), head_repo=REPO)  # fmt: skip
    return Run(**{**values, **kw})


def payload(bundle: dict) -> dict:
    return json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))


def with_payload(bundle: dict, statement: dict) -> dict:
    changed = copy.deepcopy(bundle)
    changed["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    return changed


def test_a_bundle_names_its_signer_as_the_certificate_says(fulcio) -> None:
    fields = identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000)
    signer, why = verified(fulcio.attest(DIGEST, fields), DIGEST)
    assert why == "" and signer is not None
    assert (signer.ref, signer.sha, signer.run()) == ("refs/pull/7/merge", "c" * 40, (2000, 1))
    assert signed_by_run(signer, sweep_run(), REPO) == ""


def test_forged_bundles_vouch_for_nothing(fulcio) -> None:
    fields = identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000)
    bundle = fulcio.attest(DIGEST, fields)
    other = "sha256:" + "0" * 64
    assert verified(bundle, other) == (None, f"the statement does not name {other}")
    # The statement edited to name other bytes: the signature no longer verifies.
    statement = payload(bundle)
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    assert "signature does not verify" in verified(with_payload(bundle, statement), other)[1]
    # A certificate swapped in from another bundle: its key did not sign this statement.
    swapped = copy.deepcopy(bundle)
    theirs = fulcio.attest(DIGEST, fields)
    swapped["verificationMaterial"] = theirs["verificationMaterial"]
    assert "signature does not verify" in verified(swapped, DIGEST)[1]
    # A bare public key names no signer; garbage is no bundle.
    keyless = copy.deepcopy(bundle)
    keyless["verificationMaterial"] = {"publicKey": {"hint": "x"}}
    assert "holds no certificate" in verified(keyless, DIGEST)[1]
    assert verified({"dsseEnvelope": "x"}, DIGEST)[0] is None
    assert verified("not json", DIGEST)[0] is None


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 1999),
         "signed by run 1999 attempt 1, not run 2000 attempt 1"),
        (identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000, 2),
         "not run 2000 attempt 1"),
        (identity("mallory/bench", SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000),
         "signed for https://github.com/mallory/bench"),
        (identity(REPO, ".github/workflows/other.yml", "refs/pull/7/merge", "c" * 40,
                  "pull_request", 2000), "not .github/workflows/run-sweep.yml"),
    ],
)  # fmt: skip
def test_a_certificate_of_another_run_does_not_say_what_this_run_checked_out(
    fulcio, fields, says
) -> None:
    signer, _ = verified(fulcio.attest(DIGEST, fields), DIGEST)
    assert signer is not None and says in signed_by_run(signer, sweep_run(), REPO)


@pytest.mark.parametrize(
    ("ref", "event", "signer_workflow", "says"),
    [
        ("refs/heads/main", "workflow_run", None, ""),
        ("refs/heads/main", "workflow_dispatch", None, ""),
        ("refs/heads/feature", "workflow_dispatch", None, "@refs/heads/feature, not the issuer"),
        ("refs/tags/main", "workflow_dispatch", None, "@refs/tags/main, not the issuer"),
        ("refs/heads/main", "push", None, "the issuer ran on push"),
        ("refs/heads/main", "workflow_run", ".github/workflows/mine.yml", "mine.yml@refs/heads/main"),
    ],
)  # fmt: skip
def test_only_the_issuer_on_main_signs_receipts(fulcio, ref, event, signer_workflow, says) -> None:
    fields = identity(REPO, ISSUER, ref, "e" * 40, event, 9, signer_workflow=signer_workflow)
    signer, _ = verified(fulcio.attest(DIGEST, fields), DIGEST)
    assert signer is not None
    problem = issuer_signer_problem(signer, REPO, "main")
    assert (problem == "") if not says else (says in problem), problem
