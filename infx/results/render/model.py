"""The noise model's words in the PR comment: what a comparison could not have seen (power),
which repeats would settle an unconfirmed config and what they cost, the sweep-wide shift,
why a comparison at matched interactivity says nothing, and how the verdict was reached.

Numbers only come from the report; data strings go through `infx.markdown.text`.
"""

from __future__ import annotations

from infx.markdown import Md, text
from infx.results.verdict.report import FEW_RUNS, MAIN_MOVED, Config, Curve, Report
from infx.results.verdict.words import IMPROVED, NOISE, REGRESSED

NOT_MEANINGFUL = "not meaningful here"
_RUNS = {1: "one run", 2: "two runs", 3: "three runs"}


def _runs(n: int) -> str:
    return _RUNS.get(n, f"{n} runs")


def curve_cell(curve: Curve | None, mark: str = "") -> Md:
    """A summary table cell: the change and band, or why there is none."""
    if curve is not None and curve.why:
        return Md(f"n/a ({NOT_MEANINGFUL})")
    if curve is None or curve.change_pct is None or curve.band_pct is None:
        return Md("–")
    return Md(f"{curve.change_pct:+.1f}% ±{curve.band_pct:.1f} {mark}".strip())


def curve_sentence(what: str, curve: Curve | None, word: str, mark: str = "") -> str:
    """One sentence on a throughput measure of a config, or '' when it has none."""
    if curve is None:
        return ""
    if curve.why:
        return f" Throughput per GPU {what}: {NOT_MEANINGFUL}, {text(curve.why)}; no number given."
    if curve.change_pct is None:
        return ""
    cell = curve_cell(curve, mark)
    said = f"{word}, advisory" if curve.advisory else word
    return f" Throughput per GPU {what}: {cell} ({said}, {curve.matched} points)."


def power_sentence(config: Config) -> str:
    """What a within-noise (or unconfirmed) config could not have told from noise."""
    if config.verdict in (REGRESSED, IMPROVED) or not config.power:
        return ""
    tput = next((p for p in config.power if p.metric.key == "tput_per_gpu"), config.power[0])
    parts = []
    if tput.config_pct is not None:
        parts.append(f"under {tput.config_pct:.0f} % across the config")
    if tput.points:
        conc, worst = max(tput.points, key=lambda p: p[1])
        best_conc, best = min(tput.points, key=lambda p: p[1])
        if conc == best_conc:
            parts.append(f"under {worst:.0f} % at concurrency {conc}")
        else:
            parts.append(
                f"under {best:.0f} % at concurrency {best_conc} to {worst:.0f} % at {conc}"
            )
    if not parts:
        return ""
    name = "throughput per GPU" if tput.metric.key == "tput_per_gpu" else text(tput.metric.label)
    return (
        f" A change of {name} {' or '.join(parts)} cannot be told "
        f"from noise with {_runs(config.pr_runs)} of this PR (80 % power)."
    )


def repeats_sentence(config: Config, threshold: float) -> str:
    """For an unconfirmed config: why, and the runs that would settle it, priced."""

    if config.why == MAIN_MOVED:
        return (
            " Unconfirmed: it differs from main's established level, but main's newest "
            "run(s) moved too, and a level never rests on fewer than 3 runs."
        )
    if config.why == FEW_RUNS:
        return (
            " Unconfirmed: it differs from main only at point(s) main measured in fewer "
            "than 3 runs, and a level never rests on fewer than 3 runs."
        )
    found = config.repeats
    if found is None:
        return ""
    said = (
        f" Unconfirmed: beyond ±{threshold:g} % but not significant in this sweep "
        f"(with {_runs(config.pr_runs)})."
    )
    if found.runs <= 0:
        return said + " More runs than infx asks for would be needed to settle it."
    return said + (
        f" {found.count} more run(s) of its {len(found.rows)} point(s) ({found.runs} in all) "
        f"would settle it: about {found.gpu_hours:.1f} GPU-hours ({text(found.source)})."
    )


def moved_lines(config: Config) -> str:
    return "".join(f" Main: {text(m)}." for m in config.moved)


def sweep_line(report: Report) -> str:
    """The sweep-wide shift, when this PR's sweep held enough configs to estimate it."""
    if not report.sweep:
        return ""
    shifts = Md(
        ", ".join(
            f"{text(s.metric.label)} {s.change_pct:+.1f}%"
            + (f" (band ±{s.band_pct:.1f})" if s.band_pct is not None else "")
            for s in report.sweep
        )
    )
    word = {REGRESSED: "regressed", IMPROVED: "improved", NOISE: "within noise"}
    verdict = text(word.get(report.sweep_verdict, report.sweep_verdict))
    return f"Sweep-wide shift (every config alike): {shifts}: **{verdict}**.\n\n"


def calibration_line(report: Report) -> str:
    """How often this model fails main's own unchanged runs, next to the rate named."""
    if report.calibration is None or not report.calibration[0]:
        return ""
    runs, failed = report.calibration
    rate = report.q if report.q_held is None else report.q_held
    if rate >= report.q:
        return (
            f"Calibration: of main's last {runs} run(s) judged as PRs against the others, "
            f"{failed} would have failed (the rate named: {report.q:.0%}).\n\n"
        )
    return (
        f"Calibration: at the rate named ({report.q:.0%}) more of main's own runs judged as "
        f"PRs would have failed than chance allows, so this verdict ran at {rate:.2%}: of "
        f"main's last {runs} run(s), {failed} would have failed at it.\n\n"
    )


def pairs_line(report: Report) -> str:
    """How many pairs a paired comparison judged ("" without one)."""
    if not report.paired_configs:
        return ""
    return (
        f"Paired: {report.paired_configs} config(s) judged on {report.pairs} pair(s) of runs, "
        "this PR's image and main's measured beside it on one node, on their differences "
        "(the session's own speed cancels); the others against main's history.\n\n"
    )


def method(report: Report) -> str:
    """How the verdict was reached, in plain words."""
    return (
        "Each config is judged against main's level: the mean of its newest runs that "
        "agree (a run outside the others' prediction interval is an outlier, left out; a "
        "step cuts the history, and a newer segment of fewer than 3 runs is provisional; "
        "a drift is a trend). The points of one run move together, so a config's mean is "
        "judged against how far main's runs move, and each point's residual against its "
        "own scatter; this PR's repeats are pooled robustly (Huber), never one bad repeat "
        "carrying the mean. "
        f"Errors are controlled where you act: at most {report.q:.1%} of unchanged sweeps "
        "fail, whatever their size (Benjamini-Hochberg across configs, a weighted "
        f"Bonferroni bound inside one); a change inside ±{report.threshold:g}% is never "
        "flagged. A config beyond that but not significant is unconfirmed, with the runs "
        "that would settle it. Gated: throughput per GPU and TPOT p50 (ITL and "
        "interactivity are TPOT again); TTFT and the p99 tails are advisory, each with its "
        "own heavy-tailed band, never failing; accuracy against 1.96 combined standard "
        "errors, else its samples' binomial error, else a tolerance on its change."
    )
