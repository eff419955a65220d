"""Which InferenceX format a repository is on, from its data (`infx.matrix.era.choose`)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from infx.errors import ConfigError
from infx.matrix.era import choose
from infx.matrix.load import _READ_APART, _ruamel_yaml11, load_yaml, parse_masters
from tests.conftest import SHARED

SEEDERA = SHARED.parent / "inferencex-seedera"

SINGLE = """\
llama:
  image: i
  model: m
  model-prefix: llama
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - { isl: 1024, osl: 1024, search-space: [{ tp: 8, conc-list: [4] }] }
"""
DISAGG = """\
dsr1-disagg:
  image: i
  model: m
  model-prefix: dsr1
  runner: mi355x
  precision: fp4
  framework: sglang-disagg
  multinode: true
  disagg: true
  kv-p2p-transfer: mori
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [8]
        prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
"""
WORKER = """\
glm-agg:
  image: i
  model: m
  model-prefix: glm5
  runner: cluster:gb300-nv
  precision: fp8
  framework: dynamo-vllm
  multinode: true
  scenarios:
    agentic-coding:
    - search-space:
      # worker: in a comment is no evidence
      - { conc-list: [4], num-nodes: 2, worker: { tp: 8, ep: 1, dp-attn: false } }
"""
PAIRED = """\
glm-paired:
  image: i
  model: m
  model-prefix: glm5
  runner: cluster:gb300-nv
  precision: fp8
  framework: dynamo-vllm
  multinode: true
  scenarios:
    agentic-coding:
    - search-space:
      - conc-list: [4]
        prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 0, tp: 8, ep: 1, dp-attn: false }
