"""Receipts (issue 25, provenance 7): the collect job seals what a run published, a reusing
push seals who asked and the verdict, and ingest stores both beside the rows only when they
form one chain with the table stored. Each break is refused, naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx import schemas
from infx.cli import cli
from infx.reuse.receipt import digest, sha256
from tests.conftest import GitRepo
from tests.github.fake_api import FakeGitHub
from tests.github.scenario import RUN, green_pr, inside
from tests.history.tables import curve, table

IMAGE = "vllm/vllm-openai-rocm:v0.11.0"
PULLED = "vllm/vllm-openai-rocm@sha256:" + "ab" * 32


def job(folder: Path, conc: int, image: str = IMAGE, pulled: str | None = PULLED) -> None:
    """A benchmark job's result folder as benchmark-tmpl.yml leaves it."""
    folder.mkdir(parents=True)
    rows = curve(1000, concs=(conc,))
    for row in rows:
        row["recipe"]["image"] = image
    (folder / "infx-result.json").write_text(json.dumps({"format": "infx-results/1", "rows": rows}))
    (folder / f"llama_conc{conc}.json").write_text('{"client": "output"}\n')
    if pulled is not None:
        (folder / "image-digest.txt").write_text(pulled + "\n")


def actions_env(tmp: Path, run_id: int = 5000) -> dict[str, str]:
    event = tmp / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"sha": "a1" * 20}}}))
    return {
        "GITHUB_REPOSITORY": "acme/bench",
        "GITHUB_RUN_ID": str(run_id),
        "GITHUB_RUN_ATTEMPT": "2",
        "GITHUB_SHA": "b2" * 20,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_WORKFLOW_REF": "acme/bench/.github/workflows/run-sweep.yml@refs/pull/7/merge",
    }


@pytest.fixture
def collected(repo: GitRepo) -> Path:
    """A collect job's workspace: two jobs' folders and the table, the metadata, a manifest."""
    repo.commit("workflow", **{".github__workflows__run-sweep.yml": "on: push\n"})
    results = repo.path / "results_bmk"
    job(results / "bmk_llama_0_0", 4)
    job(results / "bmk_llama_0_1", 8)
    (results / "results.json").write_text(json.dumps(table(5000, curve(1000))))
    (repo.path / "changelog-metadata.json").write_text('{"entries": []}\n')
    (repo.path / "sweep-manifest.json").write_text(json.dumps({"digest": "sha256:" + "0" * 64}))
    return repo.path


def write_receipt(root: Path, *extra: str) -> tuple[object, dict]:
    args = [
        "receipt", "run", "--out", "out/receipt.json", "--manifest", "sweep-manifest.json",
        "--artifact", "results_bmk=results_bmk", "--artifact", "eval_results_all=eval_results_all",
        "--artifact", "changelog-metadata=changelog-metadata.json", *extra,
    ]  # fmt: skip
    with inside(root):
        result = CliRunner().invoke(cli, args, env=actions_env(root))
    doc = json.loads((root / "out" / "receipt.json").read_text()) if result.exit_code == 0 else {}
    return result, doc


