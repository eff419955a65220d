"""GitHub artifact attestations, checked offline: whose workflow signed which bytes.

`actions/attest-build-provenance` signs an in-toto statement naming a file's sha256 with a
short-lived certificate that Sigstore's Fulcio issues for the job's OIDC token. GitHub, not
the job's steps, fills the token's claims, and Fulcio copies them into the certificate:
the workflow file that signed and its ref (Build Signer URI), the workflow that ran
(Build Config URI), the repository, ref and commit of the run (Source Repository URI, Ref,
Digest), the event (Build Trigger), the run and attempt (Run Invocation URI) and whether
the runner was GitHub's or self-hosted (Runner Environment).

Checked here, without a network: the statement names the digest asked about, the DSSE
signature over it verifies with the certificate's key, the certificate was issued by a
certificate authority of Sigstore's trusted root (the file `gh attestation trusted-root`
prints, fetched through Sigstore's TUF repository), and its identity fields are read for
the caller to compare. A certificate no trusted authority issued is anyone's: a job
holding `attestations: write` can store a bundle whose certificate it made itself, so
without the trusted root no certificate is believed. Not checked here: that the
certificate was valid when it signed (Fulcio's are valid for minutes; their keys are
thrown away) and that the signature is in the transparency log; `gh attestation verify`
checks those too (docs/security.md).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infx.numbers import SQLITE_INTEGER_END, decimal

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
# Fulcio's certificate extensions (the "V2" ones, each a DER UTF8String).
_FULCIO = "1.3.6.1.4.1.57264.1."
_FIELDS = {
    "issuer": "8",
    "signer": "9",
    "runner": "11",
    "repository": "12",
    "sha": "13",
    "ref": "14",
    "config": "18",
    "trigger": "20",
    "invocation": "21",
}


@dataclass(frozen=True)
class Signer:
    """Who signed, as the certificate says: every field as GitHub's OIDC token named it."""

    issuer: str  # the OIDC issuer (https://token.actions.githubusercontent.com)
    signer: str  # Build Signer URI: https://github.com/<repo>/<workflow>@<ref>
    runner: str  # github-hosted | self-hosted
    repository: str  # https://github.com/<repo>
    sha: str  # the commit the run ran (GITHUB_SHA)
    ref: str  # the ref the run ran (GITHUB_REF)
    config: str  # Build Config URI: the top-level workflow, with its ref
    trigger: str  # the event
    invocation: str  # https://github.com/<repo>/actions/runs/<id>/attempts/<n>

    def run(self) -> tuple[int, int] | None:
        """The run id and attempt the certificate names (None: it names none, or numbers in
        other digits than ASCII's, or past what the history stores)."""
        parts = self.invocation.rstrip("/").split("/")
        if len(parts) < 4 or parts[-4] != "runs" or parts[-2] != "attempts":
            return None
        run = decimal(parts[-3], below=SQLITE_INTEGER_END)
        attempt = decimal(parts[-1], below=SQLITE_INTEGER_END)
        return (run, attempt) if run is not None and attempt is not None else None


def _der_text(data: bytes) -> str:
    """A DER UTF8String (or IA5String) as text; anything else is a ValueError."""
    if len(data) < 2 or data[0] not in (0x0C, 0x16):
        raise ValueError("not a DER string")
    size, at = data[1], 2
    if size & 0x80:
        count = size & 0x7F
        size, at = int.from_bytes(data[2 : 2 + count], "big"), 2 + count
    if at + size != len(data):
        raise ValueError("a DER string of the wrong length")
    return data[at:].decode("utf-8")


def _b64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise ValueError(f"{what} is missing")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{what} is not base64") from None


def _certificate(bundle: Mapping[str, Any]) -> bytes:
    material = bundle.get("verificationMaterial") or {}
    if not isinstance(material, Mapping):
        raise ValueError("the bundle has no verification material")
    if isinstance(material.get("certificate"), Mapping):
        return _b64(material["certificate"].get("rawBytes"), "the certificate")
    chain = (material.get("x509CertificateChain") or {}).get("certificates") or []
    if chain and isinstance(chain[0], Mapping):
        return _b64(chain[0].get("rawBytes"), "the certificate")
    raise ValueError("the bundle holds no certificate (a public key alone names no signer)")


