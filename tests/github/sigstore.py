"""A stand-in for Sigstore's Fulcio and GitHub's attestation signing, for tests.

`Fulcio.attest(digest, identity)` does what `actions/attest-build-provenance` does in a
job: an in-toto statement naming the digest, signed (DSSE, ECDSA P-256) with a fresh key
whose certificate, issued by this test CA, carries the job's identity in Fulcio's
extensions as GitHub's OIDC token would. Real cryptography, a fake root: what infx checks
offline is checked for real; the root is what `gh attestation verify` would check.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from infx.reuse.attestation import _FIELDS, _FULCIO, PAYLOAD_TYPE, STATEMENT_TYPE, _pae

SERVER = "https://github.com"
TOKEN_ISSUER = "https://token.actions.githubusercontent.com"


def _der_text(text: str) -> bytes:
    data = text.encode()
    size = len(data)
    if size < 0x80:
        return bytes([0x0C, size]) + data
    raw = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([0x0C, 0x80 | len(raw)]) + raw + data


def identity(
    repo: str,
    workflow: str,
    ref: str,
    sha: str,
    event: str,
    run_id: int,
    attempt: int = 1,
    *,
    signer_workflow: str | None = None,
    runner: str = "github-hosted",
) -> dict[str, str]:
    """The certificate fields of a job of run `run_id` of `workflow` at `ref` (`sha`); a
    reusable workflow that signs is `signer_workflow` (default: the workflow itself)."""
    return {
        "issuer": TOKEN_ISSUER,
        "signer": f"{SERVER}/{repo}/{signer_workflow or workflow}@{ref}",
        "runner": runner,
        "repository": f"{SERVER}/{repo}",
        "sha": sha,
        "ref": ref,
        "config": f"{SERVER}/{repo}/{workflow}@{ref}",
        "trigger": event,
        "invocation": f"{SERVER}/{repo}/actions/runs/{run_id}/attempts/{attempt}",
    }


@dataclass
class Fulcio:
    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )

    def __post_init__(self) -> None:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test fulcio")])
        now = dt.datetime.now(dt.UTC)
        self.root = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(1)
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .sign(self.key, hashes.SHA256())
        )

    def trusted_root(self) -> bytes:
        """This authority as `gh attestation trusted-root` prints Sigstore's (one JSON
        document a line)."""
        der = self.root.public_bytes(serialization.Encoding.DER)
        doc = {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "certificateAuthorities": [
                {"uri": "https://fulcio.test", "certChain": {"certificates": [
                    {"rawBytes": base64.b64encode(der).decode()}]}}
            ],
        }  # fmt: skip
        return (json.dumps(doc) + "\n").encode()

    def certificate(self, fields: dict[str, str], key: ec.EllipticCurvePrivateKey) -> bytes:
        now = dt.datetime.now(dt.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(self.root.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(minutes=10))
            .add_extension(
                x509.SubjectAlternativeName([x509.UniformResourceIdentifier(fields["signer"])]),
                critical=True,
            )
        )
        for name, suffix in _FIELDS.items():
            oid = x509.ObjectIdentifier(_FULCIO + suffix)
            builder = builder.add_extension(
                x509.UnrecognizedExtension(oid, _der_text(fields[name])), critical=False
            )
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.DER)

    def attest(self, digest: str, fields: dict[str, str], name: str = "file") -> dict[str, Any]:
        """A Sigstore bundle (v0.3, as GitHub stores it) over the file of `digest`."""
        key = ec.generate_private_key(ec.SECP256R1())
        statement = {
            "_type": STATEMENT_TYPE,
            "subject": [{"name": name, "digest": {"sha256": digest.removeprefix("sha256:")}}],
            "predicateType": "https://slsa.dev/provenance/v1",
            "predicate": {
                "buildDefinition": {"buildType": "https://actions.github.io/buildtypes/workflow/v1",
                                    "externalParameters": {"workflow": {"ref": fields["ref"]}}},
                "runDetails": {"builder": {"id": fields["signer"]},
                               "metadata": {"invocationId": fields["invocation"]}},
            },
        }  # fmt: skip
        payload = json.dumps(statement).encode()
        signature = key.sign(_pae(PAYLOAD_TYPE, payload), ec.ECDSA(hashes.SHA256()))
        return {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {
                    "rawBytes": base64.b64encode(self.certificate(fields, key)).decode()
                },
                "tlogEntries": [],
            },
            "dsseEnvelope": {
                "payload": base64.b64encode(payload).decode(),
                "payloadType": PAYLOAD_TYPE,
                "signatures": [{"sig": base64.b64encode(signature).decode()}],
            },
        }