def test_the_collect_job_seals_every_member_the_run_and_the_images(collected: Path) -> None:
    result, receipt = write_receipt(collected)
    assert result.exit_code == 0, result.output
    assert schemas.errors("receipt", receipt) == []
    assert receipt["run"] == {
        "id": 5000, "attempt": 2, "event": "pull_request",
        "workflow": ".github/workflows/run-sweep.yml", "sha": "b2" * 20,
        "head_sha": "a1" * 20, "ref": "refs/pull/7/merge",
    }  # fmt: skip
    members = receipt["artifacts"]["results_bmk"]
    assert set(members) == {
        "results.json",
        "bmk_llama_0_0/infx-result.json", "bmk_llama_0_0/llama_conc4.json",
        "bmk_llama_0_0/image-digest.txt", "bmk_llama_0_1/infx-result.json",
        "bmk_llama_0_1/llama_conc8.json", "bmk_llama_0_1/image-digest.txt",
    }  # fmt: skip
    assert members["results.json"] == sha256((collected / "results_bmk/results.json").read_bytes())
    assert receipt["artifacts"]["changelog-metadata"] == {
        "changelog-metadata.json": sha256(b'{"entries": []}\n')
    }
    assert "eval_results_all" not in receipt["artifacts"]  # nothing was evaluated
    assert receipt["manifest"]["digest"] == "sha256:" + "0" * 64
    assert receipt["code"][".github/workflows/run-sweep.yml"] == sha256(b"on: push\n")
    assert receipt["images"] == [
        {"job": "results_bmk/bmk_llama_0_0", "image": IMAGE, "digest": PULLED},
        {"job": "results_bmk/bmk_llama_0_1", "image": IMAGE, "digest": PULLED},
    ]


def test_a_rerun_seals_the_layers_it_merged(collected: Path) -> None:
    source = collected / "source"
    job(source / "jobs" / "bmk_llama_0_2", 16, pulled=None)
    result, receipt = write_receipt(collected, "--previous", f"jobs={source / 'jobs'}")
    assert result.exit_code == 0, result.output
    assert set(receipt["previous"]["jobs"]) == {
        "bmk_llama_0_2/infx-result.json",
        "bmk_llama_0_2/llama_conc16.json",
    }
    assert {"job": "previous/jobs/bmk_llama_0_2", "image": IMAGE, "digest": None} in receipt[
        "images"
    ]


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (lambda r: (r / "bmk_llama_0_0/llama_conc4.json").write_text("{}"), "other bytes"),
        (lambda r: (r / "bmk_llama_0_0/extra.json").write_text("{}"), "not sealed"),
        (lambda r: (r / "results.json").unlink(), "sealed, not in the artifact"),
    ],
    ids=["changed", "added", "removed"],
)
def test_receipt_check_names_each_member_that_differs(collected: Path, tamper, says) -> None:
    write_receipt(collected)
    args = [
        "receipt",
        "check",
        "--receipt",
        "out/receipt.json",
        "--artifact",
        "results_bmk=results_bmk",
    ]
    with inside(collected):
        assert CliRunner().invoke(cli, args).exit_code == 0
        tamper(collected / "results_bmk")
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and says in result.output and "Traceback" not in result.output


def test_receipt_run_outside_actions_is_one_line(collected: Path) -> None:
    with inside(collected):
        result = CliRunner().invoke(
            cli, ["receipt", "run", "--out", "r.json"], env={"GITHUB_RUN_ID": ""}
        )
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GITHUB_RUN_ID", "abc"),
        ("GITHUB_RUN_ID", "0"),
        ("GITHUB_RUN_ATTEMPT", "-1"),
        ("GITHUB_RUN_ID", str(2**63)),  # more than the history, beside whose rows it goes
    ],
)
def test_a_run_id_or_attempt_that_is_not_a_whole_number_is_one_line(
    collected: Path, name: str, value: str
) -> None:
    """`int("abc")` crashed (exit 3); attempt -1 wrote a receipt its own check refuses."""
    with inside(collected):
        env = {**actions_env(collected), name: value}
        result = CliRunner().invoke(cli, ["receipt", "run", "--out", "r.json"], env=env)
    assert result.exit_code == 2, result.output
    assert f"{name} must be a whole number from 1, not {value!r}" in result.output
    assert not (collected / "r.json").exists()


# --- storing beside the rows ----------------------------------------------------------------


