"""A results_bmk artifact as GitHub serves it: a zip holding results.json (and the CSV)."""

from __future__ import annotations

import io
import json
import zipfile


def zipped_table(doc: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("results.json", json.dumps(doc))
        zf.writestr("results.csv", "kind\n")
    return buffer.getvalue()