def _pae(kind: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the signature is over."""
    head = f"DSSEv1 {len(kind.encode())} {kind} {len(payload)} ".encode()
    return head + payload


def _signer(cert: Any) -> Signer:
    from cryptography import x509

    found: dict[str, str] = {}
    for ext in cert.extensions:
        dotted = ext.oid.dotted_string
        if dotted.startswith(_FULCIO) and isinstance(ext.value, x509.UnrecognizedExtension):
            name = next((k for k, v in _FIELDS.items() if dotted == _FULCIO + v), None)
            if name is not None:
                found[name] = _der_text(ext.value.value)
    missing = [name for name in _FIELDS if name not in found]
    if missing:
        raise ValueError(f"the certificate names no {', '.join(missing)}")
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        uris = names.value.get_values_for_type(x509.UniformResourceIdentifier)
    except x509.ExtensionNotFound:
        uris = []
    if found["signer"] not in uris:
        raise ValueError("the certificate's subject is not its Build Signer URI")
    return Signer(**found)


def trusted_authorities(data: bytes) -> list[Any]:
    """The certificate authorities of a Sigstore trusted root (`gh attestation trusted-root`:
    one JSON document a line, or one document), as X.509 certificates; anything else is a
    ValueError."""
    from cryptography import x509

    found = []
    documents = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    if not documents:
        raise ValueError("the trusted root is empty")
    for doc in documents:
        for authority in doc.get("certificateAuthorities") or []:
            for cert in (authority.get("certChain") or {}).get("certificates") or []:
                found.append(x509.load_der_x509_certificate(_b64(cert.get("rawBytes"), "a CA")))
    if not found:
        raise ValueError("the trusted root names no certificate authority")
    return found


def _anchored(cert: Any, authorities: list[Any]) -> bool:
    """Whether a trusted authority issued the certificate (its signature verifies)."""
    from cryptography.exceptions import InvalidSignature

    for authority in authorities:
        if authority.subject != cert.issuer:
            continue
        try:
            cert.verify_directly_issued_by(authority)
        except (InvalidSignature, ValueError, TypeError):
            continue
        return True
    return False


def verified(bundle: Any, digest: str, authorities: list[Any]) -> tuple[Signer | None, str]:
    """The signer of a Sigstore bundle over the file whose digest is `digest`
    (`sha256:<hex>`), or None and why it does not vouch for those bytes; its certificate
    must be issued by one of `authorities` (a trusted root's)."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        if not isinstance(bundle, Mapping):
            raise ValueError("not a Sigstore bundle")
        envelope = bundle.get("dsseEnvelope")
        if not isinstance(envelope, Mapping) or envelope.get("payloadType") != PAYLOAD_TYPE:
            raise ValueError("not a DSSE envelope of an in-toto statement")
        payload = _b64(envelope.get("payload"), "the statement")
        statement = json.loads(payload)
        if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
            raise ValueError("not an in-toto statement")
        wanted = digest.removeprefix("sha256:")
        subjects = statement.get("subject") or []
        if not any(
            isinstance(s, Mapping) and (s.get("digest") or {}).get("sha256") == wanted
            for s in subjects
        ):
            raise ValueError(f"the statement does not name {digest}")
        signatures = envelope.get("signatures") or []
        if len(signatures) != 1 or not isinstance(signatures[0], Mapping):
            raise ValueError("not one signature")
        signature = _b64(signatures[0].get("sig"), "the signature")
        cert = x509.load_der_x509_certificate(_certificate(bundle))
        key = cert.public_key()
        if not isinstance(key, ec.EllipticCurvePublicKey):
            raise ValueError("the certificate's key is not an elliptic-curve key")
        key.verify(signature, _pae(PAYLOAD_TYPE, payload), ec.ECDSA(hashes.SHA256()))
        if not _anchored(cert, authorities):
            return None, "its certificate was issued by no authority of the trusted root"
        return _signer(cert), ""
    except InvalidSignature:
        return None, "its signature does not verify with its certificate's key"
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def workflow_uri(server: str, repo: str, workflow: str, ref: str) -> str:
    """A Build Signer or Build Config URI: the workflow file of `repo` at `ref`."""
    return f"{server.rstrip('/')}/{repo}/{workflow}@{ref}"


def first_signed(
    bundles: list[Any], digest: str, accept: Any, authorities: list[Any]
) -> tuple[Signer | None, str]:
    """The first bundle over `digest` whose signer `accept(signer)` takes (returns "" for
    yes, else why not), or None and why none vouches (the last reason)."""
    why = "no attestation names it"
    for bundle in bundles:
        signer, problem = verified(bundle, digest, authorities)
        if signer is None:
            why = problem
            continue
        refused = accept(signer)
        if not refused:
            return signer, ""
        why = refused
    return None, why
