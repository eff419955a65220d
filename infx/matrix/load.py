"""Master config files: a mapping config-key -> recipe, spread over several files.

Files are read the way InferenceX's planner reads them (PyYAML's safe loader,
YAML 1.1: `2_063_837` is an int), with duplicate keys as errors; a config or runners file
that is `plain` (no anchor, tag, merge, time of day or scalar the two read apart) is read by
ruamel's C loader at YAML 1.1 when PyYAML is not loaded yet, which gives the same data
(tests/matrix/test_era.py) without PyYAML's start-up. Only the keys are
needed to check a changelog and only the selected configs to plan one, so a file
whose top level is a plain list of `key:` lines is indexed by a line scan and each
config is parsed on its own, on first use. Anything unusual at the top level
(anchors, flow style, quoted or non-string keys, directives) falls back to parsing
the whole file.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from infx.errors import ConfigError
from infx.yamlio import yaml_error_line, yaml_error_text

if TYPE_CHECKING:
    import yaml

_TOP_KEY = re.compile(rb"([A-Za-z][A-Za-z0-9._-]*):[ \t]*(?:#.*)?")
# Plain scalars YAML 1.1 reads as booleans or null: such a key is not a string.
_NOT_STRINGS = frozenset(
    b"y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF "
    b"null Null NULL".split()
)


_MAPPING = "tag:yaml.org,2002:map"
# Plain scalars ruamel reads apart from PyYAML at YAML 1.1: y/Y/n/N (booleans to ruamel,
# the spec's short forms; strings to PyYAML), `=` (a value to ruamel, an error to PyYAML)
# and some exponents (`1e3`, `1.0e3`: floats to ruamel, strings to PyYAML, which wants a
# dot and a sign). A text holding any of these as a key or a value, or any number with an
# exponent (even in a comment: a stray match costs only speed), is read by PyYAML
# (tests/matrix/test_era.py tries each form). So is a sign or a dot then `_` (`-_7`, `._5`,
# `+_`, `._`): ruamel's patterns take these for numbers (-7, 0.5, or an IndexError or
# ValueError, which is no YAMLError), PyYAML's for strings.
_READ_APART = re.compile(
    rb"(?<![^\s:,?\[\]{}-])(?:[yYnN=]|[-+]?[0-9._]*[0-9][0-9._]*[eE][-+]?[0-9]+"
    rb"|[-+.]_[0-9_]*(?:[eE][-+][0-9]+)?)(?![^\s:,\[\]{}#])"
)


@cache
def _loader() -> type[yaml.CSafeLoader] | type[yaml.SafeLoader]:
    """PyYAML's safe loader (its C parser when built) that refuses duplicate keys. Built on
    first use: a gate that only needs config keys never imports PyYAML."""
    import yaml

    if hasattr(yaml, "CSafeLoader"):

        class FastLoader(yaml.CSafeLoader):
            """The C parser's safe loader, refusing duplicate keys."""

        FastLoader.add_constructor(_MAPPING, _unique_mapping)
        return FastLoader

    class Loader(yaml.SafeLoader):
        """The pure-Python safe loader, refusing duplicate keys."""

    Loader.add_constructor(_MAPPING, _unique_mapping)
    return Loader


def _unique_mapping(
    loader: yaml.CSafeLoader | yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Hashable, object]:
    from yaml.constructor import ConstructorError, SafeConstructor

    seen: set[object] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            continue
        if duplicate:
            raise ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen.add(key)
    return SafeConstructor.construct_mapping(loader, node, deep=deep)


@cache
def _ruamel_yaml11() -> Any:
    """ruamel.yaml's safe C loader reading YAML 1.1 (yes/no, 0-prefixed octal), as PyYAML."""
    from ruamel.yaml import YAML
    from ruamel.yaml.resolver import VersionedResolver

    class Resolver11(VersionedResolver):
        """YAML 1.1 for every scalar: ruamel otherwise asks the loader for its version once
        per scalar, through attribute lookups that fail (the C parser has no scanner),
        which is a third of a config's load time. libyaml ignores `%YAML` directives, so
        the answer never differs."""

        @property
        def processing_version(self) -> tuple[int, int]:
            return (1, 1)

    reader = YAML(typ="safe", pure=False)
    reader.Resolver = Resolver11
    return reader


def load_yaml(data: bytes | str) -> Any:
    """YAML 1.1 plain data, as InferenceX reads its config files; duplicate keys are errors,
    and so are aliases that hold themselves or expand past `_MOST_VALUES`."""
    import yaml

    try:
        doc = yaml.load(data, Loader=_loader())
    except RecursionError:  # PyYAML builds nested nodes recursively; libyaml allows 1,000
        raise yaml.YAMLError("nested too deeply to read") from None
    if (b"&" in data or b"*" in data) if isinstance(data, bytes) else ("&" in data or "*" in data):
        _check_aliases(doc)
    return doc


# Values a document may expand to through its aliases: every reader walks the expansion
# (schemas, the checks of plain data), so nine nested lists of ten aliases (10**9 values)
# held `sweep validate` for good, and an alias inside its own anchor recursed without end.
_MOST_VALUES = 1_000_000


