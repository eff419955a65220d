"""A line that looks like a config key but sits inside another config's multi-line string
is no config: YAML (and InferenceX) reads it as text. The gate and the planner index a
master file by its top-level lines; they must not take such a line for a config, which
would plan jobs for a recipe that exists nowhere but in their own reading."""

from __future__ import annotations

from tests.conftest import LINK, GitRepo, entry
from tests.matrix.conftest import AMD

# The first config's `note` is a double-quoted string spanning lines; its closing quote
# sits in what reads, line by line, as the comment of a key `ghost:`.
GHOST_CONFIG = """\
ghost-fp8-mi355x-vllm: #"
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 1, conc-end: 4096 }
"""


def _hidden(bench: GitRepo) -> GitRepo:
    """A config `ghost-...` hidden in config `notes`: a quoted note that the key's comment
    closes, after which its body reads as the rest of `notes`."""
    text = AMD + '\nnotes:\n  note: "see\n' + GHOST_CONFIG
    import yaml

    data = yaml.safe_load(text)
    assert "ghost-fp8-mi355x-vllm" not in data
    assert data["notes"]["note"] == "see ghost-fp8-mi355x-vllm: #"
    assert data["notes"]["runner"] == "mi355x"
    bench.commit("a note", **{"configs/amd-master.yaml": text})
    bench.git("tag", "-f", "base")
    return bench


def test_a_key_inside_a_quoted_string_is_no_config_to_the_planner(bench: GitRepo) -> None:
    repo = _hidden(bench)
    repo.write("perf-changelog.yaml", entry(["ghost-fp8-mi355x-vllm"], f"{LINK}7"))
    repo.commit("append")
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1, result.output
    assert "ghost-fp8-mi355x-vllm" in result.stderr
    assert "Traceback" not in result.output


def test_a_key_inside_a_quoted_string_is_no_config_to_the_gate(bench: GitRepo) -> None:
    repo = _hidden(bench)
    repo.write("perf-changelog.yaml", entry(["ghost-fp8-mi355x-vllm"], f"{LINK}7"))
    result = repo.infx("changelog", "check", "--base", "base")
    assert result.exit_code == 1, result.output
    assert "'ghost-fp8-mi355x-vllm' is not defined in any master config" in result.output


def test_wildcards_do_not_reach_a_hidden_key(bench: GitRepo) -> None:
    repo = _hidden(bench)
    repo.write("perf-changelog.yaml", entry(["ghost-*"], f"{LINK}7"))
    repo.commit("append")
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 1, result.output
    assert "'ghost-*' matches no master config" in result.stderr


def test_the_configs_around_it_still_plan(bench: GitRepo) -> None:
    repo = _hidden(bench)
    repo.write("perf-changelog.yaml", entry(["llama-*-mi355x-vllm"], f"{LINK}7"))
    repo.commit("append")
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 0, result.output
    assert "llama70b" in result.stdout and "ghost" not in result.stdout
