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
from infx.matrix.load import _ruamel_yaml11, load_yaml, parse_masters, plain
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


# Run with ruamel loaded and PyYAML not, as the gate and the plan run: the configs that are
# plain (most) are read by ruamel; each must be what PyYAML reads, and so must runners.yaml.
REAL = """\
import sys
from pathlib import Path
import ruamel.yaml  # as the gate and the plan have it loaded: the changelog is read with it
from infx.matrix.load import _ruamel_yaml11, parse_masters, plain
folder = Path(sys.argv[1])
masters = parse_masters({str(p): p.read_bytes() for p in sorted(folder.glob("*-master.yaml"))})
texts = [masters.text_of(key)[0] for key in masters.sources]
texts.append((folder / "runners.yaml").read_bytes())
read = [masters.config(key) for key in masters.sources if plain(masters.text_of(key)[0])]
assert "yaml" not in sys.modules, "a plain config loaded PyYAML"
by_ruamel = [_ruamel_yaml11().load(t) if plain(t) else None for t in texts]
from infx.matrix.load import load_yaml
by_pyyaml = [load_yaml(t) if plain(t) else None for t in texts]
wrong = [n for n, (a, b) in enumerate(zip(by_ruamel, by_pyyaml)) if a != b]
print(len(texts), sum(map(plain, texts)), wrong)
"""


@pytest.mark.parametrize("data", [SHARED, SEEDERA], ids=["pr2707", "seed-era"])
def test_every_real_plain_config_reads_as_pyyaml_reads_it(data: Path) -> None:
    """The gate and the plan read plain configs and runners.yaml through ruamel at YAML 1.1,
    sparing PyYAML's start-up: each must read the same as PyYAML (InferenceX's reader)
    reads it, and nearly all real ones are plain."""
    if not (data / "configs").is_dir():
        pytest.skip(f"{data} is absent")
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", REAL, str(data / "configs")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    count, plain_count, wrong = done.stdout.split(" ", 2)
    assert int(count) > 90 and int(plain_count) > 0.9 * int(count), done.stdout
    assert wrong.strip() == "[]"


# A config file `c.yaml` read in a new Python that has loaded ruamel and not PyYAML, as the
# gate and the plan have when they reach the configs; prints what config `k` reads as and
# whether PyYAML got loaded.
FRESH = """\
import sys
import ruamel.yaml
from infx.matrix.load import parse_masters
m = parse_masters({"c.yaml": sys.stdin.buffer.read()})
print(repr(m.config("k")), "yaml" in sys.modules)
"""


def _fresh(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", FRESH], input=text, capture_output=True, text=True)


def test_yaml_1_1_words_read_alike_through_either_loader() -> None:
    text = "k:\n  a: yes\n  b: off\n  c: 017\n  d: 1:20\n  e: 0o17\n  f: ~\n"
    done = _fresh(text)
    assert done.returncode == 0, done.stderr
    expected = "{'a': True, 'b': False, 'c': 15, 'd': 80, 'e': '0o17', 'f': None} False"
    assert done.stdout.strip() == expected


def test_what_is_not_plain_is_read_by_pyyaml() -> None:
    """An anchor, a merge or a word the readers part on: PyYAML reads the config, whatever
    the gate or the plan loaded before."""
    text = "k:\n  base: &b {tp: 4}\n  other:\n    <<: *b\n    ep: 2\n  flag: n\n"
    done = _fresh(text)
    assert done.returncode == 0, done.stderr
    expected = "{'base': {'tp': 4}, 'other': {'tp': 4, 'ep': 2}, 'flag': 'n'} True"
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
    "0x_1F",
    "0b_1",
    "-0x1f",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
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
    "-_7",
    "+_1",
    "+_",
    "._5",
    "._",
    "._e+3",
]


def _typed(value: object) -> object:
    if isinstance(value, dict):
        return {_typed(k): _typed(v) for k, v in value.items()}  # a NaN key equals itself
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, repr(value))


def _read(loader: Callable[[bytes], object], text: bytes) -> object:
    try:
        return _typed(loader(text))
    except Exception as exc:  # either reader's refusal, by kind
        return type(exc).__name__


