"""How result rows are keyed, matched and named: a config's key (its identity without the
concurrency), its family, the matching of configs across tables, a point's key, and a
config's label.

Points match by identity (image and recipe fingerprint are not part of it). The verdicts
themselves are made in `infx.results.verdict.judge` against main's history.
"""

from __future__ import annotations

import contextlib
import json
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Literal, cast

from infx.results.table.rows import Identity, Indexed, Row, Worker

# Identity keys that vary within one master config (its search space); the rest name the
# config family whose curves a sweep is expected to cover.
_SEARCH_SPACE: tuple[str, ...] = ("conc", "isl", "osl", "tp", "pp", "dcp-size", "pcp-size", "ep")
_SEARCH_SPACE += ("dp-attn", "prefill", "decode")


def _parts(identity: Mapping[str, object]) -> tuple[tuple[str, ...], tuple[object, ...]]:
    """The identity's keys and values as they come, less the concurrency: two tuples, no
    sorting (equal exactly when its items are, at a fifth of the cost of a tuple of its
    items), the same for every point of one config."""
    keys, values = tuple(identity), tuple(identity.values())
    if "conc" in identity:
        at = keys.index("conc")
        return keys[:at] + keys[at + 1 :], values[:at] + values[at + 1 :]
    return keys, values


def config_key(identity: Mapping[str, object]) -> str:
    """The identity without its concurrency, as canonical JSON (computed once per config:
    a history of 30 runs x 2,000 rows asks 60,000 times). Looked up first by `_parts`,
    then by its sorted parts."""
    parts = _parts(identity)
    try:
        return _ITEMS[parts]
    except KeyError:
        pass
    except TypeError:  # a value that does not hash (a worker block): the sorted parts
        return _sorted_key(identity)
    found = _ITEMS[parts] = _sorted_key(identity)
    return found


