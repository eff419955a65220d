"""`infx site build` through its edges: the history read from SQLite and PostgreSQL, the
changelog read from git, the verdict documents, the files written."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.errors import UsageError
from infx.settings import Settings
from infx.site.changelog import read_ranges
from infx.site.facts import load_verdicts
from infx.site.read import history_url, read_history
from tests.history.postgres import create_database
from tests.site.conftest import L1B_LINK, MAIN_RUNS, OTHER_LINK, Repo, git, ingest

_names = itertools.count()


def document(path: Path) -> dict:
    """A data file's document (the JSON after `INFX_DATA[key]=`)."""
    return json.loads(path.read_text().split("]=", 1)[1].rstrip(";\n"))


def build(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(cli, ["site", "build", *args])
    return outcome.exit_code, outcome.output


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_history(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.sqlite'}"
    return create_database(request.getfixturevalue("postgres"), f"site{next(_names)}")


def test_the_history_reads_the_same_from_both_databases(
    empty_history: str, tables: dict[str, Path]
) -> None:
    ingest(empty_history, tables, MAIN_RUNS[:3])
    read = read_history(empty_history)
    assert [r.id for r in read.runs] == [5000, 5001, 5002]
    assert read.runs[0].created_at == "2026-03-01T12:00:00Z"
    assert sorted(c.label for c in read.configs) == [
        "l05b bf16 vllm · h200 · 512/128 · tp1", "l1b bf16 vllm · h200 · 512/128 · tp1"]  # fmt: skip
    first = json.loads(tables[MAIN_RUNS[0]].read_text())["rows"][0]
    config = next(c for c in read.configs if c.identity["model-prefix"] == "l05b")
    series = config.points[first["identity"]["conc"]]
    assert series.runs == [0, 1, 2] and series.images[0] == "gpunoise/engine:sdpa"
    metrics = first["metrics"]
    assert series.values["tput_per_gpu"][0] == pytest.approx(metrics["tput_per_gpu"])
    assert series.values["intvty"][0] == pytest.approx(metrics["median_intvty"])
    assert series.values["p99_tpot"][0] == pytest.approx(metrics["p99_tpot"])


def test_a_missing_history_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no SQLite file"):
        history_url(str(tmp_path / "none.sqlite"), Settings(), tmp_path)
    code, output = build("--history", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "s"))
    assert code == 2 and "no SQLite file" in output
    assert not (tmp_path / "none.sqlite").exists()


def test_ranges_hold_the_entries_a_commit_range_added(bench_repo: Repo, tmp_path: Path) -> None:
    shas = bench_repo.shas
    quiet = (shas["main14"], shas["main15"])
    change = (shas["main15"], shas["chg00"])
    gone = (shas["chg00"], "f" * 40)
    found, notes = read_ranges(bench_repo.path, [quiet, change, gone])
    assert found[quiet].entries == ()
    links = [e.pr_link for e in found[change].entries or ()]
    assert links == [L1B_LINK, OTHER_LINK]
    l1b = (found[change].entries or ())[0]
    assert [m.key for m in l1b.masters] == ["l1b-bf16-h200-vllm"]
    assert l1b.scenario_types == ("fixed-seq-len",)
    assert found[gone].entries is None and "is not in" in found[gone].note
    assert notes == [
        "1 main run commit(s) are not in --repo-dir (fetch its history, e.g. "
        "`git fetch --unshallow`): steps in those ranges are not explained"
    ]
    elsewhere, notes = read_ranges(tmp_path, [change])
    assert elsewhere[change].entries is None and "not a git repository" in notes[0]


def verdict_doc(verdict: str, ack: dict | None) -> dict:
    return {
        "format": "infx-verdict/1",
        "verdict": verdict,
        "gate": {"passed": verdict != "regressed" or ack is not None,
                 "failing": verdict == "regressed", "acknowledged": ack},
        "points": {"improved": 0, "regressed": 1, "within-noise": 7, "new": 0, "missing": 0},
        "configs_by_verdict": {"regressed": 1, "coverage-lost": 0, "improved": 0,
                               "within-noise": 1, "new": 0},
        "method": {"threshold_pct": 2.0, "alpha": 0.0005, "min_history": 5,
                   "default_noise_pct": 2.0, "history_runs": 10, "checks": ["tput_per_gpu"]},
        "notes": [],
        "configs": [],
    }  # fmt: skip


def test_verdict_documents_are_named_by_their_pr(tmp_path: Path) -> None:
    folder = tmp_path / "verdicts"
    folder.mkdir()
    ack = {"by": "comment", "who": "maint", "url": "https://github.com/acme/bench/pull/12#c"}
    (folder / "pr-12-run-5100.json").write_text(json.dumps(verdict_doc("regressed", ack)))
    (folder / "pr-13.json").write_text(json.dumps(verdict_doc("within-noise", None)))
    records = load_verdicts(folder)
    assert [(r.pr, r.run_id, r.name) for r in records] == [
        (12, 5100, "pr-12-run-5100.json"), (13, None, "pr-13.json")]  # fmt: skip
    (folder / "notes.json").write_text("{}")
    with pytest.raises(UsageError, match=r"name a verdict document pr-<N>\.json"):
        load_verdicts(folder)
    (folder / "notes.json").rename(folder / "pr-14.json")
    with pytest.raises(UsageError, match=r"pr-14\.json: not an infx verdict"):
        load_verdicts(folder)


def test_the_command_writes_every_view_and_rewrites_in_place(
    changed_history: Path, bench_repo: Repo, tables: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "site"
    (out / "data" / "config").mkdir(parents=True)
    (out / "data" / "config" / "stale.js").write_text("old")
    (out / "CNAME").write_text("keep me")
    verdicts = tmp_path / "verdicts"
    verdicts.mkdir()
    (verdicts / "pr-7.json").write_text(json.dumps(verdict_doc("within-noise", None)))
    pr = tmp_path / "pr-7.json"
    shutil.copy(tables["main03"], pr)
    code, output = build("--history", str(changed_history), "--out", str(out), "--repo-dir",
                         str(bench_repo.path), "--verdicts", str(verdicts),
                         "--pr-results", str(pr))  # fmt: skip
    assert code == 0, output
    assert "wrote" in output and "2 Pareto page(s), 2 config page(s), 1 PR overlay(s)" in output
    assert not (out / "data" / "config" / "stale.js").exists()
    assert (out / "CNAME").read_text() == "keep me"
    for name in ("index.html", "app.js", "charts.js", "views.js", "history.js", "overlay.js",
                 "style.css", ".nojekyll", "data/index.js", "data/coverage.js",
                 "data/verdicts.js", "data/pareto/l1b--512x128.js"):  # fmt: skip
        assert (out / name).is_file(), name
        assert (out / name).stat().st_mode & 0o777 == 0o644, name
    index = document(out / "data" / "index.js")
    assert len(index["runs"]) == 22 and index["verdicts"] == 1
    # main03's table names no pull request (a main run): the number comes from the name
    assert index["prs"][0]["pr"] == 7
    assert not list(out.rglob("*.tmp"))


@pytest.mark.parametrize("given", ["option", "environment"])
def test_a_relative_history_is_read_from_where_the_command_runs(
    main_history: Path, bench_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    given: str,
) -> None:  # fmt: skip
    """`--history main.sqlite --repo-dir ../bench` looked for ../bench/main.sqlite: a
    relative --history (or INFX_HISTORY_URL) is read from where the command runs, as every
    other command reads it, not from the changelog's repository."""
    here = tmp_path / "work"
    here.mkdir()
    shutil.copy(main_history, here / "main.sqlite")
    monkeypatch.chdir(here)
    args = ["site", "build", "--out", "site", "--repo-dir", str(bench_repo.path)]
    if given == "option":
        outcome = CliRunner().invoke(cli, [*args, "--history", "main.sqlite"])
    else:
        outcome = CliRunner().invoke(cli, args, env={"INFX_HISTORY_URL": "sqlite:///main.sqlite"})
    assert outcome.exit_code == 0, outcome.output
    assert (here / "site" / "index.html").is_file()
    assert not (bench_repo.path / "main.sqlite").exists()


@pytest.mark.parametrize("number", ["99999999999999999999", "0"])
def test_a_pr_number_the_site_cannot_link_is_refused(
    main_history: Path, tables: dict[str, Path], tmp_path: Path, number: str
) -> None:
    """refs/pull/99999999999999999999/merge built an overlay whose link (the number rounded
    by JavaScript, 100000000000000000000) opened nothing; PR 0's route was no route."""
    doc = json.loads(tables["main03"].read_text())
    doc["run"]["ref"] = f"refs/pull/{number}/merge"
    pr = tmp_path / "results.json"
    pr.write_text(json.dumps(doc))
    code, output = build("--history", str(main_history), "--out", str(tmp_path / "site"),
                         "--pr-results", str(pr))  # fmt: skip
    assert code == 2 and output.count("\n") == 1, output
    assert f"pull request #{number} is not a number the site can link" in output
    verdicts = tmp_path / "verdicts"
    verdicts.mkdir()
    (verdicts / f"pr-{number}.json").write_text(json.dumps(verdict_doc("within-noise", None)))
    with pytest.raises(UsageError, match=f"pull request #{number} is not"):
        load_verdicts(verdicts)
    compared = CliRunner().invoke(
        cli, ["results", "compare", str(tables["main03"]), "--history", str(main_history),
              "--pr", number]
    )  # fmt: skip
    assert compared.exit_code == 2 and "--pr" in compared.output


def test_the_documented_synopsis_is_the_command() -> None:
    import re

    from infx.cli.site import build as command
    from tests.readme import readme_block

    block = readme_block("sh", "infx site build")
    documented = set(re.findall(r"--[a-z][a-z-]*", block))
    options = {o for p in command.params for o in p.opts if o.startswith("--")}
    assert documented == options


def test_the_site_names_neither_the_build_machine_s_paths_nor_the_database_s_address(
    empty_history: str, tables: dict[str, Path], bench_repo: Repo, tmp_path: Path
) -> None:
    """Issue 31, case 11: the published files said where the history lived (an SQLite path
    on the build machine; for PostgreSQL user@host:port/db)."""
    from sqlalchemy.engine import make_url

    ingest(empty_history, tables, MAIN_RUNS[:2])
    out = tmp_path / "published"
    code, output = build("--history", empty_history, "--out", str(out),
                         "--repo-dir", str(bench_repo.path))  # fmt: skip
    assert code == 0, output
    # a repository without the runs' commits, and a folder that is none: the notes the site
    # publishes said where each was (`... are not in /home/runner/work/...`)
    (tmp_path / "fresh").mkdir()
    git(tmp_path / "fresh", "init", "-q")
    for where in ("fresh", "no-repo"):
        (tmp_path / where).mkdir(exist_ok=True)
        code, output = build("--history", empty_history, "--out", str(tmp_path / f"site-{where}"),
                             "--repo-dir", str(tmp_path / where))  # fmt: skip
        assert code == 0 and "--repo-dir" in output, output
    url = make_url(empty_history)
    secret = [str(tmp_path), str(bench_repo.path), url.database]
    if url.host:
        secret += [f"{url.host}:{url.port}", f"{url.username}@", f"/{url.database}"]
    sites = (out, tmp_path / "site-fresh", tmp_path / "site-no-repo")
    text = "\n".join(p.read_text() for site in sites for p in site.rglob("*") if p.is_file())
    for word in secret:
        assert word not in text, word
    kind = "PostgreSQL" if url.host else "SQLite"
    assert f"main's {kind} history" in document(out / "data" / "index.js")["source"]
