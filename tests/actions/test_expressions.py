"""The workflow tests judge `if:` and `${{ }}` with GitHub's own rules, not a look-alike."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.actions.expressions import ExpressionError, Status, condition, render

LABELS = {"github": {"event": {"pull_request": {"labels": [{"name": "a"}, {"name": "b"}]}}}}
SKIPPED_ANCESTOR = Status(success=False)


def test_the_evaluator_is_not_shipped_in_the_package() -> None:
    shipped = Path(importlib.util.find_spec("infx").origin).parent
    assert not [p for p in shipped.rglob("*.py") if "expression" in p.name]


def test_and_or_short_circuit() -> None:
    assert condition("false && fromJSON('')", {}) is False
    assert condition("true || fromJSON('')", {}) is True
    with pytest.raises(ExpressionError):
        condition("true && fromJSON('')", {})


def test_property_of_a_list_needs_a_star() -> None:
    assert render("${{ github.event.pull_request.labels.*.name }}", LABELS) == ["a", "b"]
    assert render("${{ github.event.pull_request.labels.name }}", LABELS) is None
    assert condition("contains(github.event.pull_request.labels.*.name, 'b')", LABELS)
    assert not condition("contains(github.event.pull_request.labels.name, 'b')", LABELS)


def test_implicit_success_unless_a_status_function_is_called() -> None:
    ctx = {"needs": {"setup": {"result": "success", "outputs": {"x": "true"}}}}
    assert condition("needs.setup.outputs.x == 'true'", ctx)
    assert not condition("needs.setup.outputs.x == 'true'", ctx, SKIPPED_ANCESTOR)
    assert condition("!cancelled() && needs.setup.outputs.x == 'true'", ctx, SKIPPED_ANCESTOR)
    assert condition("${{ always() && needs.setup.outputs.x == 'true' }}", ctx, SKIPPED_ANCESTOR)
    assert not condition("!cancelled()", ctx, Status(success=False, cancelled=True))
    assert condition(None, ctx) and not condition(None, ctx, SKIPPED_ANCESTOR)


def test_templates_keep_the_type_of_a_lone_expression() -> None:
    ctx = {"needs": {"setup": {"outputs": {"rows": '[{"a": 1}]'}}}, "github": {"run_id": 7}}
    assert render("${{ fromJSON(needs.setup.outputs.rows) }}", ctx) == [{"a": 1}]
    assert render("${{ github.run_id == 7 }}", ctx) is True
    assert render("run-${{ github.run_id }}-${{ github.missing }}", ctx) == "run-7-"
    assert render("${{ format('{0}}}', 1) }}", ctx) == "1}"
    assert render("${{ GitHub.Run_Id }}", ctx) == 7


def test_unknown_context_or_function_is_an_error() -> None:
    with pytest.raises(ExpressionError):
        condition("need.setup.result == 'success'", {"needs": {}})
    with pytest.raises(ExpressionError):
        render("${{ count(github.x) }}", {"github": {}})
