"""Gate latency for one appended entry against histories of growing size.

Target (issue #2): the cost follows the appended bytes, not the history:
100k entries within 3x of 1k; the real InferenceX history with one appended
entry under 50 ms in process. Run: python benchmarks/bench_changelog.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from infx.changelog.check import check
from infx.changelog.links import LinkPolicy

REPO = "acme/bench"
POLICY = LinkPolicy(repo=REPO, pr=100001)
SHARED = Path(__file__).resolve().parents[2] / "shared" / "inferencex"
KEYS = [f"model{i}-fp8-mi355x-vllm" for i in range(200)]
NEW = (
    b"\n- config-keys:\n    - model7-fp8-mi355x-vllm\n  scenario-type:\n    - fixed-seq-len\n"
    b'  description:\n    - "Raise the concurrency ceiling to 512 after the scheduler fix"\n'
    b"  pr-link: XXX\n"
)


def synthetic_history(count: int) -> bytes:
    """Entries shaped like the real ones (about 500 bytes each)."""
    parts = []
    for i in range(count):
        parts.append(
            f"- config-keys:\n    - model{i % 200}-fp8-mi355x-vllm\n  description:\n"
            f'    - "Bump the serving image of model {i % 200} to the {i}th nightly build and '
            f'retune the scheduler flags that the new build renamed"\n'
            f'    - "Throughput at concurrency 64 rises by {i % 17} percent with unchanged accuracy"\n'
            f"  pr-link: https://github.com/{REPO}/pull/{i + 1}\n"
        )
    return "\n".join(parts).encode()


def measure(
    base: bytes, keys: list[str], policy: LinkPolicy, new: bytes = NEW, repeat: int = 30
) -> float:
    head = base + new
    assert check(base, head, policy, keys).ok
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        check(base, head, policy, keys)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def end_to_end(history: bytes, repeat: int = 5) -> float:
    """`infx changelog check` as a process in a real repository holding the real configs."""
    import shutil
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "configs").mkdir()
        for path in (SHARED / "configs").glob("*.yaml"):
            shutil.copy(path, root / "configs" / path.name)
        (root / "perf-changelog.yaml").write_bytes(history)

        def git(*args: str) -> None:
            subprocess.run(
                ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
                cwd=root,
                check=True,
                capture_output=True,
            )

        git("init", "-q")
        git("add", "-A")
        git("commit", "-qm", "base")
        (root / "perf-changelog.yaml").write_bytes(
            history + NEW.replace(b"model7-fp8-mi355x-vllm", b"dsr1-fp4-mi355x-*")
        )
        cmd = [
            sys.executable,
            "-m",
            "infx",
            "changelog",
            "check",
            "--base",
            "HEAD",
            "--pr",
            "2800",
            "--repo",
            "SemiAnalysisAI/InferenceX",
        ]
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run(cmd, cwd=root, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000


def main() -> int:
    rows = []
    for count in (1_000, 10_000, 100_000):
        history = synthetic_history(count)
        rows.append(
            (f"synthetic {count:>7,} entries", len(history), measure(history, KEYS, POLICY))
        )
    real = SHARED / "perf-changelog.yaml"
    if real.is_file():
        from infx.matrix.load import parse_masters

        masters = {
            p.name: p.read_bytes() for p in sorted((SHARED / "configs").glob("*-master.yaml"))
        }
        keys = parse_masters(masters).keys()
        policy = LinkPolicy(repo="SemiAnalysisAI/InferenceX", pr=2800)
        rows.append(
            (
                "real InferenceX history",
                real.stat().st_size,
                measure(
                    real.read_bytes(),
                    keys,
                    policy,
                    NEW.replace(b"model7-fp8-mi355x-vllm", b"dsr1-fp4-mi355x-*"),
                ),
            )
        )
    if real.is_file():
        rows.append(
            ("real history, CLI end to end", real.stat().st_size, end_to_end(real.read_bytes()))
        )
    for name, size, ms in rows:
        print(f"{name:<28} {size / 1e6:8.2f} MB  median {ms:7.2f} ms")
    ratio = rows[2][2] / rows[0][2]
    print(f"100k / 1k ratio: {ratio:.2f}x (target <= 3x)")
    ok = ratio <= 3
    if len(rows) > 3:
        print(f"real history: {rows[3][2]:.2f} ms (target < 50 ms)")
        ok = ok and rows[3][2] < 50
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
