"""GitHub API requests and wall time of one reuse decision: happy, pinned, refused, and under
each fault.

The decision is `infx reuse gate` for a push to main, run in a checkout of the pushed merge
commit (as the sweep workflow's reuse-gate job runs it), against the local GitHub API
stand-in (tests/github/fake_api.py) serving a real git repository. The PR has 150
comments and 40 sweep runs, each with the manifest its planning job wrote; after its
sweep ran, main gained an entry and an edit to the same master config (another config),
the PR merged main and fixed its pr-link, so every check does its full work. The wall
time includes planning what merges from the checkout.

Targets: the happy and pinned decisions reuse in at most 14 API requests (the issuer's
receipt of the source run costs three: its listing, its issuer run, its download); the refused one
names the config and field; every fault ends in no reuse with a reason, within 100
requests and the decision's time cap (120 s by default; `--seconds N` sets
INFX_API_SECONDS, e.g. 5 for a quick run).
Run: python benchmarks/bench_reuse_requests.py [--seconds N]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
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
from tests.github.scenario import (
    MAIN_ENTRY,
    PR_ENTRY,
    Green,
    changelog,
    inside,
    manifest_zip,
    open_pr,
    seed_origin,
)

AMD = "configs__amd-master.yaml"
HAPPY_TARGET = 14
REQUEST_CAP = 100
NEWEST = 5039
PINNED = 5031  # a run that passed: a failed one is never a source


def build(tmp: Path, state: State, *, main_retunes: bool) -> Green:
    """The PR, its 40 recorded runs and the squash merge; with `main_retunes`, main changed
    the PR's own config after the sweeps, so no run measured what merges."""
    origin, branch = seed_origin(tmp)
    first = branch.commit("entry", **{"perf-changelog.yaml": changelog(PR_ENTRY)})
    tuned = MASTER.replace("conc-end: 32", "conc-end: 48")
    swept = branch.commit(**{AMD: tuned})
    state.workdir = tmp / "api"
    green = open_pr(state, origin, first, swept, copy=False)
    green.branch = branch
    for i in range(40):
        sha = first if i < 20 else swept
        conclusion = "success" if i % 5 or i == 39 else "failure"
        green.record_run(5000 + i, sha, 10 + i * 3, conclusion=conclusion)
    other = MASTER.replace("conc-end: 64", "conc-end: 128")  # the SGLang config, not swept
    if main_retunes:  # and the image of the vLLM config the PR's sweeps measured
        other = other.replace("vllm-openai-rocm:v0.11.0", "vllm-openai-rocm:v0.11.1")
    branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY), AMD: other})
    branch.merge_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY)})
    branch.commit(
        "link", **{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7")}
    )
    green.merge()
    return green


def seed(state: State, built: State) -> None:
    """A fresh copy of the built state: the PR, its runs and their artifacts, merged."""
    for name in ("pulls", "issues", "pull_commits", "runs", "artifacts", "timeline", "blobs"):
        setattr(state, name, copy.deepcopy(getattr(built, name)))
    state.commit_pulls = dict(built.commit_pulls)
    state.git_remote = built.git_remote
    for i in range(149):
        state.add_comment(7, f"reviewer{i % 7}", f"review note {i}", 2 + i * 0.5, "CONTRIBUTOR")
    state.add_comment(7, "maintainer", "Sweep is green.\n/reuse-sweep-run\n", 200)
    state.permissions["maintainer"] = "write"


def _manifest_download(s: State) -> None:
    s.faults.append(Fault(r"/actions/artifacts/\d+/zip", raw=HTML, content_type="text/html"))


FAULTS: dict[str, Callable[[State], None]] = {
    "manifest download answers an HTML page": _manifest_download,
    "run artifacts answer {} (200)": lambda s: s.faults.append(
        Fault(rf"/actions/runs/{NEWEST}/artifacts", raw=b"{}", times=10**6)
    ),
    "comments answer malformed JSON": lambda s: s.faults.append(
        Fault(r"/issues/7/comments", raw=b'[{"id": 1, "body": "/reuse', times=10**6)
    ),
    "PR commits answer an empty body": lambda s: s.faults.append(
        Fault(r"/pulls/7/commits", raw=b"", times=10**6)
    ),
    "the manifest is not a manifest": lambda s: s.blobs.update(
        {
            a["id"]: manifest_zip({"format": "something else"})
            for a in s.artifacts[NEWEST]
            if a["name"] == "sweep-manifest"
        }
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


def decide(green: Green, built: State, tmp: Path, change: Callable[[State], None] | None):
    with FakeGitHub() as api:
        os.environ["GITHUB_API_URL"] = api.url
        seed(api.state, built)
        if change:
            change(api.state)
        output = tmp / "github_output"
        output.write_text("")
        args = ["reuse", "gate", "--repo", "acme/bench", "--commit-sha", green.merged or ""]
        args += ["--before", green.before or "", "--event-name", "push", "--ref", "refs/heads/main"]
        green.runner.git("checkout", "-q", "--detach", green.merged or "")
        start = time.perf_counter()
        with inside(green.runner.path):
            result = CliRunner().invoke(cli, args, env={"GITHUB_OUTPUT": str(output)})
        elapsed = time.perf_counter() - start
        requests = api.state.api_requests()
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
    os.environ["GITHUB_REPOSITORY"] = "acme/bench"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="infx-bench-reuse-") as tmp_name:
        tmp = Path(tmp_name)
        happy_state, retuned_state = State(), State()
        green = build(tmp / "happy", happy_state, main_retunes=False)
        retuned = build(tmp / "retuned", retuned_state, main_retunes=True)

        def pin(s: State) -> None:
            s.add_comment(7, "maintainer", f"/reuse-sweep-run {PINNED}", 250)

        cases = [
            ("happy (newest green run)", green, happy_state, None, "reuse"),
            (f"pinned (run {PINNED})", green, happy_state, pin, "reuse"),
            ("refused (main retuned the config)", retuned, retuned_state, None, "refuse"),
            *((name, green, happy_state, fault, "fault") for name, fault in FAULTS.items()),
        ]
        print(f"{'decision':40} {'exit':>4} {'requests':>8} {'seconds':>8}  reason")
        for name, which, state, change, expect in cases:
            code, out, requests, elapsed = decide(which, state, tmp, change)
            enabled = out.get("reuse-enabled") == "true"
            reason = out.get("reuse-reason", "")
            print(f"{name:40} {code:>4} {requests:>8} {elapsed:>8.2f}  {reason[:110]}")
            if expect == "reuse" or name.startswith("1,000"):
                ok = enabled and requests <= HAPPY_TARGET
            elif expect == "refuse":
                ok = not enabled and "config llama-fp8-mi355x-vllm" in reason
            else:
                ok = not enabled and bool(reason) and requests <= REQUEST_CAP
            ok = ok and elapsed <= cap + 5
            failures += not ok
    print(
        f"targets: happy and pinned reuse in <= {HAPPY_TARGET} requests, refused names the "
        f"config, faults end in no reuse within {REQUEST_CAP} requests and {cap:g} s: "
        f"{'met' if not failures else f'{failures} missed'}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
