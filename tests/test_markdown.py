"""The one Markdown writer: data an outsider wrote stays inert text in every table."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from infx import markdown
from infx.markdown import Md


def test_data_cannot_open_a_tag_mention_or_link() -> None:
    out = markdown.text("<img src=x> @alice [x](http://evil) `run` | *b*")
    assert "<" not in out and ">" not in out
    assert "@alice" not in out
    assert "\\[x\\]" in out and "\\|" in out and "\\`run\\`" in out and "\\*b\\*" in out


def test_a_cell_of_data_never_adds_a_column() -> None:
    table = markdown.table(["a", "b"], [["x|y", "z\n| c | d |"]])
    body = table.splitlines()[2]
    assert body.count("|") - body.count("\\|") == 3


def test_markdown_infx_wrote_passes_and_data_inside_it_is_escaped() -> None:
    cell = markdown.link("a_b", "https://github.com/o/r/actions/runs/1")
    table = markdown.table(["run", "bold"], [[cell, markdown.bold("**x**")]], ["left", "right"])
    assert "[a\\_b](https://github.com/o/r/actions/runs/1)" in table
    assert "**\\*\\*x\\*\\***" in table
    assert "| --- | ---: |" in table


def test_a_link_to_anything_but_http_is_plain_text() -> None:
    assert markdown.link("x", "javascript:alert(1)") == "x"


def test_code_spans_hold_backticks_and_pipes() -> None:
    assert markdown.code("a`b|c") == "``a`b\\|c``"
    assert markdown.code("`x") == "`` `x ``"


def test_bidi_and_invisible_characters_are_shown_escaped_as_the_error_printer_shows_them() -> None:
    value = "d\u202egnp.\u2066x\u200b\x1b é中"
    assert markdown.text(value) == "d\\\\u202egnp.\\\\u2066x\\\\u200b\\\\x1b é中"
    assert markdown.code(value) == "`d\\u202egnp.\\u2066x\\u200b\\x1b é中`"
    assert markdown.table(["k"], [[value]]).splitlines()[2] == f"| {markdown.text(value)} |"


@given(st.text())
def test_text_is_one_line_and_idempotent_as_md(value: str) -> None:
    out = markdown.text(value)
    assert "\n" not in out and "\r" not in out
    assert markdown.text(out) == out and isinstance(out, Md)


# --- the rule: every value in Markdown goes through infx/markdown.py ---------------------
# Checked on the code as written: each rule below names the module and line that breaks it.

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "infx" / "markdown.py"
# markdown.py's writers, by the names modules call them (`markdown.text` or `text`).
WRITERS = frozenset({"text", "code", "link", "bold", "cell", "table", "Md"})
# Calls that make a number, never text an outsider wrote.
NUMBERS = frozenset({"len", "sum", "int", "round", "float", "min", "max", "number"})
# A Markdown heading or list item (at a line's start), or bold: block text a comment,
# step summary or check run shows.
BLOCK = re.compile(r"(^|\n)(#{1,6} |- )|\*\*")
# Placeholders in such text that hold no outsider's data, each said why (file, expression).
KNOWN = {
    ("infx/cli/merge.py", "text"): "a terminal line (click.echo), not Markdown",
    ("infx/matrix/inputs.py", "text"): "a glob pattern (`**`), not Markdown",
    ("infx/rerun/decide.py", "title"): "the caller's fixed title",
    ("infx/rerun/decide.py", "decision.preview"): "a table markdown.table wrote",
    ("infx/rerun/plan.py", "request.source_id"): "a run id (int)",
    ("infx/rerun/plan.py", "request.scope"): "a scope word of the command line (click.Choice)",
    ("infx/rerun/plan.py", "planned"): "a count (int)",
    ("infx/reuse/ack.py", "word"): "a word of VERDICT_WORDS",
    ("infx/reuse/status.py", "asked.pull.number"): "a pull request number (int)",
    ("infx/sweep/plan.py", "table"): "a table markdown.table wrote (summary_table)",
    (
        "infx/results/render/comment.py",
        "context.ack_note",
    ): "Md (Context.ack_note: Md, by gate.ack_note)",
    ("infx/review/signoff.py", "title"): "'Not counted' or 'Note'",
    ("infx/site/facts.py", "number"): "an int, in a one-line error, not Markdown",
    ("infx/site/facts.py", "where"): "a file name, in a one-line error, not Markdown",
    ("infx/cli/options.py", "value"): "an option's value, in click's usage error (2**63)",
    ("infx/cli/options.py", "self.min"): "an int, in click's usage error (2**63)",
    ("infx/reuse/provenance.py", "target"): "TARGET, in a one-line error (2**63)",
}


@dataclass
class Scanned:
    """What the rules read of one module, found in one walk: its strings, its f-strings
    with the function (or module) they are in, each scope's assignments to plain names,
    and the functions it types to return Md."""

    strings: list[ast.Constant | ast.JoinedStr] = field(default_factory=list)
    fstrings: list[tuple[ast.JoinedStr, int]] = field(default_factory=list)  # (node, scope)
    bound: dict[int, list[tuple[str, ast.expr | None]]] = field(default_factory=dict)
    md: set[str] = field(default_factory=set)


def scan(tree: ast.Module) -> Scanned:
    found = Scanned()
    todo: list[tuple[ast.AST, int]] = [(tree, id(tree))]
    while todo:
        node, scope = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.returns is not None and ast.unparse(node.returns) in ("Md", "'Md'"):
                found.md.add(node.name)
            scope = id(node)
        elif isinstance(node, ast.JoinedStr):
            found.strings.append(node)
            found.fstrings.append((node, scope))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.strings.append(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.bound.setdefault(scope, []).append((target.id, node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.bound.setdefault(scope, []).append((node.target.id, node.value))
        todo.extend((child, scope) for child in ast.iter_child_nodes(node))
    return found


@cache
def _sources() -> dict[str, Scanned]:
    return {
        p.relative_to(ROOT).as_posix(): scan(ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted((ROOT / "infx").rglob("*.py"))
        if p != WRITER
    }


def _literal(node: ast.JoinedStr) -> str:
    """An f-string's text, each placeholder a NUL."""
    return "".join(v.value if isinstance(v, ast.Constant) else "\0" for v in node.values)


