"""A real aiperf run, end to end: recipe -> aiperf -> process -> collect -> compare -> comment + PNG.

Two sweeps of the repository's own agentic rows run against a local OpenAI-compatible
server: "main" with 20 ms per token, the "PR" with 10 ms. The comparison must say the PR
halved ITL/TPOT and TTFT, doubled interactivity and raised throughput per GPU. Skipped
without the `aiperf` extra (pip install -e '.[aiperf]').

`INFX_UPDATE_README=1 pytest tests/results/compare/test_end_to_end.py` writes the comment body this
test produces into docs/results.md; otherwise the test checks that the page still shows a
body of today's shape.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.matrix.rows import row_env
from tests.github.fake_api import State
from tests.results.formats import ROOT, agentic_rows
from tests.results.openai_server import OpenAIServer

AIPERF = shutil.which("aiperf") or str(Path(sys.executable).with_name("aiperf"))
pytestmark = pytest.mark.skipif(
    not Path(AIPERF).is_file(), reason="aiperf is not installed (pip install -e '.[aiperf]')"
)
RECIPE = ROOT / "recipes/dsv41flash_fp4_mi355x_vllm_agentic.sh"
README = ROOT / "docs" / "results.md"  # the documentation page that shows the comment
START, END = "<!-- results-example:start -->", "<!-- results-example:end -->"
PLOT = ROOT / "docs/results-example.png"  # the plot of the same run, shown in the README
# Read at import: the suite's session fixture clears every INFX_* variable before tests run.
UPDATE = os.environ.get("INFX_UPDATE_README") == "1"
MAIN_DELAY, PR_DELAY = 0.020, 0.010
OUTPUT_TOKENS = 24


def make_tokenizer(folder: Path) -> Path:
    """A small word-level tokenizer saved in Hugging Face layout: aiperf needs one, and the
    test machine reaches no model hub."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["[UNK]", "<s>", "</s>", "tok"] + [f"w{i}" for i in range(500)]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", bos_token="<s>", eos_token="</s>"
    )
    fast.save_pretrained(folder)
    return folder


