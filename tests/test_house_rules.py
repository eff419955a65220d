"""The rules of the house CONTRIBUTING.md calls checked, checked: module size, no import
circle, one registry of the gate's rule ids, one name for the sweep workflow, one canonical
JSON digest, one test of a path leaving the repository, one spelling of SQLite's INTEGER
bound, a map of the code that matches the tree, and no dead code."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import click
import pytest

from infx.changelog.rules import Rule
from tests.conftest import ROOT

INFX = ROOT / "infx"
MAX_LINES = 500


@cache
def sources() -> list[tuple[Path, ast.Module, list[ast.AST]]]:
    """Every module of infx, parsed once for all the tests here, with all of its nodes."""
    found = []
    for path in sorted(INFX.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found.append((path, tree, list(ast.walk(tree))))
    return found


def shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def docstrings(every: list[ast.AST]) -> set[int]:
    """The ids of the docstring nodes of a module and its classes and functions."""
    found = set()
    for node in every:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


# --- size and layering ------------------------------------------------------------------


def test_no_module_is_over_500_lines() -> None:
    long = {
        shown(path): lines
        for path in INFX.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules (at most {MAX_LINES} lines each)"


# Lines of infx/cli per command, on average: issue #30 asked for under 1,500 lines when
# infx had 43 commands.
LINES_PER_COMMAND = 35


def commands(command: click.Command) -> int:
    """The commands a user can run below `command` (groups not counted)."""
    if not isinstance(command, click.Group):
        return 1
    ctx = click.Context(command)
    return sum(commands(command.get_command(ctx, n)) for n in command.list_commands(ctx))


def test_the_command_line_stays_thin() -> None:
    """A command parses, reads, calls and prints (CONTRIBUTING): its logic lives in the
    feature packages, so infx/cli holds at most 35 lines a command."""
    from infx.cli import cli

    lines = sum(len(p.read_text().splitlines()) for p in (INFX / "cli").glob("*.py"))
    count = commands(cli)
    assert lines <= LINES_PER_COMMAND * count, (
        f"infx/cli is {lines} lines for {count} commands: move logic into its feature package"
    )


def test_no_two_modules_import_each_other_even_inside_functions() -> None:
    """lint-imports checks the layers between packages; inside one, a circle hidden by an
    import inside a function (matrix.inputs <-> matrix.sources, before) is found here."""
    import grimp

    graph = grimp.build_graph("infx", cache_dir=None)
    circles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None and module < imported:
                circles.append(" -> ".join((module, *back)))
    assert circles == []


# --- the gate's rule ids ----------------------------------------------------------------


def rules_used() -> dict[str, set[str]]:
    """Rule members named in infx (`Rule.X`), with the files naming them; and string rule
    ids written where a Violation takes its rule (which must not be)."""
    used: dict[str, set[str]] = {}
    for path, _, every in sources():
        for node in every:
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Rule"
            ):
                used.setdefault(node.attr, set()).add(shown(path))
    return used


def literal_rules() -> list[str]:
    """`Violation(line, "rule", ...)`, `more("rule", ...)` or `rule="..."` with a string."""
    found = []
    for path, _, every in sources():
        for node in every:
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            given = [k.value for k in node.keywords if k.arg == "rule"]
            if name == "Violation" and len(node.args) > 1:
                given.append(node.args[1])
            if name == "more" and node.args and "changelog" in path.parts:
                given.append(node.args[0])
            found += [
                f"{shown(path)}:{arg.lineno}"
                for arg in given
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
    return found


def doc_anchors() -> set[str]:
    """The anchors GitHub gives docs/gate.md's headings "Rule `<id>`"."""
    text = (ROOT / "docs" / "gate.md").read_text()
    return {f"rule-{m}" for m in re.findall(r"^#+ Rule `([a-z-]+)`$", text, re.M)}


