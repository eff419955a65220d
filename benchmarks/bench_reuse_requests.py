"""GitHub API requests and wall time of one reuse decision, healthy and under each fault.

The decision is `infx reuse gate` for a push to main, against the local GitHub API
stand-in (tests/github/fake_api.py) serving a real git repository. The PR has 150
comments and 40 sweep runs; after its sweep ran, main gained an entry and an edit to the
same master config, the PR merged main and fixed its pr-link, so every check does its
full work. Each fault is then injected into that same PR.

Targets: the healthy decision reuses in at most 20 requests; every fault ends in no
reuse with a reason, within 100 requests and the decision's time cap (120 s by default;
`--seconds N` sets INFX_API_SECONDS, e.g. 5 for a quick run).
Run: python benchmarks/bench_reuse_requests.py [--seconds N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from click.testing import CliRunner

from infx.cli import cli
from tests.conftest import LINK, MASTER
from tests.github.fake_api import HTML, FakeGitHub, Fault, State
from tests.github.scenario import MAIN_ENTRY, PR_ENTRY, changelog, seeded_origin

SQUASH = "c" * 40
AMD = "configs__amd-master.yaml"
HEALTHY_TARGET = 20
REQUEST_CAP = 100


def build_origin(tmp: Path) -> tuple[Path, list[str], str]:
    """origin.git: the PR's entry, a tuned config (the swept commit), main's entry and
    edit to the same file merged in, then the canonical link. Returns the PR's commits
    and the swept one."""
    origin, branch = seeded_origin(tmp)
    first = branch.commit("entry", **{"perf-changelog.yaml": changelog(PR_ENTRY)})
    swept = branch.commit(**{AMD: MASTER.replace("conc-end: 32", "conc-end: 48")})
    branch.on_main(
        **{
            "perf-changelog.yaml": changelog(MAIN_ENTRY),
            AMD: MASTER.replace("conc-end: 64", "conc-end: 128"),
        }
    )
    branch.merge_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY)})
    branch.commit(
        "link", **{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7")}
    )
    commits = branch.work.git("rev-list", "--reverse", "main..feature").split()
    assert first in commits and swept in commits
    return origin, commits, swept


def healthy(state: State, origin: Path, commits: list[str], swept: str) -> None:
    state.git_remote = str(origin)
    state.add_pull(7, head_sha=commits[-1], labels=["full-sweep-fail-fast"], merged=True)
    state.commit_pulls[SQUASH] = [7]
    state.label(7, "labeled", "sweep-enabled", 1)
    state.label(7, "unlabeled", "sweep-enabled", 40)
    state.label(7, "labeled", "full-sweep-fail-fast", 41)
    for i in range(149):
        state.add_comment(7, f"reviewer{i % 7}", f"review note {i}", 2 + i * 0.5, "CONTRIBUTOR")
    state.add_comment(7, "maintainer", "Sweep is green.\n/reuse-sweep-run\n", 200)
    state.permissions["maintainer"] = "write"
    for i in range(39):
        sha = commits[0] if i < 20 else swept
        state.add_run(
            5000 + i, head_sha=sha, minute=10 + i * 3, conclusion="success" if i % 5 else "failure"
        )
    state.add_run(5039, head_sha=swept, minute=130)


FAULTS: dict[str, Callable[[State], None]] = {
    "compare answers an HTML page (200)": lambda s: s.faults.append(
        Fault(r"/compare/", raw=HTML, content_type="text/html", times=10**6)
    ),
    "compare answers {} (200)": lambda s: s.faults.append(
        Fault(r"/compare/", raw=b"{}", times=10**6)
    ),
    "comments answer malformed JSON": lambda s: s.faults.append(
        Fault(r"/issues/7/comments", raw=b'[{"id": 1, "body": "/reuse', times=10**6)
    ),
    "timeline answers an empty body": lambda s: s.faults.append(
        Fault(r"/timeline", raw=b"", times=10**6)
    ),
    "contents answer an HTML page": lambda s: s.faults.append(
        Fault(r"/contents/", raw=HTML, content_type="text/html", times=10**6)
    ),
    "comment pages link in a loop": lambda s: s.page_links.update({r"/issues/7/comments": "loop"}),
    "comment pages never end": lambda s: s.page_links.update({r"/issues/7/comments": "endless"}),
    "every request hangs": lambda s: s.faults.append(Fault(r"/", hang=True, times=10**6)),
    "1,000 newer runs without artifacts": lambda s: [
        s.add_run(20_000 + i, head_sha=s.runs[-1]["head_sha"], minute=140 + i / 100, artifacts=[])
        for i in range(1000)
    ],
    "200 read-only commenters ask": lambda s: [
        s.add_comment(7, f"drive-by{i}", "/reuse-sweep-run", 300 + i, "COLLABORATOR")
        for i in range(200)
    ],
}


def decide(origin: Path, tmp: Path, fault: Callable[[State], None] | None, commits, swept):
    copy = tmp / f"origin-{time.monotonic_ns()}.git"
    shutil.copytree(origin, copy)
    with FakeGitHub() as api:
        os.environ["GITHUB_API_URL"] = api.url
        healthy(api.state, copy, commits, swept)
        if fault:
            fault(api.state)
        output = tmp / "github_output"
        output.write_text("")
        args = ["reuse", "gate", "--repo", "acme/bench", "--commit-sha", SQUASH]
        args += ["--event-name", "push", "--ref", "refs/heads/main"]
        start = time.perf_counter()
        result = CliRunner().invoke(cli, args, env={"GITHUB_OUTPUT": str(output)})
        elapsed = time.perf_counter() - start
        requests = len(api.state.requests)
    outputs = {}
    if result.exit_code == 0:
        outputs = json.loads(result.stdout)
    else:
        lines = output.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("reuse-enabled<<") or line.startswith("reuse-reason<<"):
                outputs[line.split("<<")[0]] = lines[i + 1]
    return result.exit_code, outputs, requests, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="a decision's time cap (INFX_API_SECONDS)")
    args = parser.parse_args()
    if args.seconds:
        os.environ["INFX_API_SECONDS"] = str(args.seconds)
    cap = float(os.environ.get("INFX_API_SECONDS", "120"))
    os.environ["GITHUB_TOKEN"] = "bench"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="infx-bench-reuse-") as tmp_name:
        tmp = Path(tmp_name)
        origin, commits, swept = build_origin(tmp / "build")
        print(f"{'scenario':38} {'exit':>4} {'requests':>8} {'seconds':>8}  decision")
        for name, fault in [("healthy", None), *FAULTS.items()]:
            code, out, requests, elapsed = decide(origin, tmp, fault, commits, swept)
            enabled = out.get("reuse-enabled") == "true"
            reason = out.get("reuse-reason", "")
            print(f"{name:38} {code:>4} {requests:>8} {elapsed:>8.2f}  {reason[:110]}")
            if name == "healthy" or name.startswith("1,000"):
                ok = enabled and requests <= HEALTHY_TARGET
            else:
                ok = not enabled and bool(reason) and requests <= REQUEST_CAP
            ok = ok and elapsed <= cap + 5
            failures += not ok
    print(
        f"targets: healthy <= {HEALTHY_TARGET} requests; faults end in no reuse within "
        f"{REQUEST_CAP} requests and {cap:g} s: {'met' if not failures else f'{failures} missed'}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
