"""The verdicts table: `results compare --pr N` against the history database records the
verdict of each judged pull request run attempt (head, verdict, gate, the digest its
acknowledgement binds to, who acknowledged it and when, the verdict JSON); the ingest of a
main run that republished the run's sweep marks it reused; the results site reads it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.history import open_history
from infx.history.verdicts import read
from infx.schemas import errors as schema_errors
from tests.history.tables import sql
from tests.results.simulate import Sweeps

PR, HEAD = 7, "f" * 40


def _history(url: str, tmp_path: Path) -> Sweeps:
    sweeps = Sweeps(2, seed=8)
    for r, doc in enumerate(sweeps.history(6)):
        doc["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
        path = tmp_path / f"main{r}.json"
        path.write_text(json.dumps(doc))
        stored = CliRunner().invoke(cli, ["results", "ingest", str(path), "--history", url])
        assert stored.exit_code == 0, stored.output
    return sweeps


def _pr_table(tmp_path: Path, sweeps: Sweeps, factor: float, attempt: int = 1) -> Path:
    doc = sweeps.run(4242, lambda i, c: factor if i == 0 else 1.0)
    doc["run"] = {**doc["run"], "ref": f"refs/pull/{PR}/merge", "attempt": attempt}
    path = tmp_path / "pr.json"
    path.write_text(json.dumps(doc))
    return path


def _compare(table: Path, url: str):
    args = ["results", "compare", str(table), "--history", url, "--pr", str(PR)]
    return CliRunner().invoke(cli, [*args, "--check-sha", HEAD])


def test_compare_records_the_verdict_and_ingest_marks_it_reused(
    api, history_url: str, tmp_path: Path
) -> None:
    api.state.add_pull(PR, head_sha=HEAD)
    api.state.permissions["maint"] = "write"
    sweeps = _history(history_url, tmp_path)
    table = _pr_table(tmp_path, sweeps, 0.7)
    failed = _compare(table, history_url)
    assert failed.exit_code == 1, failed.output
    assert "recorded the verdict of run 4242 attempt 1" in failed.stderr
    api.state.add_comment(PR, "maint", "/ack-regression", 950, "MEMBER")
    passed = _compare(table, history_url)  # the job re-run: the same attempt, replaced
    assert passed.exit_code == 0, passed.output
    with open_history(history_url) as history:
        (found,) = read(history)
    assert (found.pr, found.run_id, found.attempt, found.head_sha) == (PR, 4242, 1, HEAD)
    assert (found.verdict, found.passed, found.ack_by, found.ack_who) == (
        "regressed",
        True,
        "comment",
        "maint",
    )
    assert found.ack_at is not None and len(found.digest) == 16
    assert found.reused_by is None and schema_errors("results-verdict", found.document) == []
    assert any(f"infx:verdict {found.digest}" in c["body"] for c in api.state.comments)
    # Main reuses the pull request's sweep: its table republished as main run 5100.
    reused = json.loads(table.read_text())
    reused["run"] = {
        **reused["run"],
        "id": 5100,
        "ref": "refs/heads/main",
        "sha": "c" * 40,
        "reused_from": 4242,
        "created_at": "2026-12-01T00:00:00Z",
    }
    path = tmp_path / "main-reused.json"
    path.write_text(json.dumps(reused))
    stored = CliRunner().invoke(cli, ["results", "ingest", str(path), "--history", history_url])
    assert stored.exit_code == 0, stored.output
    with open_history(history_url) as history:
        (found,) = read(history)
    assert found.reused_by == 5100


def test_a_history_that_cannot_take_the_verdict_is_a_warning(api, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    api.state.add_pull(PR, head_sha=HEAD)
    sweeps = _history(url, tmp_path)
    sql(url, "DROP TABLE verdicts")
    outcome = _compare(_pr_table(tmp_path, sweeps, 1.0), url)
    assert outcome.exit_code == 0, outcome.output
    assert "infx: warning: verdict not recorded: cannot record the verdict in" in outcome.stderr


def test_a_folder_history_records_nothing(api, tmp_path: Path) -> None:
    api.state.add_pull(PR, head_sha=HEAD)
    sweeps = Sweeps(2, seed=8)
    folder = tmp_path / "history"
    folder.mkdir()
    for doc in sweeps.history(4):
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    outcome = _compare(_pr_table(tmp_path, sweeps, 1.0), str(folder))
    assert outcome.exit_code == 0 and "recorded" not in outcome.stderr


def test_the_site_reads_the_verdicts_table(api, tmp_path: Path) -> None:
    """Without --verdicts the verdict page comes from the table."""
    from infx.site.facts import stored_verdicts

    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    api.state.add_pull(PR, head_sha=HEAD)
    sweeps = _history(url, tmp_path)
    assert stored_verdicts(url) is None
    _compare(_pr_table(tmp_path, sweeps, 0.7), url)
    _compare(_pr_table(tmp_path, sweeps, 0.7, attempt=2), url)
    records = stored_verdicts(url)
    assert records is not None
    assert [(r.pr, r.run_id, r.name) for r in records] == [
        (PR, 4242, "pr-7-run-4242-attempt-2"),
        (PR, 4242, "pr-7-run-4242-attempt-1"),
    ]
    assert records[0].doc["verdict"] == "regressed"