def sealed_table(run_id: int, event: str = "push", extra: dict | None = None) -> tuple[bytes, dict]:
    """A run's table and the issuer's receipt of the run (`extra`: more artifacts)."""
    from datetime import UTC, datetime

    from infx.github.client import Run
    from infx.reuse.issue_facts import _table
    from infx.reuse.issuer import Checkout, IssueFacts, Issuer, issued_receipt

    data = json.dumps(table(run_id, curve(1000))).encode()
    run = Run(run_id, "c3" * 20, event, "completed", "success", ".github/workflows/run-sweep.yml",
              1, "", datetime(2026, 1, 1, tzinfo=UTC), "main", "acme/bench")  # fmt: skip
    members = {"results_bmk": {"results.json": sha256(data)}, **(extra or {})}
    issuer = Issuer(".github/workflows/sweep-receipt.yml", "refs/heads/main", "e" * 40, 9, 1)
    facts = IssueFacts("acme/bench", issuer, run, Checkout("refs/heads/main", "c3" * 20, "event"),
                       None, None, members, {}, None, [], {},
                       _table({"results.json": data}))  # fmt: skip
    return data, issued_receipt(facts)


def store(tmp: Path, run_id: int, table_bytes: bytes, *docs: dict) -> object:
    folder = tmp / f"receipts-{len(list(tmp.glob('receipts-*')))}"
    folder.mkdir()
    for index, doc in enumerate(docs):
        (folder / f"{index}.json").write_text(json.dumps(doc))
    (tmp / "results.json").write_bytes(table_bytes)
    args = ["receipt", "store", str(folder), "--run", str(run_id), "--table", str(tmp / "results.json"),
            "--history", str(tmp / "history.sqlite"), "--no-fetch"]  # fmt: skip
    return CliRunner().invoke(cli, args)


def ingest(tmp: Path, doc: dict) -> None:
    (tmp / "table.json").write_text(json.dumps(doc))
    args = ["results", "ingest", str(tmp / "table.json"), "--history", str(tmp / "history.sqlite")]
    assert CliRunner().invoke(cli, args).exit_code == 0


def test_a_run_receipt_is_stored_beside_the_rows_it_sealed(tmp_path: Path) -> None:
    from infx.history.receipts import stored_run

    data, receipt = sealed_table(6000)
    ingest(tmp_path, json.loads(data))
    result = store(tmp_path, 6000, data, receipt)
    assert result.exit_code == 0, result.output
    stored = stored_run(f"sqlite:///{tmp_path / 'history.sqlite'}", 6000)
    assert stored is not None and stored.receipts == {"run": receipt}
    assert stored.digests == {"run": digest(receipt)}
    # Storing again replaces, never duplicates.
    assert store(tmp_path, 6000, data, receipt).exit_code == 0


def test_a_receipt_file_is_not_believed_unless_asked(tmp_path: Path, api: FakeGitHub) -> None:
    """By default the issuer's receipt comes from GitHub, whatever files were given: a
    receipt made by hand (here one the issuer's code would write, for a run the issuer
    never sealed) is not stored. `--no-fetch` believes it, as documented."""
    from infx.history.receipts import stored_run

    data, receipt = sealed_table(6000)
    ingest(tmp_path, json.loads(data))
    folder = tmp_path / "receipts"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(receipt))
    (tmp_path / "results.json").write_bytes(data)
    args = ["receipt", "store", str(folder), "--run", "6000", "--table",
            str(tmp_path / "results.json"), "--history", str(tmp_path / "history.sqlite")]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert stored_run(f"sqlite:///{tmp_path / 'history.sqlite'}", 6000).receipts == {}
    assert CliRunner().invoke(cli, [*args, "--no-fetch"]).exit_code == 0


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("another table", "the table stored is not the one run 6000's receipt sealed"),
        ("another run", "need the issuer's receipt of run 6000 alone"),
        ("not stored", "run 6002 is not in the history: store its results first"),
        ("two run receipts", "two receipts of one run, or two merge receipts"),
        (
            "the run's own claim",
            "is that run's own claim, not the issuer's: it vouches for nothing",
        ),
    ],
)
def test_receipts_that_do_not_chain_with_the_table_are_refused(tmp_path: Path, case, says) -> None:
    data, receipt = sealed_table(6000)
    ingest(tmp_path, json.loads(data))
    if case == "another table":
        result = store(tmp_path, 6000, data.replace(b"1000", b"2000"), receipt)
    elif case == "another run":
        other_data, other = sealed_table(6001)
        ingest(tmp_path, json.loads(data))
        result = store(tmp_path, 6000, other_data, other)
    elif case == "not stored":
        data2, receipt2 = sealed_table(6002)
        result = store(tmp_path, 6002, data2, receipt2)
    elif case == "two run receipts":
        result = store(tmp_path, 6000, data, receipt, receipt)
    else:
        claim = {k: v for k, v in receipt.items() if k not in ("issuer", "checkout", "table",
                                                               "archives", "claim")}  # fmt: skip
        claim["run"] = {k: v for k, v in claim["run"].items() if k in ("id", "attempt", "event",
                        "workflow", "sha", "head_sha", "ref")}  # fmt: skip
        result = store(tmp_path, 6000, data, claim)
    assert result.exit_code == 1, result.output
    assert says in result.output and "Traceback" not in result.output


