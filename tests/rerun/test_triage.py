"""Failed benchmark jobs sorted into classes from their conclusion, failing step and log
tail, as GitHub and the runners write them."""

from __future__ import annotations

import pytest

from infx.rerun.triage import (
    ACCURACY,
    CANCELLED,
    OOM,
    RECIPE,
    RUNNER_LOST,
    TIMEOUT,
    UNREAD,
    WORKSPACE,
    Attempt,
    Failure,
    classify,
    is_infra,
    success_rates,
    summary,
)

LOGS = {
    RUNNER_LOST: [
        (
            "Run the recipe",
            "2026-11-30T12:00:00Z ##[error]The self-hosted runner: mi355x-amds_03 lost "
            "communication with the server. Verify the machine is running and has a healthy "
            "network connection.",
        ),
        (
            "Run the recipe",
            "##[error]The runner has received a shutdown signal. This can happen when the "
            "runner service is stopped, or a manually started runner is canceled.",
        ),
    ],
    TIMEOUT: [
        (
            "Run the recipe",
            "##[error]The job running on runner mi355x-amds_02 has exceeded the maximum "
            "execution time of 360 minutes.",
        ),
    ],
    WORKSPACE: [
        (
            "Run actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
            "Deleting the contents of '/home/runner/actions-runner/_work/bench/bench'\n"
            "##[error]File was unable to be removed Error: EACCES: permission denied, rmdir "
            "'/home/runner/actions-runner/_work/bench/bench/results/lm-eval'",
        ),
        (
            "Run the recipe",
            "mkdir: cannot create directory '/home/gha/_work/_temp/results': Permission denied",
        ),
    ],
    OOM: [
        (
            "Run the recipe",
            "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 287.98 GiB",
        ),
        ("Run the recipe", "Killed\n##[error]Process completed with exit code 137."),
    ],
    ACCURACY: [
        (
            "Check accuracy floors",
            "infx: error: llama70b gsm8k exact_match,strict-match 0.7100 is below its floor "
            "0.9 (default)",
        ),
    ],
    RECIPE: [
        ("Run the recipe", "ValueError: unrecognized arguments: --moe-backend aiter\nexit 2"),
        ("Process the results", "infx: error: results/llama70b_1k1k.json: no such file"),
        ("Run the recipe", "Permission denied (publickey).\nfatal: Could not read from remote"),
    ],
}
CASES = [(kind, step, log) for kind, logs in LOGS.items() for step, log in logs]


