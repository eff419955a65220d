"""Do the label names a workflow spells out follow the repository's `[labels]` settings?

GitHub evaluates `if:` and `concurrency:` expressions itself, so a workflow names sweep
labels literally (`contains(github.event.pull_request.labels.*.name, 'sweep-enabled')`,
a `fromJSON('[...]')` list tested against `github.event.label.name`). When infx.toml
renames a label, those literals must change with it or the condition never matches.
This reads the literals, with their lines, from the workflow text and names each one
that disagrees: an old name still spelled out, and a label list that lacks a name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from infx.sweep.labels import SWEEP_LABELS

# `contains(github.event.pull_request.labels.*.name, 'X')`, `github.event.label.name == 'X'`
_TESTED = re.compile(
    r"labels\.\*\.name\s*,\s*'([^']*)'\s*\)"
    r"|label\.name\s*==\s*'([^']*)'"
    r"|'([^']*)'\s*==\s*github\.event\.label\.name"
)
# `contains(fromJSON('["a", "b"]'), github.event.label.name)` and the labels.*.name form
_LISTED = re.compile(
    r"fromJSON\('(\[[^']*\])'\)\s*,\s*github\.event\.(?:label\.name|pull_request\.labels\.\*\.name)"
)


@dataclass(frozen=True)
class LabelProblem:
    path: str
    line: int
    message: str

    def text(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def label_problems(path: str, text: str, renamed: Mapping[str, str]) -> list[LabelProblem]:
    """Every literal sweep label in `text` (a workflow file at `path`) that does not match
    the names `renamed` ([labels]: role -> this repository's name) gives."""
    names = [renamed.get(role, role) for role in SWEEP_LABELS]
    old = {role: name for role, name in renamed.items() if name != role}
    problems: list[LabelProblem] = []
    for number, line in enumerate(text.splitlines(), 1):
        literals: list[str] = []
        for match in _TESTED.finditer(line):
            literals.append(next(group for group in match.groups() if group is not None))
        for match in _LISTED.finditer(line):
            try:
                listed = json.loads(match.group(1))
            except ValueError:
                continue
            if not isinstance(listed, list) or not set(map(str, listed)) & {*SWEEP_LABELS, *names}:
                continue
            literals += [str(item) for item in listed]
            problems += [
                LabelProblem(path, number, f"label list lacks {name!r}")
                for name in names
                if name not in listed
            ]
        for literal in literals:
            if literal in old and literal not in names:
                problems.append(
                    LabelProblem(
                        path,
                        number,
                        f"{literal!r} is renamed {old[literal]!r} in infx.toml [labels]",
                    )
                )
    return problems


def label_report(
    files: Mapping[str, str], pattern: str, renamed: Mapping[str, str]
) -> tuple[list[str], int]:
    """`infx workflows check`: its lines and exit code for the workflow files read (path
    from the root -> text); 1 when a label list is wrong."""
    if not files:
        return [f"no workflow file matches {pattern}: nothing to check"], 0
    problems = [p for path, text in files.items() for p in label_problems(path, text, renamed)]
    if problems:
        return [
            *(problem.text() for problem in problems),
            f"{len(problems)} label problem(s): edit the workflows to use the names in "
            "infx.toml [labels]",
        ], 1
    return [f"{len(files)} workflow file(s): label lists match the settings"], 0