def _sorted_key(identity: Mapping[str, object]) -> str:
    parts = tuple(
        (k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
        for k, v in sorted(identity.items(), key=lambda item: item[0])
        if k != "conc"
    )
    found = _KEYS.get(parts)
    if found is None:
        found = _KEYS[parts] = json.dumps(
            {k: v for k, v in identity.items() if k != "conc"}, sort_keys=True
        )
    return found


_ITEMS: dict[tuple[object, ...], str] = {}


_KEYS: dict[tuple[object, ...], str] = {}


def _folded(value: object) -> object:
    """A name as it is meant: case and spacing are not part of it, nor are invisible
    characters (a zero-width space, a soft hyphen: Unicode's format characters) or
    compatibility forms (a full-width letter, NFKC), which only hide a respelling."""
    if isinstance(value, str):
        if not value.isascii():
            value = unicodedata.normalize("NFKC", value)
            value = "".join(ch for ch in value if unicodedata.category(ch) != "Cf")
        return " ".join(value.split()).casefold()
    if isinstance(value, dict):
        return {k: _folded(v) for k, v in value.items()}
    return value


def family_key(kind: str, identity: Mapping[str, object]) -> str:
    """Model, hardware, framework, precision, scenario...: the configs one changelog entry
    sweeps together (its parallelisms, sequence lengths and concurrencies vary). Names
    that differ only by case or spacing are one family."""
    parts = (kind, *_parts(identity))
    try:
        return _FAMILIES[parts]
    except (KeyError, TypeError):
        pass
    rest = {k: _folded(v) for k, v in identity.items() if k not in _SEARCH_SPACE}
    found = kind + "|" + json.dumps(rest, sort_keys=True)
    with contextlib.suppress(TypeError):  # an unhashable value: not remembered
        _FAMILIES[parts] = found
    return found


_FAMILIES: dict[tuple[object, ...], str] = {}


_FOLD: dict[str, str] = {}  # key -> folded key


def folded_key(kind: str, identity: Mapping[str, object]) -> str:
    """The config's key with names folded (case and spacing)."""
    key = f"{kind}|{config_key(identity)}"
    found = _FOLD.get(key)
    if found is None:
        folded = {k: _folded(v) for k, v in identity.items()}
        found = _FOLD[key] = f"{kind}|{config_key(folded)}"
    return found


def variant(row: Row) -> str:
    """Which master config measured the row: its `recipe.config-key`, else (a table from
    before infx carried it) its image."""
    recipe = row.get("recipe") or {}
    key = recipe.get("config-key")
    return str(key) if key else f"image:{recipe.get('image', '')}"


class Names(dict[str, str]):
    """How the configs of one comparison are matched: folded key -> the key that stands
    for it (the first spelling seen), and, for an identity two master configs measure
    (InferenceX's `...-disagg-mtp` and `...-disagg-8k1k-mtp`), which variant each row is
    matched as (`split`: folded key -> variant -> the variant it joins)."""

    def __init__(self) -> None:
        super().__init__()
        self.split: dict[str, dict[str, str]] = {}
        self.unsure: dict[str, list[str]] = {}  # folded key -> variants matched by a guess


def point_names(tables: Iterable[Iterable[Row]]) -> Names:
    """The matching of configs across `tables` (this run's rows, main's runs'): configs
    are matched by identity, so an image bump or a renamed master config still meets its
    history; only an identity that two variants (master configs, else images) measured in
    one table is split, each variant its own config. A row without a config key counts as
    the master config seen with its image, when only one was. A variant such a split
    identity has elsewhere but never beside another (a renamed config) joins the split
    variant with its image, else the first, and is said to be a guess."""
    return matched(measured(rows) for rows in tables)


Measured = tuple[str, Identity, str, str]  # kind, identity, variant (`variant`), image


def measured(rows: Iterable[Row]) -> list[Measured]:
    """What each row measured, as `matched` reads a table."""
    return [
        (r["kind"], r["identity"], variant(r), str((r.get("recipe") or {}).get("image", "")))
        for r in rows
    ]


def matched(tables: Iterable[Iterable[Measured]]) -> Names:
    """`point_names` of tables given as what their rows measured (kind, identity, variant,
    image): a table of main's history gives each config's once, not once per row."""
    names = Names()
    keyed: dict[tuple[str, int], str] = {}  # (kind, id of an identity) -> its folded key

    def folded_of(kind: str, identity: Identity) -> str:
        """A history's series share one identity object across runs: keyed once."""
        found = keyed.get((kind, id(identity)))
        if found is None:
            found = keyed[(kind, id(identity))] = _row_keys(kind, identity)[1]
        return found

    # Per table, each distinct (folded key, variant, image), in the order first seen: a
    # config's rows are read once, whatever the number of its concurrencies.
    tables = [list(table) for table in tables]  # alive while `keyed` holds their ids
    indexed = [
        dict.fromkeys((folded_of(kind, ident), raw, image) for kind, ident, raw, image in table)
        for table in tables
    ]
    images: dict[str, dict[str, set[str]]] = {}  # folded -> variant -> images
    for rows in indexed:
        for folded, raw, image in rows:
            images.setdefault(folded, {}).setdefault(raw, set()).add(image)
    together: dict[str, set[str]] = {}  # folded -> variants measured beside another
    for rows in indexed:
        table: dict[str, set[str]] = {}
        for folded, raw, _ in rows:
            table.setdefault(folded, set()).add(_canonical(images[folded], raw))
        for folded, variants in table.items():
            if len(variants) > 1:
                together.setdefault(folded, set()).update(variants)
    for folded, split in together.items():
        joins: dict[str, str] = {}
        for raw, seen in images[folded].items():
            found = _canonical(images[folded], raw)
            if found not in split:
                same = sorted(v for v in split if images[folded].get(v, set()) & seen)
                found = same[0] if len(same) == 1 else sorted(split)[0]
                if len(same) != 1:
                    names.unsure.setdefault(folded, []).append(raw)
            joins[raw] = found
        names.split[folded] = joins
    return names


def _canonical(images: dict[str, set[str]], raw: str) -> str:
    """A row's variant: its config key; a row without one, the one config key seen with
    its image (else its image)."""
    if not raw.startswith("image:"):
        return raw
    image = raw.removeprefix("image:")
    keys = [v for v, seen in images.items() if not v.startswith("image:") and image in seen]
    return keys[0] if len(keys) == 1 else raw


def key_identity(key: str) -> Identity:
    """The identity (without conc) a matching key names."""
    found, _ = json.JSONDecoder().raw_decode(key.split("|", 1)[1])
    return cast(Identity, found)  # the key was written from an identity


def variant_label(label: str, key: str) -> str:
    """A config's label, with the master config (or image) that tells it from another
    config of the same identity, when its key names one."""
    rest = key.split("|", 1)[1]
    _, end = json.JSONDecoder().raw_decode(rest)
    shown = rest[end:].strip()
    return f"{label} · {shown.removeprefix('image:')}" if shown else label


def _worker_label(role: str, worker: Worker) -> str:
    text = f"{role}{worker['num-worker']}x tp{worker['tp']}"
    if worker["ep"] != 1:
        text += f" ep{worker['ep']}"
    if worker["dp-attn"]:
        text += " dpa"
    return text


_PARALLELISMS: tuple[tuple[Literal["pp", "ep", "dcp-size", "pcp-size"], str], ...] = (
    ("pp", "pp"),
    ("ep", "ep"),
    ("dcp-size", "dcp"),
    ("pcp-size", "pcp"),
)
_NAMED: tuple[Literal["router", "kv-p2p-transfer"], ...] = ("router", "kv-p2p-transfer")


def config_label(identity: Identity) -> str:
    """`dsv41flash fp4 vllm · mi355x · tp8 · mtp · kv none · agentic` and the like."""
    parts = [
        f"{identity['model-prefix']} {identity['precision']} {identity['framework']}",
        identity["hardware"],
    ]
    if identity["scenario"] == "fixed-seq-len":
        parts.append(f"{identity['isl']}/{identity['osl']}")
    if identity["multinode"]:
        parts.append(_worker_label("P", identity["prefill"]))
        parts.append(_worker_label("D", identity["decode"]))
    else:
        par = f"tp{identity['tp']}"
        for key, short in _PARALLELISMS:
            if identity[key] != 1:
                par += f" {short}{identity[key]}"
        if identity["dp-attn"]:
            par += " dpa"
        parts.append(par)
    if identity["spec-decoding"] != "none":
        parts.append(identity["spec-decoding"])
    if identity["scenario"] == "agentic-coding":
        kv = identity["kv-offloading"]
        if "kv-offload-backend" in identity:
            kv += f" ({identity['kv-offload-backend']})"
        parts.append(f"kv {kv}")
        parts.append("agentic")
    for named in _NAMED:
        if named in identity:
            parts.append(f"{named} {identity[named]}")
    if identity["disagg"]:
        parts.append("disagg")
    if identity["runner"] not in (identity["hardware"],):
        parts.append(f"on {identity['runner']}")
    return " · ".join(parts)


def index(
    rows: Iterable[Row],
    notes: list[str] | None = None,
    side: str = "",
    twice: bool = True,
    names: dict[str, str] | None = None,
) -> Indexed:
    """(kind|config) -> conc -> row; a point measured twice keeps its first row. Configs
    whose names differ only by case or spacing share one key (said in `notes`); tables
    indexed for one comparison share its `names` (see `match`)."""
    names = {} if names is None else names
    out: Indexed = {}
    for row in rows:
        kind, identity = row["kind"], row["identity"]
        key = match(kind, identity, variant(row), names)
        if notes is not None and key not in out:
            notes += match_notes(kind, identity, variant(row), key, names, side)
        points = out.setdefault(key, {})
        conc = row["identity"]["conc"]
        if conc in points:
            if notes is not None and twice:
                notes.append(
                    f"{side}: {config_label(row['identity'])} conc {conc} was measured twice; "
                    "the first row is used"
                )
            continue
        points[conc] = row
    return out


def match(kind: str, identity: Identity, measured_by: str, names: dict[str, str]) -> str:
    """The key a config is matched under in one comparison (its `names`): configs whose
    names differ only by case or spacing are one config there (the first key seen, kept
    in `names` by folded key, stands for all), so a respelled name is neither new nor
    lost; a split identity's key ends with the variant it is matched as."""
    own, folded = _row_keys(kind, identity)
    key = names.setdefault(folded, own)
    if isinstance(names, Names) and folded in names.split:
        key = f"{key} {names.split[folded][measured_by]}"
    return key


def match_notes(
    kind: str,
    identity: Identity,
    measured_by: str,
    key: str,
    names: dict[str, str],
    side: str,
) -> list[str]:
    """What to say of a config matched under `key`: another spelling, or a guess."""
    notes = []
    own, folded = _row_keys(kind, identity)
    if not key.startswith(own):
        notes.append(
            f"{side}: {config_label(identity)} is matched with "
            f"{config_label(key_identity(key) | {'conc': 0})}, "
            "which differs only by case or spacing"
        )
    if isinstance(names, Names) and measured_by in names.unsure.get(folded, []):
        notes.append(
            f"{side}: {config_label(identity)} ({measured_by}) measures the "
            "same points as another master config and is told from it neither by "
            f"name nor by image: it is matched with {key.rsplit(' ', 1)[-1]}"
        )
    return notes


def _row_keys(kind: str, identity: Identity) -> tuple[str, str]:
    """(own key, folded key) of a row: one lookup per row in the common case, computed
    once per config (`_parts` leaves the concurrency out)."""
    parts = (kind, *_parts(identity))
    try:
        return _ROWS[parts]
    except KeyError:
        found = _ROWS[parts] = (f"{kind}|{config_key(identity)}", folded_key(kind, identity))
        return found
    except TypeError:  # a value that does not hash (a worker block)
        return f"{kind}|{config_key(identity)}", folded_key(kind, identity)


_ROWS: dict[tuple[object, ...], tuple[str, str]] = {}


def configs_of(rows: Iterable[Row]) -> set[str]:
    """Configs as matched across runs (names folded: case and spacing aside)."""
    return {_row_keys(row["kind"], row["identity"])[1] for row in rows}


def point_key(row: Row) -> str:
    """A point as one job measures it: what it measures (kind and identity) and how (its
    recipe, less the master config it names). Two attempts of one row share it; two
    configs that measure the same point with different images or settings do not, and
    both stay; a row of an earlier table that names no master config is the same point as
    this run's that does."""
    recipe = {k: v for k, v in row["recipe"].items() if k != "config-key"}
    return json.dumps([row["kind"], row["identity"], recipe], sort_keys=True)
