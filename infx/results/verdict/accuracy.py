"""An accuracy config's verdict: each score of this run against main's newest, judged on
their standard errors (their own, else a rate's binomial error over its samples, else the
change alone against a tolerance); this run's error counts at most as main's, as the
table that claims it is the one being judged."""

from __future__ import annotations

import math

from infx.results.noise.series import History
from infx.results.table.keys import config_label
from infx.results.table.rows import Accuracy, ByConc, Identity, Row
from infx.results.verdict.report import Config, Score, score_verdict, worst
from infx.results.verdict.words import COMPARED, COVERAGE_LOST, MISSING, NEW, judge_score


def _stderr(score: Accuracy) -> tuple[float | None, str]:
    """The score's standard error and the rule it came from: its own; without one (lm-eval's
    "N/A"), the binomial error of a rate over its samples; without those either, None
    (the change alone is judged against ACCURACY_TOLERANCE)."""
    stderr: float | None = score.get("stderr")
    if stderr is not None:
        return stderr, "stderr"
    value, samples = score.get("value"), score.get("samples")
    if (
        isinstance(value, int | float)
        and 0 <= value <= 1
        and isinstance(samples, int)
        and samples > 0
    ):
        return math.sqrt(value * (1 - value) / samples), "samples"
    return None, "tolerance"


def accuracy_config(
    key: str,
    ident: Identity,
    points: dict[int, list[Row]],
    hist: History,
    runs: list[int],
) -> Config:
    newest: ByConc = hist.points[runs[-1]][key] if runs else {}
    scores = []
    for conc in sorted(set(points) | set(newest)):
        mine = points.get(conc)
        a = {(s["task"], s["metric"], s["filter"]): s for s in _scores(mine[0] if mine else None)}
        b = {(s["task"], s["metric"], s["filter"]): s for s in _scores(newest.get(conc))}
        for k in sorted(set(a) | set(b)):
            sa, sb = a.get(k), b.get(k)
            status = COMPARED if sa and sb else (NEW if sa else MISSING)
            rule = "stderr"
            verdict = status
            if sa and sb:
                (se_b, rule_b), (se_a, rule_a) = _stderr(sb), _stderr(sa)
                rule = "samples" if "samples" in (rule_a, rule_b) else "stderr"
                rule = "tolerance" if se_a is None or se_b is None else rule
                if rule == "tolerance":
                    se_a = se_b = None
                elif se_a is not None and se_b is not None:
                    # This run's error never widens the band past main's: a table claiming
                    # a stderr of 0.3, or an eval cut to 4 samples, read a drop of 0.37 of
                    # gsm8k as within stderr.
                    se_a = min(se_a, se_b)
                verdict = judge_score(sb["value"], se_b, sa["value"], se_a)
            scores.append(
                Score(
                    conc,
                    *k,
                    status,
                    sb["value"] if sb else None,
                    sb.get("stderr") if sb else None,
                    sa["value"] if sa else None,
                    sa.get("stderr") if sa else None,
                    verdict,
                    rule,
                )
            )
    parts = [score_verdict(s) for s in scores]
    parts = [COVERAGE_LOST if p == MISSING else p for p in parts]
    return Config(
        key=key,
        kind="accuracy",
        label=config_label(ident),
        identity=ident,
        verdict=worst(parts) if runs else NEW,
        scores=tuple(scores),
        runs=len(runs),
        baseline=hist.runs[runs[-1]] if runs else None,
    )


def _scores(row: Row | None) -> list[Accuracy]:
    return row.get("accuracy", []) if row is not None else []
