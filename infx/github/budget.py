"""The one request meter of every GitHub read, and what one decision may spend: requests,
pages per listing, wall time.

Each client has a Meter; its transport charges every GET (and every retry) to it. A
decision that would need more gives up with a GitHubError naming the cap, which the
commands turn into "no reuse" (or no staging) and exit 2. The wall-time cap also holds
against a connection that never answers: the reads run in a worker thread that the
caller stops waiting for. A search with a budget of its own (main's results history,
infx/results/compare/baseline.py) counts on the same meter through a Tab and stops gracefully.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from infx.errors import GitHubError

T = TypeVar("T")
SECONDS_ENV = "INFX_API_SECONDS"


@dataclass(frozen=True)
class Limits:
    # A healthy decision takes 8 to 16 requests (benchmarks/bench_reuse_requests.py);
    # 100 leaves room for retries and long comment threads but not for a request per run.
    requests: int = 100
    # 30 pages of 100 items: a PR with 3,000 comments still decides.
    pages: int = 30
    # Two minutes: five retries with backoff (about 30 s) on a few requests still fit.
    seconds: float = 120.0

    @classmethod
    def from_env(cls) -> Limits:
        """Default limits; INFX_API_SECONDS overrides the wall time (tests, slow runners)."""
        value = os.environ.get(SECONDS_ENV)
        if not value:
            return cls()
        try:
            seconds = float(value)
        except ValueError:
            raise GitHubError(f"{SECONDS_ENV} must be a number of seconds, not {value!r}") from None
        if not seconds > 0:
            raise GitHubError(f"{SECONDS_ENV} must be positive, not {value!r}")
        return cls(seconds=seconds)


class Meter:
    """Counts every GitHub API request of one client (retries included), and caps those of
    the decision in progress, if any. A search that spends by its own budget (results'
    baseline search) reads its share through a `Tab`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.limits: Limits | None = None
        self.used = 0  # every request this client has made
        self._decision_start = 0
        self._deadline = 0.0
        self._abandoned = False

    def start(self, limits: Limits) -> None:
        with self._lock:
            self.limits, self._decision_start, self._abandoned = limits, self.used, False
            self._deadline = time.monotonic() + limits.seconds

    def stop(self) -> None:
        with self._lock:
            self.limits = None

    def abandon(self) -> None:
        """The caller stopped waiting; any request the worker still tries fails at once."""
        with self._lock:
            self._abandoned = True

    def charge(self, what: str) -> None:
        """Account for one more request while `what`; raise if the decision may not make it."""
        with self._lock:
            if self._abandoned:
                raise GitHubError(f"abandoned while {what}")
            self.used += 1
            if self.limits is None:
                return
            if self.used - self._decision_start > self.limits.requests:
                raise GitHubError(
                    f"gave up while {what}: a decision may make at most "
                    f"{self.limits.requests} GitHub API requests"
                )
            if time.monotonic() > self._deadline:
                raise GitHubError(
                    f"gave up while {what}: a decision may take at most {self.limits.seconds:g} s"
                )

    def allow_wait(self, seconds: float, what: str) -> None:
        """Refuse a retry wait that would end after the deadline."""
        with self._lock:
            if self._abandoned:
                raise GitHubError(f"abandoned while {what}")
            if self.limits is not None and time.monotonic() + seconds > self._deadline:
                raise GitHubError(
                    f"gave up while {what}: waiting {seconds:g} s to retry would pass the "
                    f"{self.limits.seconds:g} s a decision may take"
                )

    @property
    def pages(self) -> int:
        return self.limits.pages if self.limits else Limits.pages

    def tab(self) -> Tab:
        """Start counting one search's requests."""
        return Tab(self, self.used)


@dataclass
class Tab:
    """The requests a meter counted from `start` (up to `end`, once closed): what one search
    spent, retries included, and nothing a later read of the same client adds."""

    meter: Meter
    start: int
    end: int | None = None

    @property
    def count(self) -> int:
        return (self.meter.used if self.end is None else self.end) - self.start

    def close(self) -> None:
        if self.end is None:
            self.end = self.meter.used


def within(meter: Meter, limits: Limits, fetch: Callable[[], T]) -> T:
    """Run `fetch` (reads only) under `limits`; stop waiting for it at the deadline."""
    values: list[T] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            values.append(fetch())
        except BaseException as exc:  # handed to the caller's thread, re-raised there
            errors.append(exc)

    meter.start(limits)
    worker = threading.Thread(target=work, name="infx-github-reads", daemon=True)
    worker.start()
    worker.join(limits.seconds)
    if worker.is_alive():
        meter.abandon()
        raise GitHubError(
            f"gave up waiting for the GitHub API: a decision may take at most {limits.seconds:g} s"
        )
    meter.stop()
    if errors:
        raise errors[0]
    return values[0]
