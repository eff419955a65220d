"""Which InferenceX format (`infx.formats`) a repository is on.

`format` in infx.toml names it. Without it, infx takes the newest known format that accepts
every master config, the changelog and runners.yaml: formats only ever refuse what a newer
or an older era wrote differently, so the repository's own data says which eras it can be
on. What tells them apart is data too: a search-space key, a fixed-seq-len scenario key or
a changelog key one format knows and another does not (`worker`, `num-nodes`, `srt-recipe`,
`require-power`, `no-evals`); how a multi-node config that is not disaggregated names its
serving role (a prefill/decode pair, or one `worker`); whether workers name their recipe in
a `CONFIG_FILE=` setting, which formats with an `srt-recipe` field refuse; and which section
of runners.yaml holds the node facts (`hardware`, or `clusters`, which its formats require).
When nothing tells them apart the newest wins, since that is what InferenceX's own planner
of today makes of such data; when the data holds things no single format accepts, nothing
is guessed.

The evidence is found without parsing every config: a byte scan finds the configs that
may hold it, and only those are parsed, until each format's first refusal is found.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from infx.errors import ConfigError
from infx.formats import FORMATS, Format, by_name
from infx.matrix.load import MasterConfigs


@dataclass(frozen=True)
class Evidence:
    """One thing in the repository that some formats refuse: where, and what."""

    where: str
    what: str
    refused_by: frozenset[str]


@dataclass(frozen=True)
class Choice:
    """The format in force and why, in one line."""

    format: Format
    reason: str

    def note(self) -> str:
        return f"InferenceX format {self.format}: {self.reason}"


def _keys_pattern(keys: Collection[str]) -> re.Pattern[bytes]:
    """A mapping key among `keys`, not the tail of a longer one (`num-worker` is not
    `worker`). Each name's own look-behind follows it, so the engine can skip to a name's
    first letter; a leading look-behind made it try every byte (3x slower on real configs)."""
    names = b"|".join(
        re.escape(k).encode() + rb"(?<![\w-]" + re.escape(k).encode() + rb")" for k in sorted(keys)
    )
    return re.compile(rb"(" + names + rb")[ \t]*:", re.M)


def _differing(sets: list[frozenset[str]]) -> frozenset[str]:
    return frozenset().union(*sets) - frozenset.intersection(*sets)


_MULTINODE = re.compile(rb"^[ \t]+multinode:[ \t]*true\b", re.M)
_DISAGG = re.compile(rb"^[ \t]+disagg:[ \t]*true\b", re.M)
_PAIR = _keys_pattern(("prefill", "decode"))


def _spaces(config: Any) -> Iterator[dict[str, Any]]:
    scenarios = config.get("scenarios") if isinstance(config, dict) else None
    for items in (scenarios or {}).values() if isinstance(scenarios, dict) else ():
        for item in items if isinstance(items, list) else ():
            spaces = item.get("search-space") if isinstance(item, dict) else None
            for space in spaces if isinstance(spaces, list) else ():
                if isinstance(space, dict):
                    yield space


def _fixed_items(config: Any) -> Iterator[dict[str, Any]]:
    scenarios = config.get("scenarios") if isinstance(config, dict) else None
    items = scenarios.get("fixed-seq-len") if isinstance(scenarios, dict) else None
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict):
            yield item


def _settings(config: Any) -> Iterator[str]:
    """Every worker's additional settings in a config."""
    for space in _spaces(config):
        for role in ("worker", "prefill", "decode"):
            worker = space.get(role)
            found = worker.get("additional-settings") if isinstance(worker, dict) else None
            for setting in found if isinstance(found, list) else ():
                yield str(setting)


_SELECTOR_NAMES = ("CONFIG_FILE", "EVAL_CONFIG_FILE", "SRT_RECIPE", "EVAL_SRT_RECIPE")
_SELECTOR = re.compile(b"|".join(name.encode() for name in _SELECTOR_NAMES))


def _names_recipe(setting: str) -> bool:
    return setting.partition("=")[0] in _SELECTOR_NAMES


def _paired_aggregate(config: Any) -> bool:
    """A multi-node config that is not disaggregated, written with prefill and decode."""
    if not isinstance(config, dict) or not config.get("multinode") or config.get("disagg"):
        return False
    return any("prefill" in s or "decode" in s for s in _spaces(config))


