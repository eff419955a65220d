"""The history's tables (SQLAlchemy Core). Migrations in `migrations/versions/` build them;
a test holds the two to the same schema on SQLite and PostgreSQL.

One row per main run, one per config (identity without concurrency, the key `results
compare` matches on), one per measured point: (run, config, kind, concurrency, variant) is
unique, so a point can be stored once per run whatever the number of attempts or ingests;
`variant` is the master config that measured it (`recipe.config-key`), so two configs
measuring one identity are two points. A point is JSON text (`data`, the row less its
identity; on PostgreSQL `data::jsonb -> 'metrics'` reads it in SQL), and the numbers a
comparison judges are columns of their own (`NUMBERS`), so reading 40,000 points parses no
JSON. A series is what one config's points share in a run (config, kind, variant, image);
`run_series` says which series each run holds, so a config's window (its newest N runs)
is read from a row per run rather than from its points, and holds those points' numbers
packed in one value, so a comparison reads a value per series and run, not per number. One row per judged pull request
run attempt (`verdicts`), written by `results compare --pr`.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from infx.results.table.metrics import NUMBERS  # columns of their own (NULL: not measured)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

runs = Table(
    "runs",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),  # GitHub's run id
    Column("attempt", Integer, nullable=False),  # the newest attempt stored
    Column("sha", String(40), nullable=False),
    Column("ref", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),  # UTC
    Column("reused_from", BigInteger),
    Column("ingested_at", DateTime, nullable=False),  # UTC
    Index(None, "created_at", "id"),
)

configs = Table(
    "configs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("key", Text, nullable=False, unique=True),
    Column("identity", JSON, nullable=False),
)

points = Table(
    "points",
    metadata,
    Column("run_id", BigInteger, ForeignKey("runs.id"), primary_key=True),
    Column("config_id", Integer, ForeignKey("configs.id"), primary_key=True),
    Column("kind", String(16), primary_key=True),
    Column("conc", Integer, primary_key=True),
    Column("variant", Text, primary_key=True, server_default=""),
    Column("attempt", Integer, nullable=False),  # the attempt that measured these values
    Column("image", Text, nullable=False),
    Column("fingerprint", String(64)),
    # The results row less its identity (client, source, recipe, gpus, metrics or
    # accuracy) as compact JSON text: read back with one parse, compared as text.
    Column("data", Text, nullable=False),
    *(Column(name, Double) for name in NUMBERS),
    Index(None, "config_id", "run_id"),
)

series = Table(
    "series",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("config_id", Integer, ForeignKey("configs.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("variant", Text, nullable=False),
    Column("image", Text, nullable=False),
    UniqueConstraint("config_id", "kind", "variant", "image"),
)

# Which series each run holds a point of: kept by every ingest from the run's points.
run_series = Table(
    "run_series",
    metadata,
    Column("series_id", Integer, ForeignKey("series.id"), primary_key=True),
    Column("run_id", BigInteger, ForeignKey("runs.id"), primary_key=True),
    # The run's points of the series, packed (infx/history/packed.py): what a comparison
    # reads instead of the points' columns. Written with the row; NULL only in theory.
    Column("numbers", LargeBinary),
    Index(None, "run_id"),
)

# What vouches for a main run's rows (infx/history/receipts.py): the run receipt of the run
# that measured them (its own, or the pull request run a reused merge republished) and,
# for a reused merge, the merge receipt (who asked, the verdict, the approvals). A receipt
# is JSON text, as the run sealed it (schemas/receipt.schema.json).
receipts = Table(
    "receipts",
    metadata,
    Column("run_id", BigInteger, ForeignKey("runs.id"), primary_key=True),
    Column("kind", String(8), primary_key=True),  # run | merge
    Column("source_run", BigInteger, nullable=False),  # the run that measured the rows
    Column("digest", String(71), nullable=False),  # sha256:<hex> of the canonical receipt
    Column("data", Text, nullable=False),
    Column("stored_at", DateTime, nullable=False),  # UTC
)

verdicts = Table(
    "verdicts",
    metadata,
    Column("run_id", BigInteger, primary_key=True, autoincrement=False),  # the PR's run
    Column("attempt", Integer, primary_key=True),
    Column("pr", Integer, nullable=False),
    Column("head_sha", String(40), nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("digest", String(64), nullable=False),  # what an acknowledgement binds to
    Column("ack_by", String(16)),  # label | comment
    Column("ack_who", Text),  # who acknowledged
    Column("ack_at", DateTime),  # UTC
    Column("reused_by", BigInteger),  # the main run that republished this run's sweep
    Column("judged_at", DateTime, nullable=False),  # UTC
    Column("document", Text, nullable=False),  # the verdict JSON (results-verdict schema)
    Index(None, "pr"),
)
