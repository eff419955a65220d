"""Which files are master configs: the same set at a commit and in the working tree, never
`configs/deprecated/`, and the gate, the planner and `sweep validate` all read that set."""

from __future__ import annotations

import json

import pytest

from infx.matrix.sources import find_files, matches
from tests.conftest import GitRepo
from tests.matrix.conftest import AMD

DEPRECATED = AMD.split("\n\n")[0] + "\n"  # repeats llama-fp8-mi355x-vllm, as InferenceX's does


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("configs/amd-master.yaml", True),
        ("configs/nvidia-master.yaml", True),
        ("configs/deprecated/amd-1k1k-master.yaml", False),
        ("configs/runners.yaml", False),
        ("other/configs/amd-master.yaml", False),
    ],
)
def test_star_stays_within_one_folder(path: str, expected: bool) -> None:
    assert matches(path, "configs/*-master.yaml") is expected


@pytest.fixture
def layout(bench: GitRepo) -> GitRepo:
    bench.commit(
        "real layout",
        **{
            "configs__deprecated__amd-1k1k-master.yaml": DEPRECATED,
            "configs__ci-priority.yaml": "version: 1\n",
            "configs__nested__deeper__x-master.yaml": "not: [valid\n",
        },
    )
    bench.git("tag", "-f", "base")
    return bench


def test_same_files_at_a_commit_and_in_the_working_tree(layout: GitRepo) -> None:
    tree = layout.git("rev-parse", "HEAD^{tree}")
    at_commit = find_files(layout.path, tree, ["configs/*-master.yaml"])
    in_work_tree = find_files(layout.path, None, ["configs/*-master.yaml"])
    assert at_commit == in_work_tree == ["configs/amd-master.yaml"]
    both = ["configs/*-master.yaml", "configs/deprecated/*.yaml"]
    assert find_files(layout.path, tree, both) == find_files(layout.path, None, both)


def test_a_double_star_spans_folders_alike_at_a_commit_and_in_the_working_tree(
    layout: GitRepo,
) -> None:
    tree = layout.git("rev-parse", "HEAD^{tree}")
    deep = ["configs/**/*-master.yaml"]
    found = find_files(layout.path, tree, deep)
    assert found == find_files(layout.path, None, deep)
    assert found == [
        "configs/amd-master.yaml",
        "configs/deprecated/amd-1k1k-master.yaml",
        "configs/nested/deeper/x-master.yaml",
    ]
    assert find_files(layout.path, tree, ["configs/**"]) == sorted(
        [*found, "configs/ci-priority.yaml", "configs/runners.yaml"]
    )


def test_every_command_runs_with_defaults_on_the_real_layout(layout: GitRepo) -> None:
    entry = (
        '- config-keys:\n    - llama-fp8-mi355x-vllm\n  description:\n    - "x"\n  pr-link: XXX\n'
    )
    layout.commit(**{"perf-changelog.yaml": entry})
    gate = layout.infx(
        "changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "5", "--repo", "acme/b"
    )
    assert gate.exit_code == 0, gate.output
    for head in (["--head", "HEAD"], []):
        planned = layout.infx("sweep", "plan", "--base", "base", *head)
        assert planned.exit_code == 0, planned.output
        assert len(json.loads(planned.stdout)["single_node"]["1k1k"]) == 4
    validated = layout.infx("sweep", "validate")
    assert validated.exit_code == 0 and "3 config(s) valid" in validated.output


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_a_gate_that_cannot_run_still_answers_in_its_format(layout: GitRepo, fmt: str) -> None:
    entry = (
        '- config-keys:\n    - llama-fp8-mi355x-vllm\n  description:\n    - "x"\n  pr-link: XXX\n'
    )
    layout.commit(**{"perf-changelog.yaml": entry, "configs__copy-master.yaml": DEPRECATED})
    result = layout.infx(
        "changelog", "check", "--base", "base", "--head", "HEAD", "--repo", "a/b", "--format", fmt
    )
    assert result.exit_code == 1  # an invalid master config is a broken rule in every command
    message = "config key 'llama-fp8-mi355x-vllm' is already defined in configs/amd-master.yaml"
    if fmt == "json":
        payload = json.loads(result.stdout)
        assert payload["ok"] is False and message in payload["error"]
    else:
        assert result.stdout.startswith("::error file=perf-changelog.yaml,title=")
        assert message in result.stdout


def test_no_master_config_is_a_usage_error(layout: GitRepo) -> None:
    result = layout.infx("sweep", "validate", "--config", "configs/none-*.yaml")
    assert result.exit_code == 2
    assert "no master config files match 'configs/none-*.yaml' in the working tree" in result.output


@pytest.mark.parametrize("glob", ["/etc/*", "../*/configs/*-master.yaml", "configs\\*.yaml"])
@pytest.mark.parametrize(
    "command",
    [("sweep", "validate"), ("sweep", "plan", "--base", "HEAD", "--head", "HEAD")],
)
def test_a_glob_outside_the_repository_is_a_usage_error(
    layout: GitRepo, glob: str, command: tuple[str, ...]
) -> None:
    """`sweep validate --config '/etc/*'` crashed on Path.relative_to (exit 3), '..' read
    another checkout's files, and at a commit git's own error was all that was said."""
    result = layout.infx(*command, "--config", glob)
    assert result.exit_code == 2, result.output
    assert f"master config glob {glob!r} is not inside the repository" in result.stderr
    assert "Traceback" not in result.output