"""
NO_EVALS = (
    b'- config-keys:\n    - llama\n  description:\n    - "x"\n  no-evals: true\n  pr-link: XXX\n'
)


CLUSTERS = b"labels:\n  cluster:mi355x-amds: [mi355x-amds_0]\nclusters:\n  mi355x-amds: {gpus-per-node: 8}\n"


def _masters(*configs: str):  # type: ignore[no-untyped-def]
    return parse_masters({"configs/amd-master.yaml": "\n".join(configs).encode()})


def test_nothing_tells_them_apart_the_newest() -> None:
    choice = choose(_masters(SINGLE, DISAGG), runners=CLUSTERS)
    assert choice.format.name == "e2e"
    assert choice.reason == (
        "the newest known; configs/runners.yaml:3 has a `clusters:` section, which pr3058 refuses"
    )
    # Without `clusters:` in runners.yaml the newest that can plan it is pr3058.
    choice = choose(_masters(SINGLE, DISAGG))
    assert choice.format.name == "pr3058"
    assert choice.reason == (
        "configs/runners.yaml has no `clusters:` section (no such file), which e2e refuses"
    )


def test_a_worker_config_means_pr3058() -> None:
    choice = choose(_masters(SINGLE, WORKER), runners=b"labels: {}\nhardware: {}\n")
    assert choice.format.name == "pr3058"
    assert choice.reason.startswith(
        "configs/runners.yaml:2 has a `hardware:` section, which e2e refuses; "
        "configs/amd-master.yaml:13: glm-agg has"
    )
    assert "which pr2707 refuses" in choice.reason


def test_a_paired_aggregate_config_means_pr2707() -> None:
    choice = choose(_masters(DISAGG, PAIRED))
    assert choice.format.name == "pr2707"
    assert choice.reason == (
        "configs/amd-master.yaml:20: glm-paired has an aggregate (disagg: false) "
        "prefill/decode pair, which pr3058 refuses"
    )


def test_a_changelog_key_counts_too() -> None:
    with pytest.raises(ConfigError) as refused:
        choose(_masters(PAIRED), NO_EVALS)
    message = str(refused.value)
    assert "no known InferenceX format accepts this repository" in message
    assert "perf-changelog.yaml:5 has changelog key 'no-evals', which pr2707 refuses" in message
    assert "glm-paired has an aggregate" in message and "which pr3058 refuses" in message


def test_the_setting_wins_and_an_unknown_one_is_named() -> None:
    assert choose(_masters(WORKER), pinned="pr2707").format.name == "pr2707"
    with pytest.raises(ConfigError, match="unknown format 'pr9999'; known formats: pr2707, pr3058"):
        choose(_masters(SINGLE), pinned="pr9999")


PEEK = """\
import sys
from pathlib import Path
import ruamel.yaml  # as the gate has it loaded: its changelog is read with ruamel
from infx.matrix.load import parse_masters
masters = parse_masters({str(p): p.read_bytes() for p in sorted(Path(sys.argv[1]).glob("*-master.yaml"))})
peeked = {key: masters.peek(key) for key in masters.sources}
assert "yaml" not in sys.modules, "peek loaded PyYAML"
read = {key: masters.config(key) for key in masters.sources}
different = [key for key in read if read[key] != peeked[key]]
print(len(read), different)
"""


@pytest.mark.parametrize("data", [SHARED, SEEDERA], ids=["pr2707", "seed-era"])
def test_the_gates_glance_at_a_config_reads_what_the_plan_reads(data: Path) -> None:
    """The gate tells the format from a few configs through ruamel at YAML 1.1, sparing
    PyYAML's start-up; every real config must read the same as PyYAML reads it."""
    if not (data / "configs").is_dir():
        pytest.skip(f"{data} is absent")
    done = subprocess.run(
        [sys.executable, "-c", PEEK, str(data / "configs")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    count, different = done.stdout.split(" ", 1)
    assert int(count) > 90 and different.strip() == "[]"


def test_yaml_1_1_words_read_alike_through_either_loader() -> None:
    text = "k:\n  a: yes\n  b: off\n  c: 017\n  d: 1:20\n  e: 0o17\n  f: ~\n"
    done = subprocess.run(
        [sys.executable, "-c", "import ruamel.yaml, sys; from infx.matrix.load import "
         "parse_masters; m = parse_masters({'c.yaml': sys.stdin.buffer.read()}); "
         "print(repr(m.peek('k')), 'yaml' in sys.modules)"],
        input=text, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = "{'a': True, 'b': False, 'c': 15, 'd': 80, 'e': '0o17', 'f': None} False"
    assert done.stdout.strip() == expected


# Plain scalars YAML 1.1 readers disagree on (and some they agree on), in block and flow.
FORMS = [
    "1e3",
    "1.0e3",
    "1.e3",
    "-1e-3",
    "1E+3",
    "12e03",
    "1.0_0e3",
    "+.5e5",
    ".5e3",
    "0.5E-3",
    "6.8523015e+5",
    "685.230_15e+03",
    "+1.5",
    ".5",
    "5.",
    "1_000.5",
    "0x1F",
    "0b101",
    "017",
    "0o17",
    "08",
    "1:20",
    "1:20.5",
    "-1:20",
    "190:20:30",
    "190:20:30.15",
    "0.",
    ".inf",
    "-.inf",
    ".NaN",
    "NaN",
    "1_000",
    "+12",
    "-0",
    "-0.0",
    "y",
    "Y",
    "n",
    "N",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "TRUE",
    "tRue",
    "null",
    "~",
    "=",
]


def _typed(value: object) -> object:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, repr(value))


def _read(loader: Callable[[bytes], object], text: bytes) -> object:
    try:
        return _typed(loader(text))
    except Exception as exc:  # either reader's refusal, by kind
        return type(exc).__name__


@pytest.mark.parametrize("form", FORMS)
def test_the_glance_reads_a_yaml_1_1_scalar_as_pyyaml_or_leaves_it_to_pyyaml(form: str) -> None:
    """ruamel at YAML 1.1 reads `y`, `n`, `=` and exponents without a dot or sign apart
    from PyYAML (`multinode: n` is a string to one, false to the other): the glance must
    hand every block holding such a scalar to PyYAML, so the gate and the plan never read
    one config two ways."""
    blocks = [f"k:\n  a: {form}\n", f"k:\n  c:\n  - {form}\n"]
    if ":" not in form:
        blocks += [f"k:\n  b: [{form}, x]\n", f"k:\n  d: {{e: {form}}}\n"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns of a float without a dot
        for block in map(str.encode, blocks):
            if _READ_APART.search(block):
                continue
            assert _read(_ruamel_yaml11().load, block) == _read(load_yaml, block), block


def test_a_key_is_found_whole_never_as_the_tail_of_a_longer_one() -> None:
    from infx.matrix.era import _keys_pattern

    pattern = _keys_pattern({"worker", "srt-recipe", "eval-srt-recipe"})
    text = b"a:\n  num-worker: 2\n  eval-srt-recipe: x\n  - {worker: 1}\n  my_worker: 3\nworker :\n"
    assert [m.group(1) for m in pattern.finditer(text)] == [
        b"eval-srt-recipe", b"worker", b"worker"
    ]  # fmt: skip