def _check_aliases(doc: Any) -> None:
    """A yaml.YAMLError when aliases make `doc` a cycle or expand past `_MOST_VALUES`."""
    import yaml

    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        value, done = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        children = list(value.values()) if isinstance(value, dict) else value
        if done:
            open_.discard(id(value))
            size = 1 + sum(sizes.get(id(c), 1) for c in children)
            if size > _MOST_VALUES:
                raise yaml.YAMLError(f"aliases expand to more than {_MOST_VALUES:,} values")
            sizes[id(value)] = size
            continue
        if id(value) in open_:
            raise yaml.YAMLError("an alias refers to the node that holds it")
        if id(value) in sizes:
            continue
        open_.add(id(value))
        stack.append((value, True))
        stack.extend((c, False) for c in children if isinstance(c, (dict, list)))


# Node properties and merges (anchors, aliases, tags, `<<`) and times of day (ruamel names
# a time zone and rounds a 7th digit of a fraction, PyYAML does neither; the time may follow
# the date on the next line of a plain scalar): PyYAML alone reads those as InferenceX does.
# A text holding one, even in a comment or a string, is simply left to it.
_NODE_PROPERTIES = re.compile(rb"[&*!]|<<|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|\s+[0-9])")
# So is a text with a sequence as a mapping key (a tuple to ruamel, an error to PyYAML): an
# explicit key `?`, `[...]:`, or `[` opening an entry of a flow mapping (after a comma a
# list of lists matches too). And one the patterns here do not see as YAML does: UTF-16
# (a NUL, or a BOM's 0xFE/0xFF), a UTF-8 BOM (`<BOM>y:` is a key `y`) or NEL, LS, PS, line
# breaks to YAML 1.1 (`a: y<NEL>`). Each branch starts at one byte of the leading set,
# which keeps the search fast; comments are matched to their line's end, never in parts.
_TEXT_APART = re.compile(
    rb"[?\]{,\x00\xfe\xff\xef\xc2\xe2]"
    rb"(?:(?<=\?)(?<![^\s\[{,]\?)|(?<=\])[ \t]*:|(?<=[{,])\s*(?:#[^\r\n]*[\r\n]\s*)*\["
    rb"|(?<=[\x00\xfe\xff])|(?<=\xef)\xbb\xbf|(?<=\xc2)\x85|(?<=\xe2)\x80[\xa8\xa9])"
)


def plain(data: bytes) -> bool:
    """Whether ruamel's C loader at YAML 1.1 reads `data` as PyYAML does: no anchor, alias,
    tag or merge, no scalar the two read apart (`_READ_APART`), no sequence as a key and no
    odd encoding or line break (`_TEXT_APART`). tests/matrix/test_era.py holds the two
    readers equal on each scalar form and on every real config and runners file that is
    plain."""
    return not (
        _READ_APART.search(data) or _NODE_PROPERTIES.search(data) or _TEXT_APART.search(data)
    )


def read_plain(data: bytes) -> Any:
    """`load_yaml`'s data, read by ruamel (which the changelog already loaded) when PyYAML
    is not loaded yet and the text is `plain`: the plan then never pays PyYAML's 25 ms
    start-up for a selected config and runners.yaml. Anything else, an error included, is
    PyYAML's to read and to word."""
    if "yaml" in sys.modules or "ruamel.yaml" not in sys.modules or not plain(data):
        return load_yaml(data)
    try:
        return _ruamel_yaml11().load(data)
    except Exception:
        # Not only a YAMLError: ruamel builds values as it reads and may stop on one (a
        # ValueError, a TypeError) where PyYAML, which checks keys first, reads the text or
        # refuses it in its own words. Either way PyYAML says.
        return load_yaml(data)


def yaml_error() -> type[yaml.YAMLError]:
    import yaml

    return yaml.YAMLError


def check_syntax(name: str, data: bytes) -> None:
    """A file that is not YAML is a ConfigError naming its file and line, whichever config
    the broken line sits in: every command that reads master configs refuses it alike, even
    one that needs only their keys. libyaml's parser runs over the whole file without
    building anything (a few milliseconds a file): ruamel's copy, which the gate has loaded
    already for the changelog, else PyYAML's."""
    problem = _parse_problem(data)
    if problem is not None:
        raise yaml_problem(name, problem)


