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
from infx.reuse.attestation import trusted_authorities, verified
from infx.reuse.issuer import signed_by_run
from tests.github.sigstore import Fulcio, identity

REPO = "acme/bench"
DIGEST = "sha256:" + hashlib.sha256(b"receipt").hexdigest()
SWEEP = ".github/workflows/run-sweep.yml"
ISSUER = ".github/workflows/sweep-receipt.yml"


@pytest.fixture(scope="module")
def fulcio() -> Fulcio:
    return Fulcio()


@pytest.fixture(scope="module")
def roots(fulcio: Fulcio) -> list:
    """The trusted root's authorities, as `gh attestation trusted-root` prints them."""
    return trusted_authorities(fulcio.trusted_root())


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


def test_a_bundle_names_its_signer_as_the_certificate_says(fulcio, roots) -> None:
    fields = identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000)
    signer, why = verified(fulcio.attest(DIGEST, fields), DIGEST, roots)
    assert why == "" and signer is not None
    assert (signer.ref, signer.sha, signer.run()) == ("refs/pull/7/merge", "c" * 40, (2000, 1))
    assert signed_by_run(signer, sweep_run(), REPO) == ""


@pytest.mark.parametrize("run", ["\u0663", "9" * 5000, str(2**63), "+5"])
def test_a_certificate_naming_no_run_id_names_no_run(fulcio, roots, run: str) -> None:
    """isdecimal() read `٣` (Arabic-Indic three) in the invocation URL as run 3, and int() of
    5,000 digits raised ValueError (exit 3): each names no run now."""
    fields = identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", run)  # type: ignore[arg-type]
    signer, why = verified(fulcio.attest(DIGEST, fields), DIGEST, roots)
    assert why == "" and signer is not None
    assert signer.run() is None


def test_a_certificate_no_trusted_authority_issued_is_anyone_s(fulcio, roots) -> None:
    """A job holding `attestations: write` can store a bundle whose certificate it made
    itself, saying whatever ref and commit it likes: without the trusted root's authority
    behind it, it vouches for nothing (issue 31: a run of another base naming PR #7)."""
    fields = identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000)
    self_made = Fulcio().attest(DIGEST, fields)
    assert verified(self_made, DIGEST, roots) == (
        None, "its certificate was issued by no authority of the trusted root"
    )  # fmt: skip
    assert verified(fulcio.attest(DIGEST, fields), DIGEST, [])[0] is None
    with pytest.raises(ValueError, match="names no certificate authority"):
        trusted_authorities(b'{"certificateAuthorities": []}\n')


def test_forged_bundles_vouch_for_nothing(fulcio, roots) -> None:
    fields = identity(REPO, SWEEP, "refs/pull/7/merge", "c" * 40, "pull_request", 2000)
    bundle = fulcio.attest(DIGEST, fields)
    other = "sha256:" + "0" * 64
    assert verified(bundle, other, roots) == (None, f"the statement does not name {other}")
    # The statement edited to name other bytes: the signature no longer verifies.
    statement = payload(bundle)
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    assert "signature does not verify" in verified(with_payload(bundle, statement), other, roots)[1]
    # A certificate swapped in from another bundle: its key did not sign this statement.
    swapped = copy.deepcopy(bundle)
    theirs = fulcio.attest(DIGEST, fields)
    swapped["verificationMaterial"] = theirs["verificationMaterial"]
    assert "signature does not verify" in verified(swapped, DIGEST, roots)[1]
    # A bare public key names no signer; garbage is no bundle.
    keyless = copy.deepcopy(bundle)
    keyless["verificationMaterial"] = {"publicKey": {"hint": "x"}}
    assert "holds no certificate" in verified(keyless, DIGEST, roots)[1]
    assert verified({"dsseEnvelope": "x"}, DIGEST, roots)[0] is None
    assert verified("not json", DIGEST, roots)[0] is None


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
    fulcio, roots, fields, says
) -> None:
    signer, _ = verified(fulcio.attest(DIGEST, fields), DIGEST, roots)
    assert signer is not None and says in signed_by_run(signer, sweep_run(), REPO)