def _called(node: ast.expr) -> str:
    """The name a call calls: `text(...)`, `markdown.text(...)`; "" for anything else."""
    if not isinstance(node, ast.Call):
        return ""
    if isinstance(node.func, ast.Name):
        return node.func.id
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id == "markdown" else ""
    return ""


def _md_functions(modules: Iterable[Scanned]) -> frozenset[str]:
    """markdown.py's writers and every function of infx typed to return Md."""
    return WRITERS.union(*(m.md for m in modules))


def _writes(node: ast.expr | None, md: frozenset[str]) -> bool:
    """A writer's call, a constant (`EMPTY`) or text infx wrote (`"✅"`), or a choice between
    two (`Md(...) if x else EMPTY`)."""
    if isinstance(node, ast.IfExp):
        return _writes(node.body, md) and _writes(node.orelse, md)
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return node is not None and _called(node) in md


def _escaped(node: ast.expr, md: frozenset[str], made: set[str]) -> bool:
    """A value that is Markdown infx wrote or a number: a writer's call, a number's, a
    constant's name, or a local name assigned only such values."""
    name = _called(node)
    if name in md or name in NUMBERS:
        return True
    if isinstance(node, ast.Name):
        return node.id.isupper() or node.id in made
    if isinstance(node, ast.BinOp):
        return all(
            _escaped(side, md, made) or isinstance(side, ast.Constant)
            for side in (node.left, node.right)
        )
    return False


