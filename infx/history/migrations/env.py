"""Alembic's entry point: infx runs migrations on a connection it opened and locked."""

from alembic import context

from infx.history.tables import metadata

context.configure(connection=context.config.attributes["connection"], target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