def run_sweep(side: Path, delay: float, rows: list[dict], tokenizer: Path) -> Path:
    """What one sweep's jobs and its collect job do, with the real recipe and aiperf."""
    bmk = side / "results_bmk"
    with OpenAIServer(token_delay=delay) as server:
        for index, row in enumerate(rows):
            folder = bmk / f"bmk_agentic_{row['exp-name']}_{index}"
            env = {
                "PATH": os.environ["PATH"],
                "HOME": str(side),
                **row_env(row),
                "RESULTS_DIR": str(folder),
                "RUNNER_NAME": "mi355x-amds_03",
                "SERVER_URL": server.url,
                "BENCH_AIPERF": AIPERF,
                "BENCH_TOKENIZER": str(tokenizer),
                "BENCH_WORKLOAD": (
                    f"--request-count {max(8, 2 * row['conc'])} "
                    "--prompt-input-tokens-mean 64 --prompt-input-tokens-stddev 0 "
                    f"--prompt-output-tokens-mean {OUTPUT_TOKENS} "
                    "--prompt-output-tokens-stddev 0 --no-server-metrics"
                ),
            }
            done = subprocess.run(
                ["bash", str(RECIPE)], env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            processed = CliRunner().invoke(cli, ["results", "process"], env=env)
            assert processed.exit_code == 0, processed.output
    collected = CliRunner().invoke(
        cli, ["results", "collect", str(bmk), "--out-dir", str(bmk)], env={"GITHUB_RUN_ID": ""}
    )
    assert collected.exit_code == 0, collected.output
    return bmk / "results.json"


def upload(state: State, table: Path, run_id: int) -> None:
    """Publish a results table as a push-to-main sweep's results_bmk artifact."""
    state.add_run(
        run_id,
        head_sha="c0ffee" + "0" * 34,
        minute=100,
        branch="main",
        event="push",
        artifacts=["results_bmk"],
    )
    archive = table.parent / "results_bmk.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(table, "results.json")
    state.blobs[run_id * 100] = archive.read_bytes()


def cells(body: str, conc: int) -> list[str]:
    """The comment's table row for a concurrency, as its cells."""
    line = next(x for x in body.splitlines() if x.startswith(f"| {conc} |"))
    return [c.strip() for c in line.strip("|").split("|")]


CELL = re.compile(r"^([\d.,]+) → ([\d.,]+) \(([+-][\d.]+)%(?: ±[\d.]+)?\)(?: (\S+))?$")


def change(cell: str) -> tuple[float, float, float, str | None]:
    match = CELL.match(cell)
    assert match, cell
    before, after, pct, mark = match.groups()
    return float(before.replace(",", "")), float(after.replace(",", "")), float(pct), mark


def shape(text: str) -> list[str]:
    """A comment with its numbers and marks masked: what stays the same run to run. A check
    near its band may be marked in one run and within noise (unmarked) in the next, so
    marks are dropped, not masked; the verdicts that matter are asserted above."""
    text = re.sub(r"[+-]?[0-9][0-9.,]*", "N", text)  # a change near zero flips its sign
    text = re.sub(r" ?[🟢🔴⚪🟠🆕]", "", text)
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("e2e")
    tokenizer = make_tokenizer(root / "tokenizer")
    rows = [r for r in agentic_rows() if r["conc"] in (1, 4)]
    assert len(rows) == 2
    return (
        run_sweep(root / "main", MAIN_DELAY, rows, tokenizer),
        run_sweep(root / "pr", PR_DELAY, rows, tokenizer),
    )


def test_measured_latencies_follow_the_server(sweeps: tuple[Path, Path]) -> None:
    for table, delay in zip(sweeps, (MAIN_DELAY, PR_DELAY), strict=True):
        doc = json.loads(table.read_text())
        assert [r["identity"]["conc"] for r in doc["rows"]] == [1, 4]
        for row in doc["rows"]:
            m = row["metrics"]
            assert row["client"] == "aiperf" and row["gpus"] == {"total": 8}
            assert delay <= m["mean_itl"] < delay * 1.6
            assert m["mean_tpot"] == m["mean_itl"]
            assert delay <= m["mean_ttft"] < delay * 4  # a busy shared machine adds queueing
            assert m["mean_intvty"] == pytest.approx(1 / m["mean_tpot"])
            # conc streams each produce a token per delay: 8 GPUs share that rate.
            ceiling = row["identity"]["conc"] / delay / 8
            assert 0.4 * ceiling < m["output_tput_per_gpu"] <= ceiling
            assert m["tput_per_gpu"] == pytest.approx(m["total_tput"] / 8)


def test_compare_reports_direction_and_magnitude(
    sweeps: tuple[Path, Path], api, tmp_path: Path
) -> None:
    main_table, pr_table = sweeps
    upload(api.state, main_table, 5150)
    api.state.add_pull(7, head_sha="e" * 40)  # the PR its acknowledgements are read from
    plots = tmp_path / "plots"
    args = ["results", "compare", str(pr_table), "--pr", "7", "--plots", str(plots)]
    args += ["--check-sha", "e" * 40]
    outcome = CliRunner().invoke(cli, args, env={"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})
    assert outcome.exit_code == 0, outcome.output
    (comment,) = [c for c in api.state.comments if c["user"]["login"] == "github-actions[bot]"]
    assert [c["conclusion"] for c in api.state.check_runs["e" * 40]] == ["success"]
    body = comment["body"]
    assert "newest [5150](<https://github.com/acme/bench/actions/runs/5150>)" in body
    assert body.splitlines()[3].startswith("**🟢 improved**")
    assert "Points: 2 improved · 0 regressed · 0 within noise · 0 new · 0 missing." in body
    for conc in (1, 4):
        row = cells(body, conc)
        assert row[1] == "🟢 improved"
        tput, ttft50, _, tpot50, _ = (change(c) for c in row[2:7])
        intvty = change(row[7])
        assert -60 < tpot50[2] < -35 and tpot50[3] == "🟢", tpot50
        assert -60 < ttft50[2] < -10, ttft50  # TTFT is noisier than TPOT on a busy machine
        assert 60 < intvty[2] < 150 and intvty[3] is None, intvty  # shown, not judged
        assert 30 < tput[2] < 150 and tput[3] == "🟢", tput
        assert 18 < tpot50[0] < 32 and 9 < tpot50[1] < 16  # ms, as measured
    (png,) = plots.glob("*.png")
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "1 PNG(s) in the `results_compare` artifact" in body

    if UPDATE:
        PLOT.parent.mkdir(exist_ok=True)
        PLOT.write_bytes(png.read_bytes())
        text = README.read_text()
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        block = f"{START}\n````markdown\n{body.rstrip()}\n````\n{END}"
        README.write_text(head + block + tail)
    shown = README.read_text().split(START, 1)[1].split(END, 1)[0]
    shown = shown.strip().removeprefix("````markdown").removesuffix("````")
    assert shape(shown) == shape(body), "README's example comment is stale: see module docstring"
    assert PLOT.read_bytes().startswith(b"\x89PNG"), "run with INFX_UPDATE_README=1"