def _made_locally(bound: list[tuple[str, ast.expr | None]], md: frozenset[str]) -> set[str]:
    """Names a scope binds, every time, to a writer's call (`how = Md(...)`)."""
    ok: dict[str, bool] = {}
    for name, value in bound:
        ok[name] = ok.get(name, True) and (value is None or _writes(value, md))
    return {name for name, fine in ok.items() if fine}


def table_rows(module: Scanned) -> list[int]:
    """Lines of strings that write a Markdown table row or rule by hand (`| a | b |`)."""
    found = []
    for node in module.strings:
        value = _literal(node) if isinstance(node, ast.JoinedStr) else str(node.value)
        rows = (line.strip() for line in value.splitlines())
        if any(r.startswith("|") and r.endswith("|") and r.count("|") >= 2 for r in rows):
            found.append(node.lineno)
    return sorted(found)


def code_spans(module: Scanned) -> list[str]:
    """Placeholders written between backticks by hand (`{x}`): data holding a backtick
    would end the span; markdown.code fences it."""
    found = []
    for node, _ in module.fstrings:
        parts = node.values
        for i, part in enumerate(parts):
            if not isinstance(part, ast.FormattedValue):
                continue
            before = parts[i - 1] if i else None
            after = parts[i + 1] if i + 1 < len(parts) else None
            if (
                isinstance(before, ast.Constant)
                and str(before.value).endswith("`")
                and isinstance(after, ast.Constant)
                and str(after.value).startswith("`")
                and not (isinstance(part.value, ast.Name) and part.value.id.isupper())
            ):
                found.append(f"{node.lineno}: {ast.unparse(part.value)}")
    return sorted(found)


def raw_data(module: Scanned, md: frozenset[str]) -> list[tuple[int, str]]:
    """Placeholders in a heading, a list item or bold text that are not escaped."""
    found = []
    made: dict[int, set[str]] = {}
    for node, scope in module.fstrings:
        if not BLOCK.search(_literal(node)):
            continue
        if scope not in made:
            made[scope] = _made_locally(module.bound.get(scope, []), md)
        found += [
            (node.lineno, ast.unparse(v.value))
            for v in node.values
            if isinstance(v, ast.FormattedValue)
            and v.format_spec is None
            and not _escaped(v.value, md, made[scope])
        ]
    return sorted(set(found))


def test_the_rules_find_what_they_forbid() -> None:
    module = scan(
        ast.parse(
            "def f(name, n):\n"
            "    rows = ['| a | b |', f'| {name} | {n} |']\n"
            "    span = f'run `{name}`'\n"
            "    mark = 'x' if n else 'y'\n"
            "    ok = f'### {text(name)}: {n:.1f} {len(name)} {mark}'\n"
            "    return f'### {name}', f'- {name.text()}', f'**{name}**'\n"
        )
    )
    md = _md_functions([])
    assert table_rows(module) == [2, 2]
    assert code_spans(module) == ["3: name"]
    assert raw_data(module, md) == [(6, "name"), (6, "name.text()")]


def test_no_module_but_markdown_writes_a_table_row() -> None:
    found = [f"{path}:{line}" for path, m in _sources().items() for line in table_rows(m)]
    assert found == [], "write tables with infx.markdown.table"


def test_no_module_writes_a_code_span_around_data() -> None:
    found = [f"{path}:{hit}" for path, m in _sources().items() for hit in code_spans(m)]
    assert found == [], "write code spans with infx.markdown.code"


def test_no_module_writes_data_unescaped_into_markdown() -> None:
    modules = _sources()
    md = _md_functions(modules.values())
    found = [(path, expr, line) for path, m in modules.items() for line, expr in raw_data(m, md)]
    unknown = [f"{p}:{line}: {e}" for p, e, line in found if (p, e) not in KNOWN]
    assert unknown == [], "escape data with infx.markdown.text (or code, link, bold)"
    # What is known stays true: each entry still names a placeholder the rule sees.
    assert sorted(set(KNOWN) - {(p, e) for p, e, _ in found}) == []
