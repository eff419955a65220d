"""GitHub Actions expressions evaluated by GitHub's own evaluator, `@actions/expressions`.

The npm package runs in one long-lived node process (tests/actions/js/evaluate.mjs), so the
workflow tests see GitHub's semantics (short-circuit `&&`/`||`, `*` filters, coercions,
case-insensitive keys) rather than a re-implementation of them. Job-status functions are not
part of that package: GitHub computes them from the run, and `Status` carries that state.
"""

from __future__ import annotations

import atexit
import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

JS = Path(__file__).resolve().parent / "js"
NPM_CI = f"npm ci --prefix {JS} --no-audit --no-fund"


class ExpressionError(Exception):
    """GitHub would refuse or fail on this expression."""


@dataclass(frozen=True)
class Status:
    """What success(), failure() and cancelled() return where the expression is evaluated."""

    success: bool = True
    failure: bool = False
    cancelled: bool = False


class _Node:
    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if shutil.which("node") is None:
            raise RuntimeError("the workflow tests need node (Node.js >= 20) on PATH")
        if not (JS / "node_modules" / "@actions" / "expressions" / "package.json").exists():
            # The same pinned install .ci/run performs, so a bare `pytest` works too.
            done = subprocess.run(NPM_CI.split(), capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"`{NPM_CI}` failed: {done.stderr.strip()}")
        proc = subprocess.Popen(
            ["node", str(JS / "evaluate.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        atexit.register(proc.kill)
        return proc

    def ask(self, request: dict[str, Any]) -> Any:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the expression evaluator (node) exited")
        answer = json.loads(line)
        if "error" in answer:
            raise ExpressionError(f"{request['text']!r}: {answer['error']}")
        return answer["value"]


_NODE = _Node()


def _referenced(text: str, context: dict[str, Any]) -> dict[str, Any]:
    """The contexts the text names: the rest cannot change the result, and sending a large
    `needs` output with every expression would make each call slow."""
    return {k: v for k, v in context.items() if re.search(rf"\b{re.escape(k)}\b", text, re.I)}


def condition(text: Any, context: dict[str, Any], status: Status = Status()) -> bool:
    """An `if:` as GitHub decides it; no `if:` (None) means `success()`."""
    if isinstance(text, bool):
        text = str(text).lower()
    request = {
        "kind": "condition",
        "text": "" if text is None else str(text),
        "status": asdict(status),
    }
    return bool(_NODE.ask({**request, "context": _referenced(request["text"], context)}))


def render(value: Any, context: dict[str, Any]) -> Any:
    """A workflow value with its `${{ }}` evaluated: a lone expression keeps its type
    (`${{ fromJSON(x) }}` is a list), anything else becomes a string."""
    if isinstance(value, str):
        if "${{" not in value:
            return value
        return _NODE.ask(
            {"kind": "template", "text": value, "context": _referenced(value, context)}
        )
    if isinstance(value, dict):
        return {k: render(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, context) for v in value]
    return value
