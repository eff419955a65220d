"""Why benchmark jobs failed, from what the jobs API and the job's log tail say.

Pure. A failed job is classified by its conclusion, the step that failed and the last
part of its log, first match wins:

- `runner-lost`: GitHub says the runner lost contact or was shut down, or the job left no
  log at all (a server or client saying so about itself is the recipe's failure);
- `timeout`: the job ran past its `timeout-minutes`;
- `workspace-permission`: permission denied on a path of the runner's workspace, on one
  line (root-owned leftovers of an earlier container, InferenceX #2039), or in a setup
  step such as checkout cleaning it;
- `accuracy-floor`: the floor check is the step that failed;
- `out-of-memory`: GPU or host memory ran out (CUDA/HIP OOM, the kernel's OOM killer);
- `accuracy-floor` too when the log says a score is below its floor;
- `unread`: triage did not read the job's log (at most MAX_LOGS per run) and GitHub's
  own fields (a timeout, the floor check's step) do not say: its kind is unknown;
- `recipe-error`: anything else the recipe, the server or the client did.

Only `runner-lost` and `workspace-permission` are infra: the same job on another node
of the pool is likely to pass. A timeout is not retried automatically (it costs the
most, and a hung server hangs again); an out-of-memory error follows the config; an
unread failure is neither retried as infra nor called the recipe's (a person reruns it
with `/rerun-failed`, whose scope is every row without a valid result).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from infx.markdown import table, text

RUNNER_LOST = "runner-lost"
TIMEOUT = "timeout"
WORKSPACE = "workspace-permission"
OOM = "out-of-memory"
ACCURACY = "accuracy-floor"
RECIPE = "recipe-error"
CANCELLED = "cancelled"
UNREAD = "unread"
INFRA = frozenset({RUNNER_LOST, WORKSPACE})
FLOOR_STEP = "Check accuracy floors"

# GitHub's own wording (a server or client may say "lost communication" or "shutdown
# signal" about itself; that is the recipe's failure and must not be retried as infra).
_LOST = re.compile(
    r"self-hosted runner: \S+ lost communication with the server|"
    r"The runner has received a shutdown signal|runner has been (?:removed|deleted)|"
    r"The operation was canceled because the runner"
)
_TIMEOUT = re.compile(r"exceeded the maximum execution time|has timed out", re.I)
_DENIED = re.compile(r"permission denied|EACCES|operation not permitted|unable to be removed", re.I)
_WORKSPACE_PATH = re.compile(r"/_work/|/_temp/|RUNNER_TEMP|GITHUB_WORKSPACE|actions-runner", re.I)
# Denied on a workspace path: both on one line (any traceback names files under _work/).
_WORKSPACE_DENIED = re.compile(
    rf"^.*(?:(?:{_DENIED.pattern}).*(?:{_WORKSPACE_PATH.pattern})|"
    rf"(?:{_WORKSPACE_PATH.pattern}).*(?:{_DENIED.pattern})).*$",
    re.I | re.M,
)
_OOM = re.compile(
    r"out of memory|OutOfMemoryError|hipErrorOutOfMemory|cudaErrorMemoryAllocation|"
    r"oom[-_ ]?kill|exit code 137|exit status 137|Killed process \d+",
    re.I,
)
_FLOOR = re.compile(r"below (?:its|the) floor", re.I)
_SETUP_STEPS = re.compile(r"^(?:Set up job|Run actions/checkout|Install infx)", re.I)


@dataclass(frozen=True)
class Failure:
    """What is known about one job that did not succeed."""

    conclusion: str | None  # failure, cancelled, timed_out, ...
    failed_step: str | None
    log_tail: str | None  # None: GitHub kept no log (or it was not read)
    log_read: bool = True  # False: the request budget ran out before this log


def classify(failure: Failure) -> str:
    """The class of a job that did not succeed (see the module docstring)."""
    if failure.conclusion == "cancelled" and not _any(failure.log_tail, _LOST, _TIMEOUT):
        return CANCELLED
    log = failure.log_tail or ""
    if _LOST.search(log) or (failure.log_read and failure.log_tail is None):
        return RUNNER_LOST
    if failure.conclusion == "timed_out" or _TIMEOUT.search(log):
        return TIMEOUT
    step = failure.failed_step or ""
    if not failure.log_read:
        return ACCURACY if step == FLOOR_STEP else UNREAD
    if _WORKSPACE_DENIED.search(log) or (_SETUP_STEPS.match(step) and _DENIED.search(log)):
        return WORKSPACE
    if step == FLOOR_STEP:
        return ACCURACY  # the step that failed says it; earlier lines do not
    if _OOM.search(log):
        return OOM
    if _FLOOR.search(log):
        return ACCURACY
    return RECIPE


def _any(text: str | None, *patterns: re.Pattern[str]) -> bool:
    return bool(text) and any(p.search(text or "") for p in patterns)


def is_infra(kind: str) -> bool:
    return kind in INFRA


# --- what the step summary shows ---------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One benchmark job attempt: its pool (runner label), node, outcome and class."""

    pool: str
    node: str
    conclusion: str | None
    kind: str | None  # None: it succeeded


def success_rates(attempts: Iterable[Attempt]) -> dict[str, tuple[int, int]]:
    """Pool -> (successful attempts, attempts), counting every attempt of every job."""
    rates: dict[str, list[int]] = {}
    for attempt in attempts:
        if attempt.kind == CANCELLED:
            continue  # never got to try
        held = rates.setdefault(attempt.pool, [0, 0])
        held[1] += 1
        held[0] += attempt.conclusion == "success"
    return {pool: (ok, total) for pool, (ok, total) in sorted(rates.items())}


def failure_table(attempts: Sequence[Attempt]) -> Counter[tuple[str, str]]:
    """(class, node) -> failed attempts."""
    return Counter((a.kind, a.node or "?") for a in attempts if a.kind and a.kind != CANCELLED)


def summary(attempts: Sequence[Attempt], notes: Mapping[str, str] | None = None) -> str:
    """Markdown: failures per class and runner node, then the success rate per pool."""
    out = "### Failed jobs by class and runner\n\n"
    failures = failure_table(attempts)
    if failures:
        rows = [
            [kind, node, count, "unknown" if kind == UNREAD else "yes" if is_infra(kind) else "no"]
            for (kind, node), count in sorted(failures.items())
        ]
        out += table(("class", "runner", "jobs", "infra"), rows, ("left", "left", "right", "left"))
    else:
        out += "No benchmark job failed.\n"
    cancelled = sum(1 for a in attempts if a.kind == CANCELLED)
    if cancelled:
        out += f"\n{cancelled} job(s) cancelled before they finished (fail-fast or a newer run).\n"
    out += "\n### Success rate over all attempts, per pool\n\n"
    rates = [
        [pool, ok, total, f"{100 * ok / total:.0f}%"]
        for pool, (ok, total) in success_rates(attempts).items()
    ]
    out += table(("pool", "successful", "attempts", "rate"), rates, ("left", *("right",) * 3))
    for key, value in (notes or {}).items():
        out += f"\n{key}: {text(value)}\n"
    return out