@pytest.mark.parametrize(
    ("kind", "step", "log"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_failures_are_classified_from_step_and_log(kind: str, step: str, log: str) -> None:
    assert classify(Failure("failure", step, "…earlier lines…\n" + log)) == kind


def test_a_job_without_any_log_lost_its_runner() -> None:
    assert classify(Failure("failure", "Run the recipe", None)) == RUNNER_LOST


def test_a_log_left_unread_is_neither_a_lost_runner_nor_a_recipe_error() -> None:
    """Triage reads at most 30 logs: a failure whose log it did not read is `unread`, never
    guessed (a recipe error would hide an infra failure; infra would retry it blindly)."""
    unread = classify(Failure("failure", "Run the recipe", None, log_read=False))
    assert unread == UNREAD and unread != RECIPE and not is_infra(unread)
    setup = "Run actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
    assert classify(Failure("failure", setup, None, log_read=False)) == UNREAD


def test_what_github_says_without_a_log_still_classifies_an_unread_failure() -> None:
    assert classify(Failure("timed_out", "Run the recipe", None, log_read=False)) == TIMEOUT
    assert classify(Failure("failure", "Check accuracy floors", None, log_read=False)) == ACCURACY
    assert classify(Failure("cancelled", None, None, log_read=False)) == CANCELLED


def test_the_summary_says_unread_failures_are_of_unknown_kind() -> None:
    attempts = [Attempt("mi355x", "mi355x-amds_03", "failure", UNREAD)]
    assert "| unread | mi355x-amds\\_03 | 1 | unknown |" in summary(attempts)


def test_cancelled_jobs_are_their_own_class_unless_the_runner_went() -> None:
    assert classify(Failure("cancelled", None, "##[error]The operation was canceled.")) == CANCELLED
    lost = "The self-hosted runner: x lost communication with the server."
    assert classify(Failure("cancelled", "Run the recipe", lost)) == RUNNER_LOST


def test_only_lost_runners_and_workspace_permissions_are_infra() -> None:
    assert {k for k in LOGS if is_infra(k)} == {RUNNER_LOST, WORKSPACE}


def test_success_rate_counts_every_attempt_but_not_cancelled_ones() -> None:
    attempts = [
        Attempt("mi355x", "mi355x-amds_00", "success", None),
        Attempt("mi355x", "mi355x-amds_03", "failure", RUNNER_LOST),
        Attempt("mi355x", "mi355x-amds_01", "success", None),  # the retry
        Attempt("mi355x", "", "cancelled", CANCELLED),
        Attempt("cluster:mi355x-amds", "mi355x-amds_05", "failure", OOM),
    ]
    assert success_rates(attempts) == {"cluster:mi355x-amds": (0, 1), "mi355x": (2, 3)}
    text = summary(attempts)
    assert "| runner-lost | mi355x-amds\\_03 | 1 | yes |" in text
    assert "| out-of-memory | mi355x-amds\\_05 | 1 | no |" in text
    assert "| mi355x | 2 | 3 | 67% |" in text
    assert "1 job(s) cancelled" in text


@pytest.mark.parametrize(
    "text",
    ["[]", "{", '{"format": "infx-sweep-triage/1", "attempts": [{"run": 1}]}', '{"attempts": []}'],
)
def test_a_source_runs_triage_of_another_shape_is_refused(tmp_path, text: str) -> None:
    from infx.errors import UsageError
    from infx.rerun.facts import read_attempts

    path = tmp_path / "triage.json"
    path.write_text(text)
    with pytest.raises(UsageError):
        read_attempts(path)


# Misleading log tails: text that looks like an infra failure but is the recipe's own. An
# infra class would retry the job automatically on another node, where it fails the same.
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/runner/actions-runner/_work/bench/bench/utils/bench_serving.py", line 88\n'
    "    clone(repo)\n"
    "Cloning into '/home/runner/actions-runner/_work/bench/bench/third_party/kernels'...\n"
    "git@github.com: Permission denied (publickey).\n"
    "fatal: Could not read from remote repository.\n"
)
MISLEADING = [
    ("Run the recipe", TRACEBACK, RECIPE),
    (
        "Run the recipe",
        "aiperf: lost communication with the server at http://0.0.0.0:8888, giving up\n"
        "RuntimeError: the benchmark client exited with 3\n",
        RECIPE,
    ),
    (
        "Run the recipe",
        "sglang: scheduler received a shutdown signal from the tokenizer manager\n"
        "ValueError: --moe-backend aiter is not supported with tp 4\n",
        RECIPE,
    ),
    (
        "Check accuracy floors",
        "WARNING: retrying batch 3 after CUDA out of memory, halving the batch size\n"
        "infx: error: llama70b gsm8k exact_match,strict-match 0.7100 is below its floor 0.9\n",
        ACCURACY,
    ),
]


@pytest.mark.parametrize(("step", "log", "kind"), MISLEADING)
def test_misleading_log_text_does_not_make_a_recipe_failure_infra(
    step: str, log: str, kind: str
) -> None:
    assert classify(Failure("failure", step, log)) == kind


def test_github_runner_messages_still_mean_a_lost_runner() -> None:
    text = (
        "##[error]The self-hosted runner: mi355x-amds_03 lost communication with the server. "
        "Verify the machine is running and has a healthy network connection."
    )
    assert classify(Failure("failure", "Run the recipe", text)) == RUNNER_LOST
    # A timeout while the runner was going away: the runner went, so it is retried once.
    late = "##[error]The runner has received a shutdown signal.\n" + LOGS[TIMEOUT][0][1]
    assert classify(Failure("timed_out", "Run the recipe", late)) == RUNNER_LOST
