"""Evaluate GitHub Actions expressions (`${{ ... }}`) against a context.

Used to test workflow gating from the workflow files themselves: the `if:`,
`concurrency` and `env` expressions are evaluated exactly as written. Covers the
documented grammar: literals, property and index access, the `*` object
filter, ! < <= > >= == != && ||, and the built-in functions.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))"
    r"|(?P<str>'(?:[^']|'')*')"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\].,*])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


class ExpressionError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ExpressionError(f"cannot read expression at {text[pos:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def truthy(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        try:
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
            return False
        return _number(a) == _number(b)
    if isinstance(a, str):
        return a.lower() == b.lower()
    if isinstance(a, (dict, list)):
        return a is b
    return a == b


def _compare(a: Any, b: Any, op: str) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        x, y = a.lower(), b.lower()
    else:
        x, y = _number(a), _number(b)
        if math.isnan(x) or math.isnan(y):
            return False
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return "Object" if isinstance(value, dict) else "Array"
    return str(value)


def _contains(search: Any, item: Any) -> bool:
    if isinstance(search, list):
        return any(_equal(x, item) for x in search)
    return _text(item).lower() in _text(search).lower()


def _format(template: Any, *args: Any) -> str:
    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "{{":
            return "{"
        if match.group(0) == "}}":
            return "}"
        return _text(args[int(match.group(1))])

    return re.sub(r"\{\{|\}\}|\{(\d+)\}", sub, _text(template))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": _contains,
    "startswith": lambda a, b: _text(a).lower().startswith(_text(b).lower()),
    "endswith": lambda a, b: _text(a).lower().endswith(_text(b).lower()),
    "format": _format,
    "join": lambda a, sep=",": (
        _text(sep).join(_text(x) for x in a) if isinstance(a, list) else _text(a)
    ),
    "tojson": lambda a: json.dumps(a, indent=2),
    "fromjson": lambda a: json.loads(_text(a)),
}


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], context: dict[str, Any], status: str) -> None:
        self.tokens, self.pos, self.context, self.status = tokens, 0, context, status

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ExpressionError("unexpected end of expression")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise ExpressionError(f"expected {expected!r}, found {token[1]!r}")
        self.pos += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.pos != len(self.tokens):
            raise ExpressionError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.equality()
        while self.peek() == "&&":
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self) -> Any:
        value = self.comparison()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            same = _equal(value, self.comparison())
            value = same if op == "==" else not same
        return value

    def comparison(self) -> Any:
        value = self.unary()
        while self.peek() in ("<", "<=", ">", ">="):
            op = self.take()[1]
            value = _compare(value, self.unary(), op)
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        return self.postfix(self.primary())

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind == "num":
            return float(int(text, 16)) if "x" in text.lower() else float(text)
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind != "name":
            raise ExpressionError(f"unexpected {text!r}")
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        if lowered == "null":
            return None
        if self.peek() == "(":
            return self.call(lowered)
        return self.context.get(text)

    def call(self, name: str) -> Any:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.or_())
            if self.peek() == ",":
                self.take()
        self.take(")")
        if name in ("success", "always", "failure", "cancelled"):
            return {
                "success": self.status == "success",
                "always": True,
                "failure": self.status == "failure",
                "cancelled": self.status == "cancelled",
            }[name]
        if name not in FUNCTIONS:
            raise ExpressionError(f"unknown function {name}()")
        return FUNCTIONS[name](*args)

    def postfix(self, value: Any) -> Any:
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
                value = _member(value, key)
            else:
                if self.peek() == "*":
                    self.take()
                    self.take("]")
                    value = _star(value)
                    continue
                key = self.or_()
                self.take("]")
                value = _member(value, key)
        return value


def _star(value: Any) -> Any:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _member(value: Any, key: Any) -> Any:
    if key == "*":
        return _star(value)
    if isinstance(value, list) and value and isinstance(key, str):
        # After a `*` filter, property access maps over the items.
        return [_member(v, key) for v in value if _member(v, key) is not None]
    if isinstance(value, list) and isinstance(key, (int, float)):
        index = int(key)
        return value[index] if 0 <= index < len(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(key, str) and k.lower() == key.lower():
                return v
    return None


def evaluate(expression: str, context: dict[str, Any], status: str = "success") -> Any:
    """Evaluate a bare expression (an `if:` may omit `${{ }}`)."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}") and text.count("${{") == 1:
        text = text[3:-2]
    return _Parser(_tokens(text), context, status).parse()


def render(template: str, context: dict[str, Any]) -> str:
    """Substitute every `${{ expr }}` in a string, as Actions does for `env`, `with` and names."""

    def sub(match: re.Match[str]) -> str:
        return _text(evaluate(match.group(1), context))

    return re.sub(r"\$\{\{(.*?)\}\}", sub, template, flags=re.S)


def condition(
    expression: str | bool | None, context: dict[str, Any], status: str = "success"
) -> bool:
    """A job or step `if:`; without a status function, `success() &&` is implied."""
    if expression is None:
        return status == "success"
    if isinstance(expression, bool):
        return expression and status == "success"
    text = str(expression)
    if not re.search(r"\b(success|always|failure|cancelled)\s*\(", text):
        text = f"success() && ({text.strip().removeprefix('${{').removesuffix('}}')})"
    return truthy(evaluate(text, context, status))
