"""An append-only entry measures only the new points and keeps the base's as they are, so
the base's points must still be what its recipe measures: a pull request that also edits
the recipe script its jobs run (or a job file, the sweep's workflows) changes how every
point of the curve is measured, while only the new ones would be. Such a change is a full
sweep of the config, not an append."""

from __future__ import annotations

import json

from tests.conftest import GitRepo, entry
from tests.matrix.conftest import AMD

SCRIPT = "recipes/llama70b_fp8_mi355x_vllm.sh"
GROWN = AMD.replace(
    "{ tp: 8, conc-start: 4, conc-end: 32 }", "{ tp: 8, conc-start: 4, conc-end: 128 }"
)
APPEND = entry(["llama-fp8-mi355x-vllm"], extra="  append-only: true\n")


def _repo(bench: GitRepo) -> GitRepo:
    bench.commit(
        "recipes",
        **{
            SCRIPT: "vllm serve --max-num-seqs 256\n",
            ".github/workflows/benchmark-tmpl.yml": "a\n",
        },
    )
    bench.git("tag", "-f", "base")
    return bench


def _plan(repo: GitRepo, **files: str) -> tuple[int, str]:
    repo.commit(
        "append", **{"perf-changelog.yaml": APPEND, "configs/amd-master.yaml": GROWN}, **files
    )
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    return result.exit_code, result.output


def test_an_append_with_its_recipe_unchanged_plans_the_new_points(bench: GitRepo) -> None:
    code, output = _plan(_repo(bench))
    assert code == 0, output
    payload = json.loads(output[output.index("{") :])
    assert [r["conc"] for r in payload["single_node"]["1k1k"]] == [64, 128]


def test_an_append_that_edits_the_recipe_script_is_refused(bench: GitRepo) -> None:
    code, output = _plan(_repo(bench), **{SCRIPT: "vllm serve --max-num-seqs 1024\n"})
    assert code == 1, output
    assert "append-only" in output and SCRIPT in output


def test_an_append_that_edits_a_job_file_is_refused(bench: GitRepo) -> None:
    code, output = _plan(_repo(bench), **{".github/workflows/benchmark-tmpl.yml": "b\n"})
    assert code == 1, output
    assert ".github/workflows/benchmark-tmpl.yml" in output


def test_an_append_that_adds_the_recipe_script_is_refused(bench: GitRepo) -> None:
    """The base's points were measured by no script in the repository: nothing says the new
    one measures them alike."""
    code, output = _plan(bench, **{SCRIPT: "vllm serve\n"})
    assert code == 1, output
    assert SCRIPT in output