def test_a_reusing_run_s_receipt_alone_does_not_vouch_for_its_table(tmp_path: Path) -> None:
    """A push that reused republished a PR run's table; the issuer sealed its merge receipt.
    With that merge receipt lost (the ingest's download of it may fail and go on), its own
    receipt alone said the push measured the table."""
    merge = {"reuse-receipt": {"reuse-receipt.json": "sha256:" + "d" * 64}}
    data, receipt = sealed_table(6000, extra=merge)
    ingest(tmp_path, json.loads(data))
    result = store(tmp_path, 6000, data, receipt)
    assert result.exit_code == 1, result.output
    assert "its receipt seals a merge receipt, so it reused another run's table" in result.output


def test_a_receipt_that_breaks_its_schema_is_refused(tmp_path: Path) -> None:
    data, receipt = sealed_table(6000)
    ingest(tmp_path, json.loads(data))
    receipt["images"] = "none"
    result = store(tmp_path, 6000, data, receipt)
    assert result.exit_code == 2 and "breaks its schema at images" in result.output


# --- the merge receipt ------------------------------------------------------------------------


def test_a_reusing_push_seals_who_asked_the_verdict_and_the_approvals(api, tmp_path) -> None:
    pr = green_pr(api.state)
    api.state.check_runs[pr.sha1] = [
        {"id": 1, "name": "infx/results", "status": "completed", "conclusion": "success"}
    ]
    api.state.approve(RUN, "lead")
    out = tmp_path / "reuse-receipt.json"
    result, outputs = pr.gate(receipt=str(out))
    assert outputs["reuse-enabled"] == "true", result.output
    receipt = json.loads(out.read_text())
    assert schemas.errors("receipt", receipt) == []
    assert receipt["merge"]["commit"] == pr.merged and receipt["merge"]["before"] == pr.before
    assert receipt["merge"]["pr"] == 7
    source = receipt["source"]
    assert (source["run"], source["head_sha"], source["manifest"]) == (
        RUN, pr.sha1, pr.manifests[RUN]["digest"],
    )  # fmt: skip
    request = receipt["request"]
    assert (request["author"], request["permission"], request["command"]) == (
        "maintainer", "write", "/reuse-sweep-run",
    )  # fmt: skip
    assert receipt["verdict"] == {
        "check": "infx/results", "status": "completed", "conclusion": "success", "sha": pr.sha1,
    }  # fmt: skip
    assert receipt["approvals"] == [
        {
            "environment": "gpu-budget",
            "state": "approved",
            "user": "lead",
            "comment": "within reason",
        }
    ]


