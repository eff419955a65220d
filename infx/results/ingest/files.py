"""The file edge of the results commands: read client outputs, results files and the accuracy
floors file; write atomically."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from infx import git, schemas
from infx.errors import InfxError, ResultsError, UsageError
from infx.matrix.load import load_yaml, yaml_error
from infx.matrix.rows import MatrixRow
from infx.results.ingest.clients import AIPERF, LM_EVAL, read_aiperf, read_lm_eval, read_vllm
from infx.results.ingest.process import (
    FORMAT,
    RESULT_FILE,
    TABLE_FILE,
    OutOfRange,
    accuracy_row,
    bounded_int,
    checked_config_key,
    client_for,
    document,
    encoded,
    expected_outputs,
    result_errors,
    throughput_row,
    with_config_key,
)
from infx.results.table.keys import point_key
from infx.results.table.rows import Row, RunInfo, Table
from infx.results.verdict.floors import Floors, table_of
from infx.settings import load as load_settings
from infx.yamlio import atomic_write


def read_json(
    path: Path, constants: list[str] | None = None, *, bad: type[InfxError] = ResultsError
) -> Any:
    """The file's JSON; each NaN or infinity it spells is added to `constants` if given
    (Python's reader takes them, no schema should). A file that is empty, not UTF-8 or not
    JSON raises `bad`, one error for all three: a client output (ResultsError, exit 1: the
    run broke) or a results table (UsageError, exit 2: not a results file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise UsageError(f"{path}: cannot read: {exc}") from None
    if not data.strip():
        raise bad(f"{path}: empty file, not JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad(f"{path}: not JSON: not UTF-8 text (byte {exc.start})") from None
    try:
        if constants is None:
            return json.loads(text, parse_int=bounded_int)

        def constant(name: str) -> float:
            constants.append(name)
            return float(name)

        return json.loads(text, parse_constant=constant, parse_int=bounded_int)
    except json.JSONDecodeError as exc:
        raise bad(f"{path}: not JSON: {exc.msg} at line {exc.lineno}") from None
    except OutOfRange as exc:
        raise ResultsError(f"{path}: {exc}") from None


def lm_eval_file(folder: Path) -> Path:
    """lm-eval writes `<output_path>/<model>/results_<timestamp>.json`; take the newest."""
    if folder.is_file():
        return folder
    found = sorted(folder.rglob("results*.json"), key=lambda p: (p.name, str(p)))
    if not found:
        raise UsageError(f"{folder}: no lm-eval results*.json")
    return found[-1]


def process_job(
    row: MatrixRow,
    results_dir: Path,
    outputs: list[Path] | None = None,
    runner_name: str = "",
    config_key: str = "",
) -> Table:
    """Read every client output the row needs and build the job's results document; each
    row names `config_key`, the master config the plan made the job from, when given."""
    recipe_key = checked_config_key(config_key)
    wanted = expected_outputs(row)
    if outputs:
        if len(outputs) != len(wanted):
            raise UsageError(
                f"the row measures {len(wanted)} point(s); got {len(outputs)} --client-output"
            )
        wanted = [(conc, str(path)) for (conc, _), path in zip(wanted, outputs, strict=True)]
    client = client_for(row)
    rows = []
    for conc, relative in wanted:
        path = results_dir / relative
        if client == LM_EVAL:
            path = lm_eval_file(path)
        try:
            source = str(path.relative_to(results_dir))
        except ValueError:
            source = str(path)
        doc = read_json(path)
        if client == LM_EVAL:
            rows.append(accuracy_row(row, read_lm_eval(doc, str(path)), source, runner_name))
            continue
        run = read_aiperf(doc, str(path)) if client == AIPERF else read_vllm(doc, str(path))
        rows.append(throughput_row(row, run, conc, source, runner_name))
    for found in rows:
        found["recipe"] = with_config_key(found["recipe"], recipe_key)
    return document(rows)


def write_json(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, encoded(doc))


def load_results(path: Path) -> Table:
    """A results document from a file, or from a folder: its results.json, else every job file."""
    if path.is_dir():
        table = path / TABLE_FILE
        if table.is_file():
            return _checked(table)
        files = sorted(path.rglob(RESULT_FILE))
        if not files:
            raise UsageError(f"{path}: no {TABLE_FILE} and no {RESULT_FILE} below it")
        rows = [row for f in files for row in _checked(f)["rows"]]
        return {"format": FORMAT, "rows": rows}
    return _checked(path)


def _checked(path: Path) -> Table:
    constants: list[str] = []
    doc = read_json(path, constants, bad=UsageError)  # not even JSON: not a results file
    # Parsed from text that spells no NaN or infinity, no number in it is one.
    problems = result_errors(doc, finite=not constants)
    if problems:
        found = schemas.closest(problems[0])
        where = ".".join(str(p) for p in found.absolute_path) or "document"
        raise ResultsError(f"{path}: not an infx results file: {where}: {schemas.brief(found)}")
    return cast(Table, doc)  # the schema accepted it


def job_files(roots: list[Path]) -> list[Path]:
    """Every job's result file below the given folders (artifact folders of one run)."""
    found: list[Path] = []
    for root in roots:
        if not root.exists():
            continue
        if root.is_file():
            found.append(root)
            continue
        found.extend(sorted(root.rglob(RESULT_FILE)))
    return found


def collect_roots(roots: list[Path]) -> list[Path]:
    """`results collect`'s ROOTs, each of which must be there: a mistyped folder collected
    nothing and wrote an empty table, as if the run had measured nothing."""
    for root in roots:
        if not root.exists():
            raise UsageError(f"{root}: no such folder")
    return roots


def read_job_files(files: list[Path]) -> list[tuple[str, Table]]:
    return [(str(f), _checked(f)) for f in files]


def history_folder(path: Path, branch: str = "main") -> list[Table]:
    """Main's history from a folder of results tables (any `*.json` below it that is one),
    oldest first by the run's `created_at`, then its id. A table without `run.id` cannot be
    placed in time and is refused; one of another ref than `branch` (a PR's table saved
    beside main's) is refused as the ingest refuses it, or it would count as main."""
    if not path.is_dir():
        raise UsageError(f"{path}: --history needs a folder of results.json files")
    by_run: dict[int, list[tuple[Path, Table]]] = {}
    for file in sorted(path.rglob("*.json")):
        doc = _checked(file)
        run = doc.get("run") or {}
        if not isinstance(run.get("id"), int):
            raise ResultsError(f"{file}: a history table needs run.id (written by collect)")
        ref = run.get("ref")
        if ref is not None and ref != f"refs/heads/{branch}":
            raise ResultsError(
                f"{file}: run {run['id']} ran on {ref}, not refs/heads/{branch}: a history "
                "folder holds main's runs only (move the PR's table out of it)"
            )
        by_run.setdefault(run["id"], []).append((file, doc))
    if not by_run:
        raise UsageError(f"{path}: no results tables below it")
    docs = [_one_run(tables) for tables in by_run.values()]
    return sorted(docs, key=lambda d: (str(d["run"].get("created_at", "")), d["run"]["id"]))


def _one_run(tables: list[tuple[Path, Table]]) -> Table:
    """One run's tables as one (a run counted twice would look like runs agreeing exactly):
    per point the newest attempt's row; two tables of one attempt must agree."""
    if len(tables) == 1:
        return tables[0][1]
    by_attempt: dict[int, tuple[Path, dict[str, Row]]] = {}
    newest: RunInfo = {}
    for file, doc in tables:
        attempt = doc["run"].get("attempt", 1)
        rows = {point_key(row): row for row in doc["rows"]}
        if attempt in by_attempt and by_attempt[attempt][1] != rows:
            raise ResultsError(
                f"{file}: run {doc['run']['id']} attempt {attempt} has another table with "
                f"other rows ({by_attempt[attempt][0]})"
            )
        by_attempt[attempt] = (file, rows)
        if attempt >= newest.get("attempt", 1):
            newest = doc["run"]
    points: dict[str, Row] = {}
    for attempt in sorted(by_attempt):
        points.update(by_attempt[attempt][1])
    return {"format": FORMAT, "run": newest.copy(), "rows": list(points.values())}


def load_floors(setting: str | Mapping[str, Any] | None, root: Path) -> Floors | None:
    """The floors the settings name: a file (YAML or JSON) under `root`, or the table."""
    if setting is None:
        return None
    if not isinstance(setting, str):
        return table_of(setting, "accuracy-floors")
    path = root / setting
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"accuracy-floors: cannot read {setting}: {exc.strerror}") from None
    if path.suffix == ".json":
        try:
            value = json.loads(data)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{setting}: not JSON: {exc.msg}") from None
    else:
        try:
            value = load_yaml(data)
        except yaml_error() as exc:
            raise UsageError(f"{setting}: not YAML: {str(exc).splitlines()[0]}") from None
    if isinstance(value, Mapping) and not {"default", "models"} & set(value):
        value = {"default": value}  # InferenceX's older flat form: task -> floor
    return table_of(value, setting)


def repository_floors() -> Floors | None:
    """The accuracy floors of the repository the command runs in (None: no floor set)."""

    root = git.root()
    return load_floors(load_settings(root).accuracy_floors, root)


def row_text(value: str | None) -> str | None:
    """--row as given: JSON text as it is, anything else the file that holds the row."""
    if value is None or value.lstrip().startswith(("{", "[")):
        return value
    try:
        return Path(value).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise UsageError(
            f"--row {value}: {why.lower()} (give the row as JSON text or a file)"
        ) from None