@pytest.mark.parametrize("form", FORMS)
def test_ruamel_reads_a_yaml_1_1_scalar_as_pyyaml_or_leaves_it_to_pyyaml(form: str) -> None:
    """ruamel at YAML 1.1 reads `y`, `n`, `=` and exponents without a dot or sign apart
    from PyYAML (`multinode: n` is a string to one, false to the other): every text holding
    such a scalar must be left to PyYAML, so no command reads a config as InferenceX does
    not."""
    blocks = [f"k:\n  a: {form}\n", f"k:\n  c:\n  - {form}\n", f"k:\n  ? {form}\n  : v\n"]
    if ":" not in form:  # as a flow value, and as a key of each kind
        blocks += [f"k:\n  b: [{form}, x]\n", f"k:\n  d: {{e: {form}}}\n"]
        blocks += [f"k:\n  {form}: v\n", f"k:\n  - {form}: v\n", f"k: {{{form}: v}}\n"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns of a float without a dot
        for block in map(str.encode, blocks):
            if not plain(block):
                continue
            assert _read(_ruamel_yaml11().load, block) == _read(load_yaml, block), block


# Texts ruamel reads apart from PyYAML whatever their scalars: a sequence as a key (a tuple
# to ruamel, an error to PyYAML), a time of day on the line after its date, and bytes the
# byte patterns would misread (a BOM, NEL/LS/PS line breaks, UTF-16).
TEXTS = [
    b"k:\n  [a, b]: v\n",
    b"k:\n  - [a]: v\n",
    b"k:\n  ? [a]\n  : v\n",
    b"k:\n  ? - a\n  : v\n",
    b"k: {[a]: v}\n",
    b"k: {?[a]: v}\n",
    b"k: {x: 1, [a]}\n",
    b"k: {x: 1, # c\n  [a]}\n",
    b"k: [[a]: v]\n",
    b"k: {[[a]]: v}\n",
    b"k:\n  a: 2001-12-14\n    21:59:43Z\n",
    b"k:\n  a: 2001-12-14\n    21:59:43.1234567\n",
    b"\xef\xbb\xbfy: 1\n",
    b"k:\n  a: y\xc2\x85",
    b"k:\n  a: 1e3\xe2\x80\xa8",
    b"k:\n  a: n\xe2\x80\xa9",
    "k:\n  y: 1\n".encode("utf-16"),
    "\ufeffk:\n  a: -_7\n".encode("utf-16-be"),
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_ruamel_reads_apart_is_left_to_pyyaml(text: bytes) -> None:
    """ruamel makes a sequence key a tuple where PyYAML refuses it, names a time zone even
    when the time of day is on the next line, and a byte pattern cannot tell `y` from a
    word behind a BOM, a NEL or in UTF-16: such a text is never plain."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns of a float without a dot
        assert _read(_ruamel_yaml11().load, text) != _read(load_yaml, text), text
    assert not plain(text)


def test_a_key_is_found_whole_never_as_the_tail_of_a_longer_one() -> None:
    from infx.matrix.era import _keys_pattern

    pattern = _keys_pattern({"worker", "srt-recipe", "eval-srt-recipe"})
    text = b"a:\n  num-worker: 2\n  eval-srt-recipe: x\n  - {worker: 1}\n  my_worker: 3\nworker :\n"
    assert [m.group(1) for m in pattern.finditer(text)] == [
        b"eval-srt-recipe", b"worker", b"worker"
    ]  # fmt: skip


def test_a_duplicate_key_in_a_plain_config_is_refused_in_pyyaml_s_words() -> None:
    """ruamel refuses it too, in its own words; the message a user reads stays PyYAML's."""
    done = _fresh("k:\n  tp: 4\n  tp: 8\n")
    assert done.returncode != 0
    assert "infx.errors.ConfigError: c.yaml:3: invalid YAML: " in done.stderr
    assert "found duplicate key 'tp'" in done.stderr


def test_a_plain_text_ruamel_fails_on_is_read_and_worded_by_pyyaml() -> None:
    """ruamel builds `0x_` as it reads and stops on a ValueError; PyYAML, checking keys
    first, finds the duplicate (`true` == 1). The user reads PyYAML's error, no traceback of
    ruamel's."""
    from infx.matrix.load import plain

    text = "k:\n  true: 0x_\n  1: a\n"
    assert plain(text.encode())
    done = _fresh(text)
    assert done.returncode != 0
    assert "infx.errors.ConfigError: c.yaml:3: invalid YAML: " in done.stderr
    assert "ValueError" not in done.stderr