@pytest.mark.parametrize(("value", "kept"), [("4321", 4321), ("\u0663", None), (str(2**63), None)])
def test_a_merge_receipt_names_this_run_only_by_a_run_id_the_history_holds(
    api, tmp_path, monkeypatch, value: str, kept: int | None
) -> None:
    """isdecimal() sealed GITHUB_RUN_ID=٣ (Arabic-Indic three) as run 3, and 2**63, which
    the history cannot store beside the rows; neither names a run now."""
    monkeypatch.setenv("GITHUB_RUN_ID", value)
    pr = green_pr(api.state)
    api.state.check_runs[pr.sha1] = [
        {"id": 1, "name": "infx/results", "status": "completed", "conclusion": "success"}
    ]
    api.state.approve(RUN, "lead")
    out = tmp_path / "reuse-receipt.json"
    result, outputs = pr.gate(receipt=str(out))
    assert outputs["reuse-enabled"] == "true", result.output
    receipt = json.loads(out.read_text())
    assert receipt["merge"]["run"] == kept and schemas.errors("receipt", receipt) == []


def test_no_merge_receipt_means_no_reuse(api, tmp_path, monkeypatch) -> None:
    """The receipt's reads fail: the push sweeps instead of publishing unsealed numbers."""
    from tests.github.fake_api import Fault
    from tests.step_files import read_step_file

    pr = green_pr(api.state)
    api.state.faults.append(Fault("/approvals", 404, times=100))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out"))
    result, _ = pr.gate(receipt=str(tmp_path / "r.json"))
    assert result.exit_code == 2 and not (tmp_path / "r.json").exists()
    outputs = read_step_file(tmp_path / "out")
    assert outputs["reuse-enabled"] == "false" and "approvals" in outputs["reuse-reason"]


# --- issue 31, case 10: a receipt that leaves an artifact out --------------------------------


def test_receipt_check_refuses_an_artifact_the_receipt_does_not_seal(collected: Path) -> None:
    """A receipt sealing changelog-metadata alone let changed results through
    ("N member(s) match"): every artifact given must be sealed."""
    args = ["receipt", "run", "--out", "out/partial.json", "--manifest", "sweep-manifest.json",
            "--artifact", "changelog-metadata=changelog-metadata.json"]  # fmt: skip
    with inside(collected):
        assert CliRunner().invoke(cli, args, env=actions_env(collected)).exit_code == 0
        (collected / "results_bmk" / "results.json").write_text('{"rows": []}')
        check = ["receipt", "check", "--receipt", "out/partial.json",
                 "--artifact", "results_bmk=results_bmk",
                 "--artifact", "changelog-metadata=changelog-metadata.json"]  # fmt: skip
        result = CliRunner().invoke(cli, check)
    assert result.exit_code == 1, result.output
    assert "results_bmk: not sealed by the receipt" in result.output
    assert "match" not in result.output


