"""GitHub API requests per reuse decision, counted at a local GitHub API stand-in.

Target (issue #4): a push-to-main reuse decision, every check included, in at most
10 requests for a PR with 150 comments and 40 sweep runs. The scenario includes the
merge helper's work after the source run (a merge of main and a pr-link commit), so
the "nothing but pr-link lines changed since the run" check does its full work.
Run: python benchmarks/bench_reuse_requests.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infx.github.client import GitHub
from infx.workflows.reuse import gate
from tests.github.fake_api import FakeGitHub

HEAD_AT_RUN, MERGE_MAIN, LINK_FIX, SQUASH = "a1" * 20, "d1" * 20, "a2" * 20, "c" * 40


def scenario(state) -> None:
    commits = [f"{i:02x}" * 20 for i in range(10, 20)] + [HEAD_AT_RUN, MERGE_MAIN, LINK_FIX]
    state.add_pull(
        7, head_sha=LINK_FIX, labels=["full-sweep-fail-fast"], merged=True, commits=commits
    )
    state.commit_pulls[SQUASH] = [7]
    state.label(7, "labeled", "sweep-enabled", 1)
    state.label(7, "unlabeled", "sweep-enabled", 40)
    state.label(7, "labeled", "full-sweep-fail-fast", 41)
    for i in range(149):
        state.add_comment(7, f"reviewer{i % 7}", f"review note {i}", 2 + i * 0.5, "CONTRIBUTOR")
    state.add_comment(7, "maintainer", "Sweep is green.\n/reuse-sweep-run\n", 200)
    state.permissions["maintainer"] = "write"
    for i in range(40):
        sha = commits[min(i // 4, 9)] if i < 39 else HEAD_AT_RUN
        state.add_run(
            5000 + i, head_sha=sha, minute=10 + i * 3, conclusion="success" if i % 5 else "failure"
        )
    state.compares[f"{HEAD_AT_RUN}...{LINK_FIX}"] = {
        "commits": [
            {"sha": MERGE_MAIN, "parents": [{"sha": HEAD_AT_RUN}, {"sha": "e" * 40}]},
            {"sha": LINK_FIX, "parents": [{"sha": MERGE_MAIN}]},
        ],
        "files": [
            {"filename": "configs/amd-master.yaml", "status": "modified", "patch": "@@\n-a\n+b"}
        ],
    }
    state.commits[LINK_FIX] = {
        "sha": LINK_FIX,
        "files": [
            {
                "filename": "perf-changelog.yaml",
                "status": "modified",
                "patch": "@@ -40 +40 @@\n-  pr-link: XXX\n+  pr-link: https://github.com/acme/bench/pull/7",
            }
        ],
    }


def main() -> int:
    with FakeGitHub() as api:
        os.environ["GITHUB_API_URL"] = api.url
        os.environ["GITHUB_TOKEN"] = "bench"
        scenario(api.state)
        start = time.perf_counter()
        result = gate(
            GitHub("acme/bench"),
            event_name="push",
            commit_sha=SQUASH,
            ref="refs/heads/main",
            workflow="run-sweep.yml",
        )
        elapsed = (time.perf_counter() - start) * 1000
        assert result.reuse_enabled, result.reason
        print(f"decision: {result.reason}")
        print(
            f"requests: {len(api.state.requests)} (target <= 10), {elapsed:.0f} ms against a local server"
        )
        for method, path in api.state.requests:
            print(f"  {method} {path}")
        return 0 if len(api.state.requests) <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
