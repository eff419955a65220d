"""`infx results changes`: steps in main's newest runs, reported with their commit range."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.results.verdict.changes import detect
from infx.results.verdict.steps import ranges
from infx.results.verdict.words import IMPROVED, REGRESSED
from tests.results.simulate import Sweeps

RUNS = 12


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def main_repo(tmp_path: Path, commits: int) -> tuple[Path, list[str]]:
    """A bare repository whose main has one commit per sweep run, plus one extra commit
    between the last two runs (the change that stepped)."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.email", "t@example.com")
    git(work, "config", "user.name", "t")
    shas = []
    for i in range(commits):
        if i == commits - 1:
            (work / "image.txt").write_text("new image\n")
            git(work, "add", "-A")
            git(work, "commit", "-qm", "Bump the vLLM image <b>@team</b>")
        (work / "n.txt").write_text(f"{i}\n")
        git(work, "add", "-A")
        git(work, "commit", "-qm", f"change {i}")
        shas.append(git(work, "rev-parse", "HEAD"))
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare, shas


def history(shas: list[str] | None = None, factor: float = 0.9) -> list[dict]:
    """RUNS main runs of 3 configs; config 1 drops to `factor` in the newest run."""
    sweeps = Sweeps(3, seed=9)
    docs = sweeps.history(RUNS, lambda i, c, r: factor if i == 1 and r == RUNS - 1 else 1.0)
    for r, doc in enumerate(docs):
        doc["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
        if shas:
            doc["run"]["sha"] = shas[r]
    return docs


def test_a_step_in_the_newest_run_is_found_and_quiet_series_are_not() -> None:
    steps = detect(history())
    assert steps and {s.label for s in steps} == {"m0 fp8 vllm · mi355x · 1024/1024 · tp2"}
    tput = [s for s in steps if s.metric.key == "tput_per_gpu"]
    assert len(tput) >= 6 and all(s.verdict == REGRESSED for s in tput)  # one run: most points
    assert all(-13 < s.change_pct < -7 for s in tput)
    latency = [s for s in steps if s.metric.key.endswith("_tpot")]
    assert latency and all(s.verdict == REGRESSED for s in latency)
    (key,) = ranges(steps)
    assert key == (1000 + RUNS - 2, 1000 + RUNS - 1)
    assert detect(history(factor=1.0)) == []


def test_an_improvement_is_reported_as_one() -> None:
    steps = detect(history(factor=1.12))
    assert steps and all(s.verdict == IMPROVED for s in steps)


def write(folder: Path, docs: list[dict]) -> Path:
    folder.mkdir(exist_ok=True)
    for doc in docs:
        (folder / f"{doc['run']['id']}.json").write_text(json.dumps(doc))
    return folder


def test_cli_reports_in_the_step_summary(tmp_path: Path) -> None:
    folder = write(tmp_path / "h", history())
    summary = tmp_path / "summary.md"
    outcome = CliRunner().invoke(
        cli,
        ["results", "changes", "--history", str(folder), "--no-issue"],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert outcome.exit_code == 0, outcome.output
    text = summary.read_text()
    assert "## Steps on main" in text and "(last good) and run [1011]" in text
    assert "| Throughput/GPU |" in text and "🔴 regressed" in text


def test_an_issue_names_the_commits_once(api, tmp_path: Path) -> None:
    bare, shas = main_repo(tmp_path, RUNS)
    api.state.git_remote = str(bare)
    folder = write(tmp_path / "h", history(shas))
    args = ["results", "changes", "--history", str(folder), "--issue"]
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 0, outcome.output
    (issue,) = api.state.issues.values()
    assert issue["labels"] == [{"name": "performance-change"}]
    assert issue["title"].startswith("Performance change on main at run 1011: ")
    body = issue["body"]
    assert body.startswith("<!-- infx:results-change run=1011 -->")
    assert f"/compare/{shas[-2]}...{shas[-1]}" in body
    assert "Bump the vLLM image &lt;b&gt;@&#8203;team&lt;/b&gt;" in body
    assert f"`{shas[-1][:7]}` change {RUNS - 1}" in body
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "already open" in again.output
    assert len(api.state.issues) == 1


def test_no_issue_unless_asked(api, tmp_path: Path) -> None:
    folder = write(tmp_path / "h", history())
    outcome = CliRunner().invoke(cli, ["results", "changes", "--history", str(folder)])
    assert outcome.exit_code == 0, outcome.output
    assert api.state.issues == {} and api.state.requests == []


def test_the_current_run_is_the_newest_point(tmp_path: Path) -> None:
    docs = history()
    folder = write(tmp_path / "h", docs[:-1])
    current = tmp_path / "results.json"
    current.write_text(json.dumps(docs[-1]))
    outcome = CliRunner().invoke(
        cli,
        ["results", "changes", "--history", str(folder), "--current", str(current), "--no-issue"],
    )
    assert outcome.exit_code == 0 and "(last good) and run [1011]" in outcome.output


def test_mains_history_through_the_api_and_the_current_run(api, tmp_path: Path) -> None:
    """The changes job: main's newest runs through the API, this run's table as the newest."""
    from tests.results.compare.test_compare_api import main_runs

    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    api.state.git_remote = str(empty)  # the runs' commits are unknown: no commit list
    docs = history()
    main_runs(api.state, [d["rows"] for d in reversed(docs[:-1])], start=1000)
    current = tmp_path / "results.json"
    current.write_text(json.dumps(docs[-1]))
    outcome = CliRunner().invoke(
        cli, ["results", "changes", "--current", str(current), "--no-issue", "--format", "json"]
    )
    assert outcome.exit_code == 0, outcome.output
    steps = json.loads(outcome.stdout)
    assert steps and {s["first_changed"]["id"] for s in steps} == {1011}
    assert {s["last_good"]["id"] for s in steps} == {
        1000
    }  # newest listed run: ids run newest first
