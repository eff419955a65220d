"""Number spellings YAML readers disagree on, in an entry's fields that are not text.

infx reads entries as YAML 1.2 (ruamel); PyYAML and the InferenceX planner read YAML 1.1.
The two read `010` as 10 and 8, `0o10` as 8 and the text '0o10' (which an integer field
rejects), `1:30` as text and 90, `1e3` as 1000.0 and text; `0x10`, `1_000`, `+5` or `10.0`
both read alike, but readers of YAML 1.2's JSON schema read them as text. Only a plain
decimal (`0`, `8`, `-12`) reads the same everywhere, so the gate asks for one, and
`infx changelog fix` writes it where every reader agrees on the number. Pure: PyYAML's
resolver and constructor are called on the spelling, nothing is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from infx.changelog.model import Entry

PLAIN_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")
# The fields whose values are text; every other field holds a boolean, number or choice.
TEXT_FIELDS = frozenset({"config-keys", "description", "pr-link"})
_YAML11 = "YAML 1.1 readers (PyYAML, the InferenceX planner)"
_YAML12 = "YAML 1.2 readers (infx)"


# The first characters of a plain value PyYAML's resolver may read as another type than
# text (its `yaml_implicit_resolvers`; a test holds them equal): only such a value needs
# PyYAML, which the gate otherwise never imports.
YAML11_FIRST_CHARS = frozenset({"", *"!&*+-.0123456789<=FNOTYfnoty~"})


def yaml11_tag(spelling: str) -> str:
    """The tag YAML 1.1 readers (PyYAML's resolver) give a plain scalar spelled so."""
    from yaml.nodes import ScalarNode
    from yaml.resolver import Resolver

    resolve: Callable[[type[ScalarNode], str, tuple[bool, bool]], str] = Resolver().resolve
    return resolve(ScalarNode, spelling, (True, False))


@cache
def yaml11_reading(spelling: str) -> object:
    """What PyYAML's safe loader (YAML 1.1) reads a plain scalar spelled so as."""
    from yaml.constructor import SafeConstructor
    from yaml.nodes import ScalarNode

    try:
        return SafeConstructor().construct_object(ScalarNode(yaml11_tag(spelling), spelling))
    except ValueError:  # more digits than Python converts: no reader gets a number
        return spelling


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: object) -> int | None:
    """The integer a reading stands for, when it is a whole number."""
    if not _number(value):
        return None
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    return value if isinstance(value, int) else None


def _said(value: object) -> str:
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


def agreed_decimal(spelling: str, read12: object) -> str | None:
    """The plain decimal to write instead of `spelling` when it is not one and both YAML
    1.1 and 1.2 (`read12`, what infx read) read the same whole number; None otherwise."""
    if PLAIN_DECIMAL.fullmatch(spelling):
        return None
    read11 = yaml11_reading(spelling)
    whole = _whole(read12)
    if whole is None or not _same(read11, read12):
        return None
    return str(whole)


def number_problem(spelling: str, read12: object) -> tuple[str, str] | None:
    """(message, fix) when a plain scalar spelled `spelling`, which infx read as `read12`,
    is a number to some YAML reader but not a plain decimal; None when it is fine (or not a
    number to any reader: the schema speaks for it)."""
    if PLAIN_DECIMAL.fullmatch(spelling):
        return None
    read11 = yaml11_reading(spelling)
    if not (_number(read11) or _number(read12)):
        return None
    if _same(read11, read12):
        whole = _whole(read12)
        if whole is None:
            return None  # a fraction or infinity in both: the schema's type rule says so
        return (
            f"{spelling!r} is not a plain decimal: PyYAML, the InferenceX planner and infx "
            f"read {whole}, but some YAML 1.2 readers read text",
            f"write the plain decimal {whole} (infx changelog fix does it)",
        )
    choices = sorted({w for r in (read11, read12) if (w := _whole(r)) is not None})
    rejected = [
        f"{name} read {_said(r)}" + (", which an integer field rejects" if not _number(r) else "")
        for name, r in ((_YAML11, read11), (_YAML12, read12))
    ]
    mean = ", " + " or ".join(map(str, choices)) if choices else ""
    mean += " if it is" if len(choices) == 1 else ""
    return (
        f"YAML 1.1 and 1.2 read {spelling!r} differently: {'; '.join(rejected)}",
        f"write the plain decimal you mean{mean} (infx changelog fix leaves it to you)",
    )


_PLAIN_TOKEN = re.compile(rb"[^ \t\r\n#,\[\]{}]+")


def rewrite_numbers(
    region: bytes, entries: list[Entry]
) -> tuple[bytes, list[tuple[int, str, str]]]:
    """`region` with each field value that `agreed_decimal` rewrites written as that plain
    decimal, every other byte kept, and (line, old, new) of each; entry positions are
    region-relative. A number is one plain token (a plain scalar over several lines reads
    as text), so the token at the value's position, followed by nothing but spaces or a
    comment, is the whole value; anything else is left alone."""
    lines = region.split(b"\n")
    done = []
    for entry in entries:
        for key, value in entry.data.items():
            if key in TEXT_FIELDS or isinstance(value, str | bool):
                continue
            line, offset = entry.value_pos[key]
            text = lines[line - 1]
            token = _PLAIN_TOKEN.match(text, offset)
            rest = text[token.end() :] if token is not None else b""
            if token is None or (rest.strip(b" ") and not re.match(rb" +#", rest)):
                continue
            spelling = token.group().decode("utf-8", "replace")
            decimal = agreed_decimal(spelling, value)
            if decimal is not None:
                lines[line - 1] = text[:offset] + decimal.encode() + rest
                done.append((line, spelling, decimal))
    return (b"\n".join(lines) if done else region), done