def test_every_gate_rule_id_is_registered_used_and_documented() -> None:
    assert literal_rules() == [], "name the rule as a member of infx.changelog.rules.Rule"
    used = rules_used()
    registered = {rule.name for rule in Rule}
    assert sorted(set(used) - registered) == [], "not in the registry"
    assert sorted(registered - set(used)) == [], "registered, never used"
    anchors = doc_anchors()
    assert (
        sorted(r.anchor.split("#")[1] for r in Rule if r.anchor.split("#")[1] not in anchors) == []
    )
    assert sorted(anchors - {r.anchor.split("#")[1] for r in Rule}) == [], "documented, not a rule"


def test_a_rule_id_prints_as_its_text() -> None:
    assert f"{Rule.PR_LINK}: x" == "pr-link: x" and Rule.YAML == "yaml"


# --- one name for the sweep workflow, one canonical JSON ---------------------------------


def test_the_sweep_workflow_is_named_once() -> None:
    """Its file name is settings.SWEEP_WORKFLOW; every default and path is made from it."""
    found = []
    for path, _, every in sources():
        prose = docstrings(every)
        found += [
            f"{shown(path)}:{node.lineno}"
            for node in every
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "run-sweep.yml" in node.value
            and id(node) not in prose
        ]
    assert len(found) == 1 and found[0].startswith("infx/settings.py:"), found


def test_json_is_digested_in_one_place() -> None:
    """A function that both writes sorted JSON and hashes is a digest of its own: it must
    go through infx.digest (one canonical JSON, as manifests and receipts are taken over)."""
    found = []
    for path, _, every in sources():
        if path == INFX / "digest.py":
            continue
        for function in every:
            if not isinstance(function, ast.FunctionDef):
                continue
            calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
            dumps = any(
                getattr(c.func, "attr", "") == "dumps"
                and any(k.arg == "sort_keys" for k in c.keywords)
                for c in calls
            )
            hashes = any(
                isinstance(c.func, ast.Attribute)
                and isinstance(c.func.value, ast.Name)
                and c.func.value.id == "hashlib"
                for c in calls
            )
            if dumps and hashes:
                found.append(f"{shown(path)}:{function.lineno} {function.name}")
    assert found == []


def test_whether_a_path_leaves_the_repository_is_asked_in_one_place() -> None:
    """`".." in path.split("/")` is infx.paths.outside_repository's question; a module that
    spells it again may drift from it (one forgot absolute paths)."""
    found = []
    for path, _, every in sources():
        if path == INFX / "paths.py":
            continue
        found += [
            f"{shown(path)}:{node.lineno}"
            for node in every
            if isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Constant)
            and node.left.value == ".."
            and isinstance(node.ops[0], ast.In)
            and isinstance(call := node.comparators[0], ast.Call)
            and getattr(call.func, "attr", "") == "split"
            and [getattr(a, "value", None) for a in call.args] == ["/"]
        ]
    assert found == []


def test_the_sqlite_integer_bound_is_spelled_once() -> None:
    """`1 << 63` (or `2**63`, or the largest INTEGER itself) is infx.numbers'
    SQLITE_INTEGER_END; every other module names it."""
    spelled = {(1, ast.LShift, 63), (2, ast.Pow, 63)}
    found = []
    for path, _, every in sources():
        if path == INFX / "numbers.py":
            continue
        found += [
            f"{shown(path)}:{node.lineno}"
            for node in every
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.left, ast.Constant)
                and isinstance(node.right, ast.Constant)
                and (node.left.value, type(node.op), node.right.value) in spelled
            )
            or (isinstance(node, ast.Constant) and node.value in (2**63 - 1, 2**63))
        ]
    assert found == []


# --- CONTRIBUTING's map ------------------------------------------------------------------

CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text()
# Named in CONTRIBUTING as parts of the shared test data folder, not of this repository.
SHARED_LAYOUT = {"SPEC.md", "plans/", "inferencex-seedera/"}


def map_rows() -> list[list[list[str]]]:
    """The map's table: per row, the backticked names of each cell."""
    rows = []
    for line in CONTRIBUTING.splitlines():
        if line.startswith("| `"):
            rows.append([re.findall(r"`([^`]+)`", cell) for cell in line.strip("|").split("|")])
    return rows


