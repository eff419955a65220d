"""Keys of InferenceX formats later than the ones infx knows (`infx.formats`) are refused in
one line naming the key, never planned with a meaning guessed: a changelog entry's
`require-power`, a config's `srt-recipe` and `eval-srt-recipe`, runners.yaml's `clusters`."""

from __future__ import annotations

import pytest

from infx.changelog.parse import parse_region
from infx.formats import FORMATS
from infx.matrix.load import load_yaml, parse_masters
from infx.matrix.validate import validate_configs, validate_runners

ENTRY = b'- config-keys:\n    - llama\n  description:\n    - "x"\n  require-power: true\n  pr-link: XXX\n'
CONFIG = """\
llama:
  image: i
  model: m
  model-prefix: llama
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  {key}: recipes/llama.yaml
  scenarios:
    fixed-seq-len:
    - {{ isl: 1024, osl: 1024, search-space: [{{ tp: 8, conc-list: [4] }}] }}
"""
RUNNERS = b"labels:\n  mi355x: [mi355x_0]\nclusters:\n  mi355x-amds: {nodes: 4}\n"


def test_a_later_changelog_key_is_refused_in_one_line() -> None:
    _, problems = parse_region(ENTRY)
    assert [(v.line, v.rule) for v in problems] == [(5, "schema")]
    assert "unknown key(s) require-power" in problems[0].text()


@pytest.mark.parametrize("key", ["srt-recipe", "eval-srt-recipe"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_a_later_config_key_is_refused_in_one_line(key: str, fmt) -> None:  # type: ignore[no-untyped-def]
    masters = parse_masters({"configs/amd-master.yaml": CONFIG.format(key=key).encode()})
    (problem,) = validate_configs(masters, None, fmt)
    assert problem.line == 9 and problem.key == "llama"
    assert f"unknown key(s) {key}" in problem.text()


def test_a_later_runners_section_is_refused_in_one_line() -> None:
    runners, problems = validate_runners(load_yaml(RUNNERS), "configs/runners.yaml", RUNNERS)
    assert runners is None
    (problem,) = problems
    assert "unknown key(s) clusters" in problem.text()
