"""Main's history as a frame (`infx.results.table.frame`): what `results compare` reads of
the database, in plain SQL on the driver's connection (`infx.history.reader`).

Each config's window (its newest N runs, per kind) comes from `run_series` (a row per
series a run holds, not one per point), read newest run first until every window is
full; its points' numbers come packed with those rows (`infx.history.packed`, a value
per series and run), one query for all configs whose windows are the same runs; only
accuracy points' JSON is parsed (their scores are the point)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np

from infx.errors import HistoryError
from infx.history import rows as records
from infx.history.packed import unpack
from infx.history.reader import Reader
from infx.results.table.frame import Frame, Series
from infx.results.table.keys import family_key
from infx.results.table.rows import Identity, Row

_CHUNK = 500  # values per IN (...)
_PARAMETERS = 2000  # bound values per points query
Found = dict[int, tuple[int, str, str, str]]  # series id -> config id, kind, variant, image
Identities = dict[int, tuple[str, Identity]]  # config id -> key, identity
Windows = dict[tuple[str, tuple[int, ...]], list[int]]  # (kind, runs) -> config ids
Stored = tuple["np.ndarray", "np.ndarray", "np.ndarray"]  # run ids, series ids, rows
_SERIES = ("config_id", "kind", "variant", "image")
_JOINED = " AND ".join(f"s.{c} = p.{c}" for c in _SERIES)


def _chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _marks(items: Sequence[Any]) -> str:
    return ", ".join("?" * len(items))


def read(db: Reader, limit: int, keys: Collection[str], families: Collection[str] = ()) -> Frame:
    """The frame of the configs whose key is in `keys` or whose family (`family_key("",
    identity)`) is in `families`: each config's newest `limit` runs per kind, the runs
    oldest first."""
    identities: Identities = {}
    for config_id, key, identity in db.rows("SELECT id, key, identity FROM configs"):
        if key not in keys and not families:
            continue
        # Each an identity a checked table stored (`rows.check`).
        found = cast(Identity, identity if isinstance(identity, dict) else json.loads(identity))
        if key in keys or family_key("", found) in families:
            identities[config_id] = (key, found)
    if not identities or limit <= 0:
        return Frame()
    series: Found = {}
    for chunk in _chunks(sorted(identities)):
        sql = f"SELECT id, config_id, kind, variant, image FROM series WHERE config_id IN ({_marks(chunk)})"
        series.update((s, (c, k, v, i)) for s, c, k, v, i in db.rows(sql, chunk))
    windows = _windows(db, series, limit)
    facts = _runs(db, sorted({r for _, runs in windows for r in runs}))
    return _frame(_points(db, windows, series), _accuracy(db, windows), facts, series, identities)


def _windows(db: Reader, series: Found, limit: int) -> Windows:
    """Each (config, kind)'s newest `limit` runs holding any of its series, read from
    `run_series` a batch of runs at a time, newest first, until every window is full or
    the history ends; grouped by kind and runs."""
    group_of = {s: (kind, config_id) for s, (config_id, kind, _, _) in series.items()}
    window: dict[tuple[str, int], list[int]] = {g: [] for g in sorted(set(group_of.values()))}
    newest_first = [r for (r,) in db.rows("SELECT id FROM runs ORDER BY created_at DESC, id DESC")]
    start, size = 0, limit
    while start < len(newest_first):
        wanted = sorted(s for s, g in group_of.items() if len(window[g]) < limit)
        if not wanted:
            break
        batch = newest_first[start : start + size]
        start, size = start + size, size * 2
        rank = {r: n for n, r in enumerate(batch)}
        held: dict[tuple[str, int], set[int]] = {}
        for some, runs in itertools.product(_chunks(wanted), _chunks(batch)):
            sql = (
                "SELECT series_id, run_id FROM run_series "
                f"WHERE series_id IN ({_marks(some)}) AND run_id IN ({_marks(runs)})"
            )
            for series_id, run_id in db.rows(sql, [*some, *runs]):
                held.setdefault(group_of[series_id], set()).add(run_id)
        for g, runs_held in held.items():
            room = limit - len(window[g])
            window[g] += sorted(runs_held, key=rank.__getitem__)[:room]
    out: Windows = {}
    for (kind, config_id), runs_of in window.items():
        if runs_of:
            out.setdefault((kind, tuple(sorted(runs_of))), []).append(config_id)
    return out


def _when(facts: records.RunFacts) -> tuple[datetime, int]:
    return (facts.created_at, facts.id)


def _stamp(value: Any) -> datetime:
    """A stored time: a datetime (PostgreSQL), or SQLite's text of one."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def _runs(db: Reader, run_ids: list[int]) -> dict[int, records.RunFacts]:
    facts: dict[int, records.RunFacts] = {}
    for ids in _chunks(run_ids):
        sql = (
            "SELECT id, attempt, sha, ref, url, created_at, reused_from FROM runs "
            f"WHERE id IN ({_marks(ids)})"
        )
        for run_id, attempt, sha, ref, url, created_at, reused_from in db.rows(sql, ids):
            facts[run_id] = records.RunFacts(
                run_id, attempt, sha, ref, url, _stamp(created_at), reused_from
            )
    return facts


