"""The verdict on real GPU noise (tests/data/gpu-noise-h200, see its PROVENANCE.md), through
the real commands: every job folder goes through `infx results process`, every run through
`collect`; main's 16 unchanged runs are ingested into an SQLite history, and each pull
request run (or three of one head, pooled with `--repeat`) is judged by `compare`.

#24's "done when": no unchanged (A/A) run and no pooled triple of A/A runs fails the gate;
the real change (eager attention instead of SDPA) fails it in at least 5 of its 6 single
runs and in every pooled triple of change runs. And where throughput triples along a curve
while TPOT barely moves, the comparison at matched interactivity says it is meaningless
there instead of giving a number.
"""

from __future__ import annotations

import itertools
import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli

DATA = Path(__file__).resolve().parents[2] / "data" / "gpu-noise-h200"
MAIN = [f"main{i:02d}" for i in range(16)]
AA = [f"aa{i:02d}" for i in range(8)]
CHANGE = [f"chg{i:02d}" for i in range(6)]
HEADS = {"main": None, "aa": "a" * 40, "change": "c" * 40}


def _invoke(args: list[str]) -> tuple[int, str]:
    outcome = CliRunner().invoke(cli, args, catch_exceptions=False)
    return outcome.exit_code, outcome.output


def _ok(args: list[str]) -> None:
    code, output = _invoke(args)
    assert code == 0, output


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """(the SQLite history of main's 16 runs, run name -> its results.json)."""
    return build(tmp_path_factory.mktemp("gpu-noise"))


def build(root: Path) -> tuple[Path, dict[str, Path]]:
    """Unpack, process, collect every run under `root`; ingest main's into an SQLite file."""
    for part in ("part1.tar.gz", "part2.tar.gz"):
        with tarfile.open(DATA / part) as archive:
            archive.extractall(root, filter="data")
    tables = {}
    for i, (kind, name) in enumerate(
        [("main", n) for n in MAIN] + [("aa", n) for n in AA] + [("change", n) for n in CHANGE]
    ):
        run_dir = root / "jobs" / kind / name
        for job in sorted(p for p in run_dir.iterdir() if p.is_dir()):
            _ok(
                [
                    "results",
                    "process",
                    "--row",
                    (job / "row.json").read_text(),
                    "--results-dir",
                    str(job),
                ]
            )
        head = HEADS[kind]
        sha = head or f"{i:040x}"
        ref = "refs/heads/main" if head is None else "refs/pull/9/merge"
        out = root / "tables" / name
        _ok(
            [
                "results",
                "collect",
                str(run_dir),
                "--out-dir",
                str(out),
                "--run-id",
                str(7000 + i),
                "--sha",
                sha,
                "--ref",
                ref,
            ]
        )
        table = out / "results.json"
        doc = json.loads(table.read_text())
        doc["run"]["created_at"] = f"2026-03-{1 + i:02d}T12:00:00Z"
        table.write_text(json.dumps(doc))
        tables[name] = table
    history = root / "history.sqlite"
    for name in MAIN:
        _ok(["results", "ingest", str(tables[name]), "--history", f"sqlite:///{history}"])
    return history, tables


def _judge(real: tuple[Path, dict[str, Path]], names: tuple[str, ...]) -> tuple[int, dict]:
    history, tables = real
    repeats = [a for n in names[1:] for a in ("--repeat", str(tables[n]))]
    code, output = _invoke(
        [
            "results",
            "compare",
            str(tables[names[0]]),
            *repeats,
            "--history",
            str(history),
            "--history-runs",
            "16",
            "--format",
            "json",
        ]
    )
    assert code in (0, 1), output
    doc, _ = json.JSONDecoder().raw_decode(output[output.index("{") :])  # stderr follows
    return code, doc


def test_unchanged_runs_and_pooled_triples_of_them_never_fail_the_gate(real) -> None:
    singles = {n: _judge(real, (n,))[0] for n in AA}
    assert singles == dict.fromkeys(AA, 0)
    triples = {t: _judge(real, t)[0] for t in itertools.combinations(AA, 3)}
    assert sorted(t for t, code in triples.items() if code) == []
    assert len(triples) == 56


def test_the_eager_change_fails_in_five_of_six_runs_and_every_pooled_triple(real) -> None:
    singles = {n: _judge(real, (n,)) for n in CHANGE}
    failing = [n for n, (code, _) in singles.items() if code == 1]
    assert len(failing) >= 5, failing
    for _, doc in singles.values():  # the PR's runs counted; the noise model's power said
        assert doc["method"]["pr_runs"] == 1
    triples = {t: _judge(real, t) for t in itertools.combinations(CHANGE, 3)}
    assert [t for t, (code, _) in triples.items() if code != 1] == []
    assert {doc["method"]["pr_runs"] for _, doc in triples.values()} == {3}


def test_repeats_of_another_head_are_refused(real) -> None:
    history, tables = real
    code, output = _invoke(
        [
            "results",
            "compare",
            str(tables["aa00"]),
            "--repeat",
            str(tables["chg00"]),
            "--history",
            str(history),
        ]
    )
    assert code == 2
    assert "different commits, not repeats" in output


def test_matched_interactivity_on_this_engine_says_it_is_meaningless(real) -> None:
    """Throughput triples along these curves while TPOT barely moves: the comparison at
    matched interactivity swung -61 % to +62 % between unchanged runs. It gives no number
    and says why; each within-noise config says what it could not have seen."""
    for name in AA[:3]:
        _, doc = _judge(real, (name,))
        for config in doc["configs"]:
            assert config["curve"]["change_pct"] is None, config["curve"]
            assert config["curve"]["verdict"] == "n/a"
            assert "wider than" in config["curve"]["why"]
    history, tables = real
    code, comment = _invoke(["results", "compare", str(tables["aa00"]), "--history", str(history)])
    assert code == 0, comment
    assert comment.count("at matched interactivity: not meaningful here, its band is") == 2
    assert "n/a (not meaningful here)" in comment
    assert comment.count("cannot be told from noise with one run of this PR") == 2
