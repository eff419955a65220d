"""`infx results compare` against a local baseline: matching, judging, new/missing, Markdown."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.cli import cli
from infx.results.clients import ClientRun, Score
from infx.results.compare import (
    IMPROVED,
    METRICS,
    NOISE,
    REGRESSED,
    compare,
    judge,
)
from infx.results.process import accuracy_row, document, throughput_row
from infx.results.render import COMMENT_LIMIT, MARKER, Context, comment
from tests.results.formats import fixed_row


def point(conc: int, *, tput: float, tpot_ms: float, ttft_ms: float = 100.0, **row) -> dict:
    base = fixed_row(conc=conc, **row)
    run = ClientRun(
        "vllm-bench-serve",
        total_tput=tput * 4,
        output_tput=tput * 2,
        completed=10,
        latencies_ms={"mean_ttft": ttft_ms, "mean_tpot": tpot_ms, "mean_itl": tpot_ms},
    )
    return throughput_row(base, run, conc, f"{conc}.json")


def accuracy(conc: int, value: float, stderr: float | None) -> dict:
    row = fixed_row(conc=conc, isl=8192, **{"exp-name": "llama70b_8k1k", "run-eval": True})
    return accuracy_row(
        row, [Score("gsm8k", "exact_match", "strict-match", value, stderr, 1319)], "x"
    )


def save(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps(document(rows)))
    return path


def test_threshold_decides_improved_regressed_noise() -> None:
    tput, ttft = METRICS[0], METRICS[1]
    assert judge(tput, 100, 102, 2.0).verdict == NOISE
    assert judge(tput, 100, 102.5, 2.0).verdict == IMPROVED
    assert judge(tput, 100, 97.5, 2.0).verdict == REGRESSED
    assert judge(ttft, 100, 97.5, 2.0).verdict == IMPROVED
    assert judge(ttft, 100, 103, 5.0).verdict == NOISE
    assert judge(ttft, 100, 103, 2.0).pct == pytest.approx(3.0)
    assert judge(tput, None, 5, 2.0).verdict == "n/a"


def test_points_match_by_identity_not_image_or_fingerprint() -> None:
    main = [point(c, tput=1000, tpot_ms=20) for c in (4, 8)]
    pr = [
        point(c, tput=1100, tpot_ms=18, image="vllm:new", **{"recipe-fingerprint": "cd" * 32})
        for c in (4, 8)
    ]
    result = compare(pr, [("main run 1", main)])
    (config,) = result.configs
    assert [p.status for p in config.points] == ["compared", "compared"]
    changes = {c.metric.key: c for c in config.points[0].changes}
    assert changes["tput_per_gpu"].pct == pytest.approx(10.0)
    assert changes["tput_per_gpu"].verdict == IMPROVED
    assert changes["mean_tpot"].verdict == IMPROVED and changes["mean_tpot"].pct == pytest.approx(
        -10
    )
    assert changes["mean_intvty"].pct == pytest.approx(1000 / 18 / 50 * 100 - 100)
    assert changes["mean_ttft"].verdict == NOISE
    assert config.baseline == "main run 1"


def test_other_parallelism_is_another_config() -> None:
    result = compare([point(4, tput=1, tpot_ms=1, tp=8)], [("main", [point(4, tput=1, tpot_ms=1)])])
    (config,) = result.configs
    assert config.baseline is None and [p.status for p in config.points] == ["new"]


def test_one_sided_points_are_new_or_missing() -> None:
    main = [point(c, tput=1000, tpot_ms=20) for c in (4, 8)]
    pr = [point(c, tput=1000, tpot_ms=20) for c in (8, 16)]
    (config,) = compare(pr, [("main", main)]).configs
    assert [(p.conc, p.status) for p in config.points] == [
        (4, "missing"),
        (8, "compared"),
        (16, "new"),
    ]


def test_newest_baseline_holding_a_config_wins() -> None:
    old = [point(4, tput=500, tpot_ms=20)]
    newer_other = [point(4, tput=900, tpot_ms=20, tp=2)]
    newest = [point(4, tput=1000, tpot_ms=20)]
    pr = [point(4, tput=1000, tpot_ms=20)]
    (config,) = compare(pr, [("a", newer_other), ("b", newest), ("c", old)]).configs
    assert config.baseline == "b" and config.points[0].changes[0].verdict == NOISE


def test_accuracy_is_judged_against_its_stderr() -> None:
    same = compare([accuracy(16, 0.9719, 0.0045)], [("m", [accuracy(16, 0.9719, 0.0045)])])
    assert same.configs[0].scores[0].verdict == NOISE
    small = compare([accuracy(16, 0.965, 0.0045)], [("m", [accuracy(16, 0.9719, 0.0045)])])
    assert small.configs[0].scores[0].verdict == NOISE  # 0.0069 < 1.96 * 0.0064
    drop = compare([accuracy(16, 0.95, 0.0045)], [("m", [accuracy(16, 0.9719, 0.0045)])])
    assert drop.configs[0].scores[0].verdict == REGRESSED


def test_a_point_measured_twice_is_noted() -> None:
    pr = [point(4, tput=1000, tpot_ms=20), point(4, tput=10, tpot_ms=20)]
    result = compare(pr, [("m", [point(4, tput=1000, tpot_ms=20)])])
    assert result.configs[0].points[0].changes[0].verdict == NOISE
    assert any("measured twice" in n for n in result.notes)


def test_comment_starts_with_the_marker_and_shows_each_change() -> None:
    main = [point(4, tput=1000, tpot_ms=4.01, ttft_ms=681), accuracy(16, 0.9719, 0.0045)]
    pr = [point(4, tput=1040, tpot_ms=3.91, ttft_ms=639), accuracy(16, 0.9719, 0.0045)]
    body = comment(
        compare(pr, [("main run [9](u)", main)]), Context(baselines=("main run [9](u)",))
    )
    assert body.startswith(MARKER)
    assert "681 → 639 (-6.2%) 🟢" in body
    assert "4.01 → 3.91 (-2.5%) 🟢" in body
    assert "1,000 → 1,040 (+4.0%) 🟢" in body
    assert "0.9719 ± 0.0045 | 0.9719 ± 0.0045 | +0.0000 ⚪ within stderr" in body
    assert "Baselines: main run [9](u)." in body


def test_regressed_configs_come_first() -> None:
    main = [point(4, tput=1000, tpot_ms=20), point(4, tput=1000, tpot_ms=20, tp=8)]
    pr = [point(4, tput=1000, tpot_ms=20), point(4, tput=800, tpot_ms=20, tp=8)]
    result = compare(pr, [("m", main)])
    assert result.configs[0].identity["tp"] == 8 and result.configs[0].regressed


def test_two_thousand_rows_fit_in_one_comment() -> None:
    rows = []
    for tp in range(1, 251):
        rows += [point(c, tput=1000 + c, tpot_ms=20, tp=tp) for c in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert len(rows) == 2000
    slower = copy.deepcopy(rows)
    for row in slower:
        row["metrics"]["tput_per_gpu"] *= 0.9
    body = comment(compare(rows, [("m", slower)]), Context())
    assert len(body) <= COMMENT_LIMIT
    assert "more config(s) not shown here" in body
    assert "**2000 improved, 0 regressed, 8000 within noise**" in body


def test_cli_with_a_local_baseline(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    base = save(tmp_path / "main.json", [point(c, tput=1000, tpot_ms=20) for c in (4, 8)])
    mine = save(tmp_path / "pr.json", [point(c, tput=900, tpot_ms=20.1) for c in (4, 8, 16)])
    summary, out = tmp_path / "summary.md", tmp_path / "comment.md"
    outcome = CliRunner().invoke(
        cli,
        [
            "results",
            "compare",
            str(mine),
            "--baseline",
            str(base),
            "--threshold",
            "5",
            "--out",
            str(out),
        ],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert outcome.exit_code == 0, outcome.output
    body = out.read_text()
    assert "**0 improved, 2 regressed, 8 within noise**" in body
    assert "New (no baseline point): conc 16" in body
    assert "(threshold ±5%" in body
    assert summary.read_text().startswith(body.rstrip("\n")[:200])


def test_cli_rejects_a_file_that_is_not_a_results_table(tmp_path: Path) -> None:
    bogus = tmp_path / "x.json"
    bogus.write_text('{"rows": []}')
    outcome = CliRunner().invoke(cli, ["results", "compare", str(bogus), "--baseline", str(bogus)])
    assert outcome.exit_code == 1 and "not an infx results file" in outcome.output


@settings(max_examples=300, deadline=None)
@given(
    before=st.floats(min_value=1e-6, max_value=1e6),
    ratio=st.floats(min_value=0.01, max_value=100),
    threshold=st.floats(min_value=0, max_value=50),
)
def test_verdicts_follow_direction_and_threshold(
    before: float, ratio: float, threshold: float
) -> None:
    after = before * ratio
    for metric in METRICS:
        change = judge(metric, before, after, threshold)
        assert change.pct is not None
        flipped = judge(metric, after, before, threshold)
        if change.verdict == NOISE:
            assert abs(change.pct) <= threshold
        else:
            assert abs(change.pct) > threshold
            better = (after > before) == metric.higher_is_better
            assert change.verdict == (IMPROVED if better else REGRESSED)
            if flipped.verdict != NOISE:
                assert flipped.verdict != change.verdict
