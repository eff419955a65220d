"""Render a new changelog entry in the house style, with the XXX placeholder."""

from __future__ import annotations

import json
import re
from typing import TypedDict

from infx.changelog.links import PLACEHOLDER


class NewEntry(TypedDict):
    """The entry `new` appends, as its options give it: keys, description points, scenarios
    and the flags set."""

    config_keys: tuple[str, ...]
    descriptions: tuple[str, ...]
    scenario_types: tuple[str, ...]
    evals_only: bool
    all_evals: bool
    no_evals: bool
    append_only: bool


def quote(text: str) -> str:
    """`text` as a YAML double-quoted scalar (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._*/+-]*")


def _key(text: str) -> str:
    return text if _PLAIN_KEY.fullmatch(text) else quote(text)


def render_entry(
    config_keys: list[str],
    descriptions: list[str],
    scenario_types: list[str] | None = None,
    flags: dict[str, bool] | None = None,
) -> bytes:
    lines = ["- config-keys:", *(f"    - {_key(k)}" for k in config_keys)]
    if scenario_types:
        lines += ["  scenario-type:", *(f"    - {t}" for t in scenario_types)]
    lines += ["  description:", *(f"    - {quote(d)}" for d in descriptions)]
    for name, value in (flags or {}).items():
        if value:
            lines.append(f"  {name}: true")
    lines.append(f"  pr-link: {PLACEHOLDER}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def append_entry(current: bytes | None, entry: bytes) -> bytes:
    """The file with `entry` appended after exactly one empty line."""
    if not current:
        return entry
    if not current.endswith(b"\n"):
        current += b"\n"
    return current + b"\n" + entry