def parts() -> list[str]:
    """infx's packages and top-level modules."""
    found = [p.parent.name for p in INFX.glob("*/__init__.py")]
    found += [p.stem for p in INFX.glob("*.py") if not p.stem.startswith("__")]
    return sorted(found)


def defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_the_map_names_every_part_of_infx_in_the_order_of_the_layers() -> None:
    rows = map_rows()
    named = [name for row in rows for name in row[0]]
    assert sorted(named) == parts()
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = [
        name.strip().removeprefix("infx.")
        for layer in contract["contracts"][0]["layers"]
        for name in layer.split("|")
    ]
    assert named == layers


def named(owner: str, name: str) -> bool:
    """Whether `name` (a module, also of a subpackage, a subpackage, `package.module`, or a
    name the module or the package's __init__ defines) exists in infx's part `owner`, or is
    itself a part."""
    folder = INFX / owner
    path = folder.joinpath(*name.split("."))
    return (
        path.with_suffix(".py").is_file()
        or (path / "__init__.py").is_file()
        or (folder.is_dir() and name in defined(folder / "__init__.py"))
        or (folder.with_suffix(".py").is_file() and name in defined(folder.with_suffix(".py")))
        or name in parts()
        or (folder.is_dir() and any(folder.rglob(f"{name.replace('.', '/')}.py")))
    )


def test_every_module_the_map_names_exists() -> None:
    missing = [
        f"{'/'.join(row[0])}: {name}"
        for row in map_rows()
        for cell in row[2:]
        for name in cell
        if re.fullmatch(r"[a-z_]+(\.[a-z_]+)*", name)
        and not any(named(owner, name) for owner in row[0])
    ]
    assert missing == []


def test_every_path_contributing_names_exists() -> None:
    missing = []
    for token in sorted(set(re.findall(r"`([^`\s<>]+)`", CONTRIBUTING))):
        pathlike = "/" in token or re.search(r"\.(py|md|toml|ya?ml)$", token)
        if not pathlike or token.startswith(("/", "../", ".[")) or token in SHARED_LAYOUT:
            continue
        name = token.rstrip("/")
        places = [ROOT / name, INFX / name, ROOT / "tests" / name]
        if any(p.exists() for p in places) or ("/" not in name and any(ROOT.glob(f"*/**/{name}"))):
            continue
        missing.append(token)
    assert missing == []


# --- tests that never depend on how busy the machine is -----------------------------------

CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time"}


def test_no_test_times_itself() -> None:
    """Speed is measured in benchmarks/, never asserted in a test: no test reads a clock to
    time something, and no property test sets hypothesis's per-example deadline (the suite
    turns it off in tests/conftest.py)."""
    from hypothesis import settings

    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in CLOCKS:
                found.append(f"{shown(path)}:{node.lineno} {node.attr}")
            timed = isinstance(node, ast.keyword) and node.arg == "deadline"
            if timed and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                found.append(f"{shown(path)}:{node.lineno} deadline")
    assert found == []
    assert settings.default.deadline is None


# --- dead code ----------------------------------------------------------------------------

VULTURE = shutil.which("vulture") or str(Path(sys.executable).with_name("vulture"))
# infx/results and infx/history are restructured on their own (issue #30, item 2).
NOT_YET = ("infx/results/", "infx/history/")


@pytest.mark.skipif(not Path(VULTURE).is_file(), reason="vulture is not installed (.[test])")
def test_no_dead_code() -> None:
    """vulture at 60 % over infx; what it cannot see used (click and PyGithub call it,
    TypedDict keys) is listed in tests/vulture_whitelist.py with the reason."""
    done = subprocess.run(
        [VULTURE, "infx", "tests/vulture_whitelist.py", "--min-confidence", "60",
         "--ignore-decorators", "@*.command,@*.group,@click.command,@click.group"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    dead = [line for line in done.stdout.splitlines() if not line.startswith(NOT_YET)]
    assert dead == [], "\n".join(dead)
