"""The one Markdown writer: data an outsider wrote stays inert text in every table."""

from __future__ import annotations

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


@given(st.text())
def test_text_is_one_line_and_idempotent_as_md(value: str) -> None:
    out = markdown.text(value)
    assert "\n" not in out and "\r" not in out
    assert markdown.text(out) == out and isinstance(out, Md)
