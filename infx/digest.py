"""The one canonical JSON of infx and the digests taken over it.

Keys sorted, no spaces, text as UTF-8: manifests, receipts and the history's receipts
table are digested over it, and so are the short keys of a job (cost), a row's signature
(origins) and a gate verdict (results). The recipe fingerprint alone escapes non-ASCII
text (`ascii=True`), because InferenceX computes the same fingerprint that way; for ASCII
data, which every row is, the two are the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical(value: Any, *, ascii: bool = False) -> bytes:
    """JSON with keys sorted and no spaces: the bytes every infx digest is taken over."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii)
    return text.encode()


def hexdigest(value: Any, *, ascii: bool = False) -> str:
    """The sha256 of a value's canonical JSON, in hex."""
    return hashlib.sha256(canonical(value, ascii=ascii)).hexdigest()


def sha256(data: bytes) -> str:
    """A file's or a document's digest as infx records it: `sha256:<hex>`."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """A document's digest (manifests, receipts): sha256 over its canonical JSON."""
    return sha256(canonical(value))