def _parse_problem(data: bytes) -> Exception | None:
    """The error libyaml's parser finds in `data`, None when it parses (see check_syntax)."""
    from ruamel.yaml.error import YAMLError as RuamelError

    try:
        from ruamel.yaml import cyaml

        parser: Any = vars(cyaml)["CParser"]
    except (ImportError, KeyError):  # ruamel.yaml without its C extension
        parser = None
    if parser is not None:
        try:
            parser(data).raw_parse()
        except RuamelError as exc:
            return exc
        return None
    import yaml

    try:
        for _ in yaml.parse(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            pass
    except yaml.YAMLError as exc:
        return exc
    return None


def _blocks_stand_alone(data: bytes, scanned: list[tuple[str, int, int]]) -> bool:
    """Whether every scanned `key:` line starts a config of its own: the file parses with a
    document start (`---`) before each of them. A line that only looks like a key, inside a
    quoted string or a flow collection that spans lines (`note: "see` ... `ghost: #"`), is
    text to YAML and to InferenceX; there a document marker is an error, so the scan is not
    believed and the whole file is parsed. One parse of the file either way."""
    starts = [start for _, _, start in scanned[1:]]
    parts = [data[a:b] for a, b in zip([0, *starts], [*starts, len(data)], strict=True)]
    return _parse_problem(b"---\n".join(parts)) is None


def yaml_problem(name: str, exc: Exception) -> ConfigError:
    """One line naming the file and line of a YAML error."""
    line = yaml_error_line(exc)
    where = f"{name}:{line}" if line is not None else name
    return ConfigError(f"{where}: invalid YAML: {yaml_error_text(exc)}")


@dataclass(frozen=True)
class _Block:
    file: str
    line: int
    start: int
    end: int


_TOP_LINE = re.compile(rb"^[^ \t#\r\n].*", re.M)


def _scan(data: bytes) -> list[tuple[str, int, int]] | None:
    """(key, line, byte offset) of each top-level key, or None when the top level is
    anything but plain `key:` lines, comments and blank lines."""
    found = []
    line, counted = 1, 0
    for match in _TOP_LINE.finditer(data):
        key = _TOP_KEY.fullmatch(match.group().rstrip(b"\r"))
        if key is None or key.group(1) in _NOT_STRINGS:
            return None
        line += data.count(b"\n", counted, match.start())
        counted = match.start()
        found.append((key.group(1).decode("ascii"), line, match.start()))
    return found


@dataclass
class MasterConfigs:
    """Every config key with the file that defines it; configs parsed on first use."""

    texts: dict[str, bytes] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    _blocks: dict[str, _Block] = field(default_factory=dict, repr=False)
    _parsed: dict[str, Any] = field(default_factory=dict, repr=False)

    def keys(self) -> list[str]:
        return list(self.sources)

    def __contains__(self, key: object) -> bool:
        return key in self.sources

    def __len__(self) -> int:
        return len(self.sources)

    def config(self, key: str) -> Any:
        if key not in self._parsed:
            self._parsed[key] = self._parse_block(key)
        return self._parsed[key]

    def text_of(self, key: str) -> tuple[bytes, int]:
        """The bytes that define `key` and the file line they start on: the config's own
        block when the file was indexed, else the whole file."""
        block = self._blocks.get(key)
        if block is None:
            return self.texts[self.sources[key]], 1
        return self.texts[block.file][block.start : block.end], block.line

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every config; each file is parsed whole, once, which beats one parse per config."""
        for name, data in self.texts.items():
            if any(self._blocks[k].file == name and k not in self._parsed for k in self._blocks):
                whole = _parse_file(name, data)
                for key, block in self._blocks.items():
                    if block.file == name:
                        self._parsed.setdefault(key, whole.get(key))
        for key in self.sources:
            yield key, self.config(key)

    def _parse_block(self, key: str) -> Any:
        block = self._blocks[key]
        text = self.texts[block.file][block.start : block.end]
        try:
            doc = read_plain(text)
        except yaml_error():
            doc = None
        if isinstance(doc, dict) and list(doc) == [key]:
            return doc[key]
        # An alias into another config, or anything the block cannot say on its own.
        whole = _parse_file(block.file, self.texts[block.file])
        return whole.get(key)


def _parse_file(name: str, data: bytes) -> dict[Any, Any]:
    try:
        doc = load_yaml(data)
    except yaml_error() as exc:
        raise yaml_problem(name, exc) from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{name}: a master config file must be a mapping of config keys")
    return doc


def _add_key(result: MasterConfigs, name: str, key: str, line: int | None) -> None:
    where = f"{name}:{line}" if line else name
    if "*" in key:
        raise ConfigError(f"{where}: config key {key!r} may not contain '*'")
    if key in result.sources:
        if result.sources[key] == name:
            raise ConfigError(f"{where}: config key {key!r} is defined twice in this file")
        raise ConfigError(
            f"{where}: config key {key!r} is already defined in {result.sources[key]}"
        )
    result.sources[key] = name


def parse_masters(files: Mapping[str, bytes]) -> MasterConfigs:
    """Index master files (path -> bytes), in the order given; a file that is not YAML, a key
    defined twice, or holding `*`, is an error."""
    result = MasterConfigs()
    for name, data in files.items():
        result.texts[name] = data
        scanned = _scan(data)
        if scanned is None or not _blocks_stand_alone(data, scanned):
            check_syntax(name, data)
            scanned = None
        if scanned is None:
            for key, value in _parse_file(name, data).items():
                _add_key(result, name, str(key), None)
                result._parsed[str(key)] = value
            continue
        for index, (key, line, start) in enumerate(scanned):
            end = scanned[index + 1][2] if index + 1 < len(scanned) else len(data)
            _add_key(result, name, key, line)
            result._blocks[key] = _Block(name, line, start, end)
    return result
