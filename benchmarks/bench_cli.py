"""Whole-process timings: what a user waits for, start-up included.

Builds a tmp git repository laid out like InferenceX (../shared/inferencex: the real
history, configs/ with deprecated/, runners.yaml) with one appended entry, or a synthetic
one when the shared data is absent, and times (median of --runs subprocess runs):
`infx --help`, `infx changelog check --help`, the gate, the plan for one changed config
key, and `infx sweep validate`, each next to its target (issue #8). With --reference
PATH (a checkout of InferenceX, for its utils/) and --reference-python (a Python with
pydantic and PyYAML), InferenceX's own gate and planner run side by side on the same
repository and the speed-ups are printed.

Run: python benchmarks/bench_cli.py [--runs 7] [--reference ~/InferenceX --reference-python PY]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "inferencex"
# The console script a user runs; `python -m infx` when infx is not installed as one.
_SCRIPT = Path(sys.executable).with_name("infx")
INFX = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "infx"]
KEY = "dsv4-fp4-mi355x-vllm"
ENTRY = (
    f'\n- config-keys:\n    - {KEY}\n  description:\n    - "Switch the MoE backend to aiter"\n'
    "  pr-link: XXX\n"
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def synthetic(repo: Path) -> None:
    history = (
        "".join(
            f'- config-keys:\n    - {KEY}\n  description:\n    - "change {i}"\n'
            f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{i + 1}\n\n"
            for i in range(1000)
        ).rstrip("\n")
        + "\n"
    )
    (repo / "perf-changelog.yaml").write_text(history)
    (repo / "configs").mkdir()
    master = "".join(
        f"{KEY if i == 0 else f'cfg{i}-fp8-mi355x-vllm'}:\n  image: img:{i}\n  model: org/m{i}\n"
        f"  model-prefix: m{i}\n  runner: mi355x\n  precision: fp8\n  framework: vllm\n"
        "  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n"
        "      search-space:\n      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n"
        for i in range(200)
    )
    (repo / "configs" / "amd-master.yaml").write_text(master)
    (repo / "configs" / "runners.yaml").write_text("labels:\n  mi355x: [mi355x-amds_00]\n")


def build(root: Path, reference: Path | None) -> tuple[Path, str]:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    if (SHARED / "configs").is_dir():
        shutil.copytree(SHARED / "configs", repo / "configs")
        shutil.copy(SHARED / "perf-changelog.yaml", repo / "perf-changelog.yaml")
        what = "the real InferenceX layout (../shared/inferencex)"
    else:
        synthetic(repo)
        what = "a synthetic history of 1,000 entries and 200 configs"
    if reference is not None:
        shutil.copytree(reference / "utils", repo / "utils")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    with (repo / "perf-changelog.yaml").open("a") as fh:
        fh.write(ENTRY)
    git(repo, "commit", "-qam", "entry")
    return repo, what


def median_ms(command: list[str], repo: Path, runs: int, env: dict[str, str]) -> float:
    subprocess.run(command, cwd=repo, capture_output=True, env=env)  # warm the page cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=repo, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} failed: {proc.stderr.decode()[-500:]}")
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--reference", type=Path, help="an InferenceX checkout (for utils/)")
    parser.add_argument("--reference-python", default="python3")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_"))}
    ref_env = dict(env)
    if args.reference is not None:
        # The reference planner calls `python3` for its generator: make that the given Python.
        bin_dir = Path(tempfile.mkdtemp(prefix="infx-bench-bin-"))
        (bin_dir / "python3").symlink_to(
            shutil.which(args.reference_python) or args.reference_python
        )
        ref_env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"

    with tempfile.TemporaryDirectory(prefix="infx-bench-") as tmp:
        repo, what = build(Path(tmp), args.reference)
        print(f"{args.runs} runs each, median, on {what}\n")
        gate = [*INFX, "changelog", "check", "--base", "HEAD~1", "--head", "HEAD", "--pr", "3058"]
        gate += ["--repo", "SemiAnalysisAI/InferenceX"]
        plan = [*INFX, "sweep", "plan", "--base", "HEAD~1", "--head", "HEAD"]
        base = median_ms([sys.executable, "-c", "import click"], repo, args.runs, env)
        rows = [
            ("python -c 'import click'", base, None),
            ("infx --help", median_ms([*INFX, "--help"], repo, args.runs, env), base + 100),
            (
                "infx changelog check --help",
                median_ms([*INFX, "changelog", "check", "--help"], repo, args.runs, env),
                base + 100,
            ),
            ("infx changelog check (1 appended entry)", median_ms(gate, repo, args.runs, env), 150),
            (f"infx sweep plan ({KEY})", median_ms(plan, repo, args.runs, env), 300),
            (
                "infx sweep validate (every config)",
                median_ms([*INFX, "sweep", "validate"], repo, args.runs, env),
                500,
            ),
        ]
        ok = True
        for name, ms, target in rows:
            verdict = (
                ""
                if target is None
                else f"target < {target:.0f} ms  {'ok' if ms < target else 'MISSED'}"
            )
            ok = ok and (target is None or ms < target)
            print(f"{name:<48} {ms:8.1f} ms   {verdict}")
        if args.reference is not None:
            py = args.reference_python
            ref_gate = [py, "utils/validate_perf_changelog.py", "--changelog-file",
                        "perf-changelog.yaml", "--base-ref", "HEAD~1", "--head-ref", "HEAD"]  # fmt: skip
            ref_plan = [py, "utils/process_changelog.py", "--changelog-file",
                        "perf-changelog.yaml", "--base-ref", "HEAD~1", "--head-ref", "HEAD"]  # fmt: skip
            runs = max(3, args.runs // 2)
            gate_ref = median_ms(ref_gate, repo, runs, ref_env)
            plan_ref = median_ms(ref_plan, repo, runs, ref_env)
            gate_ratio, plan_ratio = gate_ref / rows[3][1], plan_ref / rows[4][1]
            print(f"\nInferenceX gate (validate_perf_changelog.py)     {gate_ref:8.1f} ms   "
                  f"infx is {gate_ratio:.1f}x faster (target >= 25x)")  # fmt: skip
            print(f"InferenceX planner (process_changelog.py)        {plan_ref:8.1f} ms   "
                  f"infx is {plan_ratio:.1f}x faster (target >= 15x)")  # fmt: skip
            ok = ok and gate_ratio >= 25 and plan_ratio >= 15
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
