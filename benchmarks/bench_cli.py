"""Whole-process timings: what a user waits for, start-up included.

Builds a tmp git repository laid out like InferenceX (../shared/inferencex: the real
history, configs/ with deprecated/, runners.yaml) with one appended entry, or a synthetic
one when the shared data is absent, and times (median of --runs subprocess runs, after a
warm-up, with bytecode caching on as in an installed infx: PYTHONDONTWRITEBYTECODE is
dropped): `infx --help`, `infx changelog check --help`, the gate, the plan for one changed
config key, and `infx sweep validate`, each next to its target (issue #8).

With --reference, InferenceX's own gate (utils/validate_perf_changelog.py) and planner
(utils/process_changelog.py) run on the same repository, each run alternating with
infx's so that a busy machine slows both alike, and the ratios are printed against their
targets (issue #30: gate >= 30x, plan >= 20x). --reference is a checkout of InferenceX
or its git directory (a bare mirror: utils/ at --reference-rev is extracted into the
temporary folder, never into this repository); --reference-python is a Python with
pydantic and PyYAML (its planner also calls `python3`, which is made that Python).

Run: python benchmarks/bench_cli.py [--runs 7] [--reference ~/InferenceX | MIRROR.git
     [--reference-rev 843c6254f]] [--reference-python PY]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "inferencex"
# The console script a user runs; `python -m infx` when infx is not installed as one.
_SCRIPT = Path(sys.executable).with_name("infx")
INFX = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "infx"]
KEY = "dsv4-fp4-mi355x-vllm"
# The libraries the gate and the plan load: the CLI, the changelog's YAML reader and the
# schema verdicts (the house's own picks: click, ruamel.yaml, jsonschema-rs).
_FLOOR = "import click, ruamel.yaml, jsonschema_rs"
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


def timed(
    command: list[str], repo: Path, env: dict[str, str], ok: tuple[int, ...]
) -> tuple[float, float]:
    """One run's wall and CPU seconds (its own and its children's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=repo, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        out = (proc.stdout + proc.stderr).decode(errors="replace")[-800:]
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}: {out}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def median_ms(command: list[str], repo: Path, runs: int, env: dict[str, str]) -> float:
    timed(command, repo, env, (0, 1))  # warm the page cache and write the bytecode
    return statistics.median(timed(command, repo, env, (0, 1))[0] for _ in range(runs)) * 1000


def side_by_side(
    ours: list[str], theirs: list[str], repo: Path, runs: int, envs: tuple[dict[str, str], ...]
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Each command `runs` times, alternating, after one warm-up each; the reference must pass."""
    timed(ours, repo, envs[0], (0,))
    timed(theirs, repo, envs[1], (0,))
    mine, ref = [], []
    for _ in range(runs):
        mine.append(timed(ours, repo, envs[0], (0,)))
        ref.append(timed(theirs, repo, envs[1], (0,)))
    return mine, ref


def reference_utils(given: Path, rev: str, into: Path) -> Path:
    """A folder holding InferenceX's utils/: the checkout itself, or utils/ at `rev`
    extracted from a git directory (a bare mirror)."""
    if (given / "utils").is_dir():
        return given
    archive = subprocess.run(
        ["git", "--git-dir", str(given), "archive", "--format=tar", rev, "utils"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--reference", type=Path, help="an InferenceX checkout, or its git directory (a mirror)"
    )
    parser.add_argument(
        "--reference-rev", default="843c6254f", help="the commit of a git directory's utils/"
    )
    parser.add_argument("--reference-python", default="python3")
    args = parser.parse_args()
    drop = ("GITHUB_", "INFX_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    ref_env = dict(env)
    with tempfile.TemporaryDirectory(prefix="infx-bench-") as tmp:
        reference = None
        if args.reference is not None:
            reference = reference_utils(args.reference, args.reference_rev, Path(tmp) / "ref")
            # The reference planner calls `python3` for its generator: make that the given Python.
            bin_dir = Path(tmp) / "bin"
            bin_dir.mkdir()
            python = shutil.which(args.reference_python) or args.reference_python
            real = subprocess.run(
                [python, "-c", "import sys; print(sys.executable)"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            (bin_dir / "python3").symlink_to(real)
            ref_env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        repo, what = build(Path(tmp), reference)
        print(f"{args.runs} runs each, median, on {what}\n")
        gate = [*INFX, "changelog", "check", "--base", "HEAD~1", "--head", "HEAD", "--pr", "3058"]
        gate += ["--repo", "SemiAnalysisAI/InferenceX"]
        plan = [*INFX, "sweep", "plan", "--base", "HEAD~1", "--head", "HEAD"]
        base = median_ms([sys.executable, "-c", "import click"], repo, args.runs, env)
        # What the house's libraries alone cost before infx runs a line: the floor under
        # the ratio targets (issue #30), printed beside them.
        floor = median_ms([sys.executable, "-c", _FLOOR], repo, args.runs, env)
        rows = [
            ("python -c 'import click'", base, None),
            ("python -c 'import click, ruamel.yaml, jsonschema_rs'", floor, None),
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
        if reference is not None:
            py = str(bin_dir / "python3")
            ref_gate = [py, "utils/validate_perf_changelog.py", "--changelog-file",
                        "perf-changelog.yaml", "--base-ref", "HEAD~1", "--head-ref", "HEAD"]  # fmt: skip
            ref_plan = [py, "utils/process_changelog.py", "--changelog-file",
                        "perf-changelog.yaml", "--base-ref", "HEAD~1", "--head-ref", "HEAD"]  # fmt: skip
            print(
                f"\nSide by side with InferenceX's own tools ({args.runs} runs each, alternating;"
            )
            print("median wall time, and median CPU time of the process and its children):")
            for name, ours, theirs, target in (
                ("gate", gate, ref_gate, 30),
                ("plan", plan, ref_plan, 20),
            ):
                mine, ref = side_by_side(ours, theirs, repo, args.runs, (env, ref_env))
                wall = [statistics.median(t[0] for t in side) * 1000 for side in (mine, ref)]
                cpu = [statistics.median(t[1] for t in side) * 1000 for side in (mine, ref)]
                ratio = wall[1] / wall[0]
                ok = ok and ratio >= target
                print(f"{name}: infx {wall[0]:7.1f} ms (CPU {cpu[0]:6.1f})   InferenceX "
                      f"{wall[1]:8.1f} ms (CPU {cpu[1]:7.1f})   infx is {ratio:.1f}x faster "
                      f"(CPU {cpu[1] / cpu[0]:.1f}x; target >= {target}x) "
                      f"{'ok' if ratio >= target else 'MISSED'}")  # fmt: skip
                allowed = wall[1] / target
                print(f"      the target allows infx {allowed:.0f} ms; the libraries alone take "
                      f"{floor:.0f}, leaving {allowed - floor:.0f} ms for infx's own imports "
                      f"and work, which take {wall[0] - floor:.0f}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
