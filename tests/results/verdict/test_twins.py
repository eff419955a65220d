"""Two master configs that measure the same identity (image and config name are not part of
it): InferenceX's master configs hold 39 such points, e.g. `dsr1-fp4-mi355x-sglang-disagg-mtp`
and `...-disagg-8k1k-mtp`. Each row carries its master config (`recipe.config-key`, from
the plan); rows from before that are told apart by image. `collect` keeps both, `ingest`
stores both, `compare` judges both, and a renamed or re-imaged config still meets its
history."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from click.testing import CliRunner

from infx.cli import cli
from infx.results.verdict.judge import compare
from infx.results.verdict.words import NEW, REGRESSED
from tests.results.simulate import Sweeps

A, B = "dsr1-fp4-mi355x-sglang-disagg-mtp", "dsr1-fp4-mi355x-sglang-disagg-8k1k-mtp"


def twins(
    run_id: int,
    factor_b: float = 1.0,
    *,
    keys: tuple[str | None, str | None] = (A, B),
    images: tuple[str, str] = ("sglang:a", "sglang:b"),
    only: str | None = None,
) -> dict:
    """One run measuring config 0 twice: as master config A and as B (B's throughput
    scaled by `factor_b`); `only` keeps one of them."""
    first = Sweeps(1, seed=run_id).run(run_id)
    second = Sweeps(1, seed=run_id + 50_000).run(run_id, lambda i, c: factor_b)
    rows = []
    for name, key, image, doc in (
        ("a", keys[0], images[0], first),
        ("b", keys[1], images[1], second),
    ):
        if only not in (None, name):
            continue
        for row in copy.deepcopy(doc["rows"]):
            row["recipe"]["image"] = image
            if key is not None:
                row["recipe"]["config-key"] = key
            rows.append(row)
    return {
        **first,
        "rows": rows,
        "run": {**first["run"], "created_at": f"2026-11-01T00:{run_id % 60:02d}:00Z"},
    }


def history(runs: int = 8, **kwargs) -> list[dict]:
    return [twins(1000 + r, **kwargs) for r in range(runs)]


def by_label(report) -> dict[str, str]:
    return {c.label: c.verdict for c in report.configs}


def test_compare_judges_both_configs_of_one_identity() -> None:
    """Only the first row of the identity was judged: B's -40 % read within noise."""
    report = compare(twins(9000, 0.6)["rows"], history())
    verdicts = by_label(report)
    assert len(verdicts) == 2, verdicts
    assert [v for label, v in verdicts.items() if label.endswith(B)] == [REGRESSED]
    assert [v for label, v in verdicts.items() if label.endswith(A)] != [REGRESSED]
    assert report.verdict == REGRESSED


def test_rows_without_a_config_key_are_told_apart_by_image() -> None:
    main = history(keys=(None, None))
    report = compare(twins(9000, 0.6, keys=(None, None))["rows"], main)
    verdicts = by_label(report)
    assert len(verdicts) == 2, verdicts
    assert [v for label, v in verdicts.items() if label.endswith("sglang:b")] == [REGRESSED]
    assert [v for label, v in verdicts.items() if label.endswith("sglang:a")] != [REGRESSED]


def test_a_pr_of_one_twin_meets_its_own_history() -> None:
    """The PR changes B only (a new image): it is judged against B's history, not A's."""
    main = history()
    pr = twins(9000, 0.6, images=("sglang:a", "sglang:new"), only="b")["rows"]
    report = compare(pr, main)
    (config,) = [c for c in report.configs if not c.only_main]
    assert config.label.endswith(B) and config.verdict == REGRESSED
    assert config.runs == 8


def test_main_history_without_config_keys_meets_a_keyed_pr() -> None:
    """Main's runs stored before rows named their master config: matched by image."""
    main = history(keys=(None, None))
    report = compare(twins(9000, 0.6)["rows"], main)
    verdicts = by_label(report)
    assert len(verdicts) == 2 and NEW not in verdicts.values(), verdicts
    assert [v for label, v in verdicts.items() if label.endswith(B)] == [REGRESSED]


def test_a_renamed_config_still_meets_its_history() -> None:
    """Renaming the master config (and changing its image) in the PR that slows it down
    must not make it `new`: an identity measured by one config matches by identity."""
    main = [twins(1000 + r, only="a") for r in range(8)]
    pr = twins(9000, keys=(None, "renamed-config"), images=("x", "sglang:new"), only="b")
    pr["rows"] = [
        {**r, "metrics": {**r["metrics"], "tput_per_gpu": r["metrics"]["tput_per_gpu"] * 0.6}}
        for r in pr["rows"]
    ]
    report = compare(pr["rows"], main)
    (config,) = report.configs
    assert config.verdict == REGRESSED and config.runs == 8


def test_a_renamed_twin_is_still_judged() -> None:
    """Renamed among twins (neither name nor image tells which it was): judged against one
    of them, said in a note, never `new`."""
    pr = twins(9000, keys=(None, "renamed-config"), images=("x", "sglang:new"), only="b")
    for row in pr["rows"]:
        row["metrics"]["tput_per_gpu"] *= 0.6
    report = compare(pr["rows"], history())
    mine = [c for c in report.configs if not c.only_main]
    assert [c.verdict for c in mine] == [REGRESSED]
    assert any("renamed-config" in note for note in report.notes), report.notes


def test_through_collect_ingest_and_compare(tmp_path: Path) -> None:
    """The whole path: collect keeps both, ingest stores both (it refused the whole table,
    and in run-sweep.yml that step is continue-on-error, so main's run never entered the
    history), compare judges both."""
    database = tmp_path / "history.sqlite"
    for r, doc in enumerate(history(6)):
        doc["run"]["created_at"] = f"2026-11-{r + 1:02d}T00:00:00Z"
        path = tmp_path / f"main{r}.json"
        path.write_text(json.dumps(doc))
        stored = CliRunner().invoke(
            cli, ["results", "ingest", str(path), "--history", str(database)]
        )
        assert stored.exit_code == 0, stored.output
        assert f"{len(doc['rows'])} added" in stored.output
    (tmp_path / "pr.json").write_text(json.dumps(twins(9000, 0.6)))
    args = ["results", "compare", str(tmp_path / "pr.json"), "--history", str(database)]
    outcome = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert outcome.exit_code == 1, outcome.output
    verdict = json.loads(outcome.stdout)
    judged = {c["label"].rsplit(" · ", 1)[-1]: c for c in verdict["configs"]}
    assert set(judged) == {A, B}
    assert judged[B]["verdict"] == REGRESSED and judged[B]["history_runs"] == 6