def _config_evidence(masters: MasterConfigs, refused: Collection[str]) -> Iterator[Evidence]:
    """What the master configs hold that some format refuses, config by config. A config is
    parsed only when its text may hold evidence against a format not yet in `refused`
    (which the caller fills as evidence comes)."""
    differing = _differing([f.space_keys for f in FORMATS])
    keys = _keys_pattern(differing) if differing else None
    by_key = {
        name: frozenset(f.name for f in FORMATS if name not in f.space_keys) for name in differing
    }
    by_pair = frozenset(f.name for f in FORMATS if f.aggregate != "prefill-decode")
    fixed_differing = _differing([f.fixed_keys for f in FORMATS])
    fixed_keys = _keys_pattern(fixed_differing) if fixed_differing else None
    by_fixed = {
        name: frozenset(f.name for f in FORMATS if name not in f.fixed_keys)
        for name in fixed_differing
    }
    by_setting = frozenset(f.name for f in FORMATS if f.recipe == "field")
    for key in masters.sources:
        text, line = masters.text_of(key)
        where = f"{masters.sources[key]}:{line}: {key}"
        wanted = {name for name, against in by_key.items() if not against <= set(refused)}
        if wanted and keys is not None and keys.search(text):
            config = masters.config(key)
            used = {k for space in _spaces(config) for k in space if k in wanted}
            for name in sorted(used):
                yield Evidence(where, f"search-space key {name!r}", by_key[name])
        if (
            not by_pair <= set(refused)
            and _MULTINODE.search(text)
            and not _DISAGG.search(text)
            and _PAIR.search(text)
            and _paired_aggregate(masters.config(key))
        ):
            yield Evidence(where, "an aggregate (disagg: false) prefill/decode pair", by_pair)
        if fixed_keys is not None and fixed_keys.search(text):
            wanted = {name for name, against in by_fixed.items() if not against <= set(refused)}
            used = {k for item in _fixed_items(masters.config(key)) for k in item if k in wanted}
            for name in sorted(used):
                yield Evidence(where, f"fixed-seq-len key {name!r}", by_fixed[name])
        if (
            not by_setting <= set(refused)
            and _SELECTOR.search(text)
            and any(_names_recipe(s) for s in _settings(masters.config(key)))
        ):
            yield Evidence(where, "a recipe named in a worker's additional-settings", by_setting)


def _changelog_evidence(changelog: bytes | None, path: str) -> Iterator[Evidence]:
    differing = _differing([f.entry_keys for f in FORMATS])
    if not changelog or not differing:
        return
    entry_key = re.compile(
        rb"^(?:-[ \t]+|[ \t]+)(" + b"|".join(re.escape(k.encode()) for k in sorted(differing))
        + rb")[ \t]*:",
        re.M,
    )  # fmt: skip
    seen: set[str] = set()
    for found in entry_key.finditer(changelog):
        name = found.group(1).decode()
        if name in seen:
            continue
        seen.add(name)
        line = changelog.count(b"\n", 0, found.start()) + 1
        refused = frozenset(f.name for f in FORMATS if name not in f.entry_keys)
        yield Evidence(f"{path}:{line}", f"changelog key {name!r}", refused)


_SECTION = re.compile(rb"^(clusters|hardware)[ \t]*:", re.M)


def _runners_evidence(runners: bytes | None, path: str) -> Iterator[Evidence]:
    """The runners.yaml sections a format does not read node facts from, and a file without
    `clusters:` (or none at all), which formats of clusters cannot plan without."""
    if runners is None:
        refused = frozenset(f.name for f in FORMATS if f.runners == "clusters")
        yield Evidence(path, "no `clusters:` section (no such file)", refused)
        return
    seen = set()
    for found in _SECTION.finditer(runners):
        section = found.group(1).decode()
        seen.add(section)
        line = runners.count(b"\n", 0, found.start()) + 1
        refused = frozenset(f.name for f in FORMATS if f.runners != section)
        yield Evidence(f"{path}:{line}", f"a `{section}:` section", refused)
    if "clusters" not in seen:
        refused = frozenset(f.name for f in FORMATS if f.runners == "clusters")
        yield Evidence(path, "no `clusters:` section", refused)


def choose(
    masters: MasterConfigs,
    changelog: bytes | None = None,
    pinned: str | None = None,
    changelog_path: str = "perf-changelog.yaml",
    runners: bytes | None = None,
    runners_path: str = "configs/runners.yaml",
) -> Choice:
    """The format in force: `pinned` (infx.toml's `format`), else the newest format nothing
    in the configs, the changelog or runners.yaml refuses. Data no single format accepts is
    a ConfigError naming one refusal of each."""
    if pinned is not None:
        try:
            return Choice(by_name(pinned), "set by `format` in the settings")
        except KeyError as exc:
            raise ConfigError(str(exc.args[0])) from None
    refusal: dict[str, Evidence] = {}
    evidence = itertools.chain(
        _changelog_evidence(changelog, changelog_path),
        _config_evidence(masters, refusal),
        _runners_evidence(runners, runners_path),
    )
    for found in evidence:
        for name in found.refused_by:
            refusal.setdefault(name, found)
        if len(refusal) == len(FORMATS):
            break
    accepting = [f for f in FORMATS if f.name not in refusal]
    if not accepting:
        shown = "; ".join(_refused(name, ev) for name, ev in refusal.items())
        raise ConfigError(
            f"no known InferenceX format accepts this repository ({shown}); write it in one "
            f"format, or name one with `format` in infx.toml"
        )
    chosen = accepting[-1]
    at = FORMATS.index(chosen)
    # Why not the next newer format, and why not the nearest older one it beat.
    newer = [f.name for f in FORMATS[at + 1 : at + 2]]
    older = [f.name for f in reversed(FORMATS[:at]) if f.name in refusal][:1]
    said = [_refused(name, refusal[name]) for name in (*newer, *older)]
    if not newer:
        said.insert(0, "the newest known")
    if not refusal:
        said.append("nothing in the configs, changelog or runners.yaml needs another")
    return Choice(chosen, "; ".join(said))


def _refused(name: str, ev: Evidence) -> str:
    return f"{ev.where} has {ev.what}, which {name} refuses"
