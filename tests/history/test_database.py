"""Where the history lives (option, environment, settings, default), its schema and
migrations, and the one-line errors of a database that cannot be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from infx.errors import HistoryError, UsageError
from infx.history import open_history
from infx.history.database import HEAD, engine, location
from infx.settings import Settings
from tests.history.tables import curve, sql, table


def test_where_the_history_lives(tmp_path: Path) -> None:
    settings = Settings(history="data/main.sqlite")
    env = {"INFX_HISTORY_URL": "postgresql://ci@db.example/bench"}
    # A relative path in an sqlite:/// URL is under the repository root, as a plain one.
    assert location("sqlite:///x.db", env, settings, tmp_path) == f"sqlite:///{tmp_path / 'x.db'}"
    assert location("sqlite:////abs/x.db", env, settings, tmp_path) == "sqlite:////abs/x.db"
    assert location(None, env, settings, tmp_path) == "postgresql://ci@db.example/bench"
    assert location(None, {"INFX_HISTORY_URL": ""}, settings, tmp_path) == (
        f"sqlite:///{tmp_path / 'data/main.sqlite'}"
    )
    assert location(None, {}, Settings(), tmp_path) == (
        f"sqlite:///{tmp_path / '.infx/history.sqlite'}"
    )
    assert location("/abs/h.sqlite", {}, Settings(), tmp_path) == "sqlite:////abs/h.sqlite"
    assert location("postgres://u@h/d", {}, Settings(), tmp_path) == "postgres://u@h/d"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u@h/d", "mysql"),
        ("redis://h", "redis"),
        ("postgresql+psycopg2://u@h/d", "psycopg2"),
    ],
)
def test_other_databases_are_refused(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        engine(url)


def test_the_default_file_stays_out_of_git(repo) -> None:
    """A repository's history file is created under .infx/, which ignores itself."""
    with open_history(location(None, {}, Settings(), repo.path)) as history:
        history.ingest(table(5000, curve(1000)))
    assert (repo.path / ".infx/history.sqlite").is_file()
    assert repo.git("status", "--porcelain") == ""


def test_a_new_database_is_migrated_to_the_head_revision(history_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from infx.history.database import alembic_config
    from infx.history.tables import metadata

    with open_history(history_url):
        pass
    assert sql(history_url, "SELECT version_num FROM alembic_version") == [(HEAD,)]
    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD
    with engine(history_url).connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), metadata)
    assert differences == []


def test_a_newer_schema_is_refused(history_url: str) -> None:
    with open_history(history_url) as history:
        history.ingest(table(5000, curve(1000)))
    sql(history_url, "UPDATE alembic_version SET version_num = 'f00d'")
    with pytest.raises(HistoryError, match="revision f00d, which this infx does not know"):
        open_history(history_url)


def test_an_unreachable_server_is_one_line_without_the_password(postgres: str) -> None:
    port = postgres.rsplit(":", 1)[1].split("/")[0]
    url = f"postgresql://ci:s3cret@127.0.0.1:{int(port) + 1}/bench"
    with pytest.raises(HistoryError) as caught:
        open_history(url)
    message = str(caught.value)
    assert "s3cret" not in message and "\n" not in message
    assert "cannot open the history postgresql://ci:***@127.0.0.1" in message


def test_a_file_that_is_no_database(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    path.write_text("not a database, just text " * 100)
    with pytest.raises(HistoryError, match="not a database"):
        open_history(f"sqlite:///{path}")


def test_no_database_library_loads_at_start_up() -> None:
    """The gate, the planner and `infx --help` never pay for SQLAlchemy, Alembic or psycopg:
    only opening a history loads them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import infx.cli, infx.cli.results, infx.history, infx.history.rows\n"
        "from infx.cli import cli\n"
        "cli.get_command(None, 'results').get_command(None, 'ingest')\n"
        "print(sorted(m for m in ('sqlalchemy', 'alembic', 'psycopg') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ingest_and_compare_load_neither_pygithub_nor_jsonschema() -> None:
    """`results ingest FILE` and the history's `compare` never talk to GitHub, and a valid
    table is checked by jsonschema-rs alone: PyGithub (0.3 s) and jsonschema (0.05 s) load
    only for a command that needs them (a run id, an invalid table to explain)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import infx.history.ingest, infx.history.compare, infx.results.ingest.process\n"
        "print(sorted(m for m in ('github', 'jsonschema') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