def _where(
    windows: Windows, kinds: tuple[str, ...] | None = None
) -> Iterator[tuple[str, list[Any]]]:
    """WHERE clauses (with their values) of the points queries: the windows' (kind,
    configs, runs) terms, OR'ed in groups binding at most about _PARAMETERS values."""
    terms: list[str] = []
    values: list[Any] = []
    for (kind, runs), configs in sorted(windows.items()):
        if kinds is not None and kind not in kinds:
            continue
        for part in _chunks(sorted(configs)):
            if terms and len(values) + len(part) + len(runs) > _PARAMETERS:
                yield " OR ".join(terms), values
                terms, values = [], []
            terms.append(
                f"(p.kind = ? AND p.config_id IN ({_marks(part)}) AND p.run_id IN ({_marks(runs)}))"
            )
            values += [kind, *part, *runs]
    if terms:
        yield " OR ".join(terms), values


def _points(db: Reader, windows: Windows, found: Found) -> Stored:
    """(run ids, series ids, (conc, *NUMBERS) rows) of every point in the windows; a
    missing number as NaN."""
    of_config: dict[tuple[int, str], list[int]] = {}
    for s, (config_id, kind, _, _) in sorted(found.items()):
        of_config.setdefault((config_id, kind), []).append(s)
    runs: list[int] = []
    ids: list[int] = []
    blobs: list[Any] = []
    for (kind, window), configs in sorted(windows.items()):
        wanted = [s for c in configs for s in of_config.get((c, kind), ())]
        for some in _chunks(wanted):
            sql = (
                "SELECT run_id, series_id, numbers FROM run_series "
                f"WHERE series_id IN ({_marks(some)}) AND run_id IN ({_marks(window)})"
            )
            for run_id, series_id, numbers in db.rows(sql, [*some, *window]):
                if numbers is None:  # written outside infx: read as no points, it would hide some
                    raise HistoryError(
                        f"run {run_id} holds series {series_id} without its numbers packed; "
                        "store the run again (`infx results ingest`)"
                    )
                runs.append(run_id)
                ids.append(series_id)
                blobs.append(numbers)
    table, counts = unpack(blobs)
    return (
        np.repeat(np.array(runs, dtype=np.int64), counts),
        np.repeat(np.array(ids, dtype=np.int64), counts),
        table,
    )


def _accuracy(db: Reader, windows: Windows) -> dict[tuple[int, int, int], str]:
    """(run, series, conc) -> JSON text of the accuracy points in the windows."""
    select = (
        f"SELECT p.run_id, s.id, p.conc, p.data FROM points p JOIN series s ON {_JOINED} WHERE "
    )
    return {
        (r, s, c): data
        for where, values in _where(windows, ("accuracy",))
        for r, s, c, data in db.rows(select + where, values)
    }


def _frame(
    stored: Stored,
    accuracy: dict[tuple[int, int, int], str],
    facts: dict[int, records.RunFacts],
    found: Found,
    identities: Identities,
) -> Frame:
    """The points as a frame: runs oldest first; points in the order a stored run's table
    lists them (kind, config, conc, variant)."""
    run_ids, series_ids, table = stored
    # Series in the order of a table's rows: kind, config key, then variant and image.
    held = sorted(
        set(series_ids.tolist()),
        key=lambda s: (found[s][1], identities[found[s][0]][0], found[s][2], found[s][3]),
    )
    number = np.zeros(max(held, default=0) + 1, dtype=np.int64)
    number[held] = np.arange(len(held))
    kinds = {s: (found[s][1], identities[found[s][0]][0]) for s in held}
    ranked = {k: n for n, k in enumerate(sorted(set(kinds.values())))}
    rank = np.array([ranked[kinds[s]] for s in held] or [0], dtype=np.int64)
    ids = sorted(set(run_ids.tolist()), key=lambda r: _when(facts[r]))
    in_time = np.array(ids, dtype=np.int64)
    by_id = np.argsort(in_time)
    run = by_id[np.searchsorted(in_time[by_id], run_ids)]
    of = number[series_ids]
    conc = table[:, 0].astype(np.int64)
    order = np.lexsort((of, conc, rank[of], run))
    values = table[order, 1:]
    rows: dict[int, Row] = {}
    if accuracy:  # few points: their rows are rebuilt from their JSON
        scored = np.array([found[s][1] == "accuracy" for s in held], dtype=bool)
        picked = np.flatnonzero(scored[of[order]]).tolist()
        at = [(int(run_ids[i]), int(series_ids[i]), int(conc[i])) for i in order[picked]]
        kept = [(n, k) for n, k in zip(picked, at, strict=True) if k in accuracy]
        made = records.rows(
            [(identities[found[s][0]][1], c, accuracy[(r, s, c)]) for _, (r, s, c) in kept]
        )
        rows = {n: row for (n, _), row in zip(kept, made, strict=True)}
    return Frame(
        runs=tuple(facts[r].document() for r in ids),
        series=tuple(
            Series(kind, identities[config_id][1], variant, image)
            for config_id, kind, variant, image in (found[s] for s in held)
        ),
        run=run[order],
        of=of[order],
        conc=conc[order],
        values=values,
        rows=rows,
    )
