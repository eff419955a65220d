"""Which of main's runs a comparison reads, per config: the newest N runs that hold that
config, not the newest N runs holding any config of the pull request (a config swept
beside a more often swept one would find none of them and read "new"). The database
reads the same rule in SQL (`History.main_runs`); this is the rule for a folder of
tables. Pure: results documents in, results documents out."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from infx.results.table.keys import family_key, folded_key
from infx.results.table.rows import Row, Table


def families_of(rows: Sequence[Row]) -> Callable[[Row], bool]:
    """Whether a row belongs to a family of `rows`' configs (model, hardware, framework,
    precision, scenario: a sibling config main measured and this run dropped is coverage
    lost, so it is read too)."""
    wanted = {family_key("", row["identity"]) for row in rows}
    return lambda row: family_key("", row["identity"]) in wanted


def per_config(docs: Sequence[Table], wanted: Callable[[Row], bool], limit: int) -> list[Table]:
    """`docs` (oldest first) cut to each wanted config's newest `limit` runs: a run keeps
    the rows of the configs whose window holds it; a run holding none is left out. Configs
    are matched as the comparison matches them (names folded, per kind)."""
    runs_of: dict[str, list[int]] = {}
    keys: list[list[str | None]] = []
    for i, doc in enumerate(docs):
        found: list[str | None] = []
        for row in doc.get("rows", []):
            key = folded_key(row["kind"], row["identity"]) if wanted(row) else None
            found.append(key)
            if key is not None and (not runs_of.get(key) or runs_of[key][-1] != i):
                runs_of.setdefault(key, []).append(i)
        keys.append(found)
    inside = {(key, i) for key, held in runs_of.items() for i in held[-limit:]}
    out = []
    for i, doc in enumerate(docs):
        rows = [
            row
            for row, key in zip(doc.get("rows", []), keys[i], strict=True)
            if key is not None and (key, i) in inside
        ]
        if rows:
            kept = doc.copy()
            kept["rows"] = rows
            out.append(kept)
    return out