def test_receipt_check_of_no_artifact_is_not_ok(collected: Path) -> None:
    """With no --artifact it compared nothing and said "0 member(s) match": a check that
    checked nothing is a usage error, in one line."""
    args = ["receipt", "run", "--out", "out/receipt.json", "--manifest", "sweep-manifest.json",
            "--artifact", "changelog-metadata=changelog-metadata.json"]  # fmt: skip
    with inside(collected):
        assert CliRunner().invoke(cli, args, env=actions_env(collected)).exit_code == 0
        result = CliRunner().invoke(cli, ["receipt", "check", "--receipt", "out/receipt.json"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("infx: error: no --artifact given: nothing was checked")
    assert result.output.count("\n") == 1 and "match" not in result.output


# --- issue 31, case 9: provenance recomputes what the history holds -------------------------


def stored_chain(tmp_path: Path) -> str:
    data, receipt = sealed_table(6000)
    ingest(tmp_path, json.loads(data))
    assert store(tmp_path, 6000, data, receipt).exit_code == 0
    return str(tmp_path / "history.sqlite")


def provenance(history: str, target: str = "6000") -> object:
    return CliRunner().invoke(cli, ["results", "provenance", target, "--history", history])


def tamper(history: str, sql: str, *args: object) -> None:
    import sqlite3

    with sqlite3.connect(history) as conn:
        conn.execute(sql, args)


def test_an_untouched_chain_holds(tmp_path: Path) -> None:
    result = provenance(stored_chain(tmp_path))
    assert result.exit_code == 0, result.output
    assert "broken" not in result.output


def test_provenance_of_a_missing_history_or_a_huge_number_is_one_line(tmp_path: Path) -> None:
    """A mistyped --history was made an empty database (then "6000 is not in the history");
    a run id or concurrency past SQLite's INTEGER raised OverflowError (exit 3)."""
    missing = tmp_path / "typo.sqlite"
    result = provenance(str(missing))
    assert result.exit_code == 2 and "no SQLite file" in result.output
    assert not missing.exists()
    history = stored_chain(tmp_path)
    for args in (["9" * 30], ["llama", "9" * 30], ["\u00b2"]):  # `²` isdigit(), not int()
        result = CliRunner().invoke(cli, ["results", "provenance", *args, "--history", history])
        assert result.exit_code == 2, result.output
        said = ("is not in the history", "give a run id", "is not a whole number from 1 below")
        assert any(s in result.output for s in said) and "Traceback" not in result.output


def test_a_run_id_in_another_script_s_digits_or_past_the_history_is_one_line(
    tmp_path: Path,
) -> None:
    """isdecimal() took `٣` (Arabic-Indic three) for run 3, and `--run` of `receipt store`
    or `results provenance`'s concurrency took 2**63, which SQLite cannot hold; each is now
    a usage error naming the value, as ASCII digits below 2**63 are the only run ids."""
    history = stored_chain(tmp_path)
    result = provenance(history, "\u0663")
    assert result.exit_code == 2, result.output
    assert "'\u0663': give a run id (digits, below 2**63)" in result.output
    data, receipt = sealed_table(6000)
    for run in (str(2**63), "\u0663", "-1", "1_0"):
        result = store(tmp_path, run, data, receipt)  # type: ignore[arg-type]
        assert result.exit_code == 2, result.output
        assert (
            f"Invalid value for '--run': {run!r} is not a whole number from 1 below 2**63"
            in result.output
        )
    args = ["results", "provenance", "llama", str(2**63), "--history", history]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "is not a whole number from 1 below 2**63" in result.output


def double_a_point(history: str) -> None:
    import sqlite3

    with sqlite3.connect(history) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(points)")]
        chosen = ", ".join("'doubled'" if c == "variant" else c for c in columns)
        conn.execute(
            f"INSERT INTO points ({', '.join(columns)}) SELECT {chosen} FROM points LIMIT 1"
        )


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda h: tamper(h, "UPDATE points SET data = replace(data, '1000', '2000') WHERE conc = 8"),
         "(3 stored, 3 sealed, or other values)"),
        (double_a_point, "(4 stored, 3 sealed, or other values)"),
    ],
    ids=["changed", "doubled"],
)  # fmt: skip
def test_a_stored_point_changed_or_doubled_breaks_the_chain(tmp_path: Path, change, says) -> None:
    """Stored points used to be taken as they were; now they are recomputed into the
    digest the issuer sealed of the table."""
    history = stored_chain(tmp_path)
    change(history)
    result = provenance(history)
    assert result.exit_code == 1
    assert f"its stored points are not the ones the issuer sealed {says}" in result.output


def test_a_rewritten_receipt_breaks_the_chain(tmp_path: Path) -> None:
    """The stored receipt's entries rewritten (here to seal other points): its digest is
    recomputed, never read."""
    history = stored_chain(tmp_path)
    import sqlite3

    with sqlite3.connect(history) as conn:
        (data,) = conn.execute("SELECT data FROM receipts WHERE kind = 'run'").fetchone()
        doc = json.loads(data)
        doc["table"]["points"] = "sha256:" + "0" * 64
        conn.execute("UPDATE receipts SET data = ? WHERE kind = 'run'", (json.dumps(doc),))
    result = provenance(history)
    assert result.exit_code == 1
    assert "the stored run receipt was rewritten" in result.output
