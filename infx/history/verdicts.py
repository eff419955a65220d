"""The verdicts table: one row per judged pull request run attempt, written by `infx results
compare --pr N` when its history is the database, marked reused when a main run that
republished that run's sweep is ingested, read by the results site's verdict page."""

from __future__ import annotations

import json

from infx.errors import HistoryError
from infx.history.database import dialect_insert, shown
from infx.history.rows import now
from infx.history.store import History, open_history
from infx.results.compare.rules import Verdict

# SQLAlchemy, and infx.history.tables built on it, load inside the functions that query
# (start-up time).


def save(url: str, found: Verdict) -> str:
    """Record the verdict in the history at `url`; what happened, as one line. A history
    that cannot take it (read-only, unreachable) is a warning: the verdict stands."""
    try:
        with open_history(url) as history:
            record(history, found)
    except HistoryError as exc:
        return f"infx: warning: verdict not recorded: {exc}"
    return f"recorded the verdict of run {found.run_id} attempt {found.attempt} in {shown(url)}"


def record(history: History, found: Verdict) -> Verdict:
    """Store a verdict (a re-run of the comparison for the same run attempt replaces it);
    a main run already stored as reusing this run marks it reused."""
    from sqlalchemy import select

    from infx.history.tables import runs, verdicts

    values = {
        "pr": found.pr,
        "head_sha": found.head_sha,
        "verdict": found.verdict,
        "passed": found.passed,
        "digest": found.digest,
        "ack_by": found.ack_by,
        "ack_who": found.ack_who,
        "ack_at": found.ack_at,
        "judged_at": found.judged_at or now(),
        "document": json.dumps(found.document, separators=(",", ":"), allow_nan=False),
    }
    with history.connection("cannot record the verdict in", write=True) as conn:
        reused = conn.execute(
            select(runs.c.id).where(runs.c.reused_from == found.run_id).order_by(runs.c.id)
        ).first()
        values["reused_by"] = reused[0] if reused else None
        insert = dialect_insert(conn)(verdicts).values(
            run_id=found.run_id, attempt=found.attempt, **values
        )
        conn.execute(
            insert.on_conflict_do_update(index_elements=["run_id", "attempt"], set_=values)
        )
    return found


def read(history: History) -> list[Verdict]:
    """Every verdict, newest pull request first, then newest run and attempt."""
    from sqlalchemy import select

    from infx.history.tables import verdicts

    with history.connection("cannot read the verdicts of") as conn:
        found = conn.execute(
            select(verdicts).order_by(
                verdicts.c.pr.desc(), verdicts.c.run_id.desc(), verdicts.c.attempt.desc()
            )
        ).all()
    return [
        Verdict(
            pr=r.pr,
            run_id=r.run_id,
            attempt=r.attempt,
            head_sha=r.head_sha,
            verdict=r.verdict,
            passed=bool(r.passed),
            digest=r.digest,
            document=json.loads(r.document),
            ack_by=r.ack_by,
            ack_who=r.ack_who,
            ack_at=r.ack_at,
            reused_by=r.reused_by,
            judged_at=r.judged_at,
        )
        for r in found
    ]
