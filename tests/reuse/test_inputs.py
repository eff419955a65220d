"""Inputs the jobs read that a manifest used to miss (issue 25, provenance 2 to 5): each was
a wrong "yes" of the reuse gate first. Main changes the input after the PR's run measured
it; what merges then runs other bytes, so reuse must say no and name the input."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest

from infx.matrix.inputs import Snapshot, matching
from infx.settings import load
from tests.conftest import ROOT, GitRepo
from tests.github.scenario import Green, green_pr

RECIPE = "llama70b_fp8_mi355x_vllm.sh"


def on_main(pr: Green, message: str, change: Callable[[GitRepo], None]) -> str:
    """A commit on main made by `change` (any git the helpers cannot write), pushed."""
    work = pr.branch.work
    work.git("checkout", "-q", "main")
    change(work)
    sha = work.commit(message)
    work.git("push", "-q", "origin", "main")
    work.git("checkout", "-q", "feature")
    return sha


def measured_then(pr: Green, run_id: int = 1080) -> dict:
    """The PR merges main (which now holds the input) and sweeps; the run's manifest."""
    head = pr.branch.merge_main()
    return pr.record_run(run_id, head, 80)


def refused(pr: Green, says: str) -> None:
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false", out
    assert says in out["reuse-reason"], out["reuse-reason"]


# --- 2. a submodule records its commit -----------------------------------------------------


def gitlink(commit: str) -> Callable[[GitRepo], None]:
    """utils/aiperf as a submodule at `commit` (not checked out: an empty folder)."""

    def change(work: GitRepo) -> None:
        (work.path / "utils" / "aiperf").mkdir(parents=True, exist_ok=True)
        work.write(
            ".gitmodules",
            '[submodule "utils/aiperf"]\n\tpath = utils/aiperf\n'
            "\turl = https://github.com/ai-dynamo/aiperf.git\n",
        )
        work.git("update-index", "--add", "--cacheinfo", f"160000,{commit},utils/aiperf")

    return change


@pytest.mark.parametrize("job_files", [None, ["utils/**"]])
def test_main_bumping_a_submodule_voids_reuse(api, job_files) -> None:
    pr = green_pr(api.state)
    if job_files is not None:
        pr.branch.on_main("settings", **{"infx.toml": f"job-files = {json.dumps(job_files)}\n"})
    on_main(pr, "add the client", gitlink("1" * 40))
    manifest = measured_then(pr)
    assert manifest["measured"]["files"]["utils/aiperf"] == "commit:" + "1" * 40
    on_main(pr, "bump the client", gitlink("2" * 40))
    refused(pr, "submodule utils/aiperf: commit 111111111111 at the run, 222222222222 at merge")


# --- 3. symbolic links to folders ------------------------------------------------------------


def link(path: str, target: str) -> Callable[[GitRepo], None]:
    def change(work: GitRepo) -> None:
        where = work.path / path
        where.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, where)

    return change


def test_a_recipes_folder_linked_elsewhere_records_each_recipe(api) -> None:
    """`recipes` is a link to benchmarks/single_node: the job runs the recipe there."""
    pr = green_pr(api.state)
    pr.branch.on_main("recipes", **{f"benchmarks__single_node__{RECIPE}": "echo v1\n"})
    on_main(pr, "link recipes", link("recipes", "benchmarks/single_node"))
    manifest = measured_then(pr)
    assert manifest["measured"]["files"][f"recipes/{RECIPE}"] is not None
    pr.branch.on_main("tune", **{f"benchmarks__single_node__{RECIPE}": "echo v2\n"})
    refused(pr, f"file recipes/{RECIPE}: differs")


def test_a_linked_folder_under_a_job_files_glob_records_its_files(api) -> None:
    pr = green_pr(api.state)
    settings = 'job-files = ["benchmarks/**"]\n'
    pr.branch.on_main(
        "shared",
        **{
            "infx.toml": settings,
            "shared__lib__common.sh": "echo v1\n",
            "benchmarks__run.sh": "x\n",
        },
    )
    on_main(pr, "link lib", link("benchmarks/lib", "../shared/lib"))
    manifest = measured_then(pr)
    assert manifest["measured"]["files"]["benchmarks/lib/common.sh"] is not None
    pr.branch.on_main("tune", **{"shared__lib__common.sh": "echo v2\n"})
    refused(pr, "file benchmarks/lib/common.sh: differs")


def test_a_recipe_linked_out_of_the_repository_is_refused_in_one_line(repo: GitRepo) -> None:
    base = repo.git("rev-parse", "HEAD")
    from tests.conftest import entry

    repo.write("perf-changelog.yaml", repo.read().decode() + "\n" + entry())
    os.makedirs(repo.path / "recipes")
    os.symlink("/opt/shared/recipe.sh", repo.path / "recipes" / RECIPE)
    head = repo.commit("entry and an outside recipe")
    out = repo.path / "manifest.json"
    result = repo.infx("sweep", "plan", "--base", base, "--head", head, "--manifest", str(out))
    assert result.exit_code == 1, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("infx: error")]
    assert f"recipes/{RECIPE}: the symbolic link recipes/{RECIPE} points outside" in line
    assert "Traceback" not in result.output and not out.exists()


# --- 4. job-files written as a folder ------------------------------------------------------


@pytest.mark.parametrize("pattern", ["benchmarks", "benchmarks/", "./benchmarks/**"])
def test_job_files_written_as_a_folder_match_what_they_name(api, pattern) -> None:
    pr = green_pr(api.state)
    settings = f"job-files = [{json.dumps(pattern)}]\n"
    pr.branch.on_main(
        "shared", **{"infx.toml": settings, "benchmarks__lib__common.sh": "echo v1\n"}
    )
    manifest = measured_then(pr)
    assert "benchmarks/lib/common.sh" in manifest["measured"]["files"]
    assert manifest["sweep"]["unmatched"] == []
    pr.branch.on_main("tune", **{"benchmarks__lib__common.sh": "echo v2\n"})
    refused(pr, "file benchmarks/lib/common.sh: differs")


def test_a_job_files_pattern_matching_nothing_is_reported(repo: GitRepo) -> None:
    from tests.conftest import entry

    base = repo.git("rev-parse", "HEAD")
    repo.write("infx.toml", 'job-files = ["benchmark/**", "recipes/*.sh"]\n')
    repo.write("recipes/x.sh", "echo\n")
    repo.write("perf-changelog.yaml", repo.read().decode() + "\n" + entry())
    head = repo.commit("entry")
    out = repo.path / "manifest.json"
    result = repo.infx("sweep", "plan", "--base", base, "--head", head, "--manifest", str(out))
    assert result.exit_code == 0, result.output
    assert "infx: warning: job-files pattern 'benchmark/**' matches no file" in result.output
    assert json.loads(out.read_text())["sweep"]["unmatched"] == ["benchmark/**"]


@pytest.mark.parametrize("pattern", ["/etc/**", "../outside/*.sh", "benchmarks/../../x"])
def test_a_job_files_pattern_outside_the_repository_is_refused_by_the_settings(
    repo: GitRepo, pattern
) -> None:
    repo.commit("settings", **{"infx.toml": f"job-files = [{json.dumps(pattern)}]\n"})
    result = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("infx: error: infx.toml: job-files.0:") and "Traceback" not in line


# --- 5. .gitattributes ---------------------------------------------------------------------


def test_main_adding_gitattributes_voids_reuse(api) -> None:
    """`eol=crlf` changes the bytes a checkout writes for every recipe."""
    pr = green_pr(api.state)
    pr.branch.on_main("recipe", **{f"recipes__{RECIPE}": "echo v1\n"})
    measured_then(pr)
    pr.branch.on_main("crlf", **{".gitattributes": "recipes/*.sh text eol=crlf\n"})
    refused(pr, "file .gitattributes: differs")


def test_main_editing_a_nested_gitattributes_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    pr.branch.on_main(
        "recipe", **{f"recipes__{RECIPE}": "echo v1\n", "recipes__.gitattributes": "*.sh text\n"}
    )
    measured_then(pr)
    pr.branch.on_main("crlf", **{"recipes__.gitattributes": "*.sh text eol=crlf\n"})
    refused(pr, "file recipes/.gitattributes: differs")


def test_this_repository_s_job_files_cover_every_module_of_infx() -> None:
    """A reused sweep must have run exactly infx's code (infx.toml's job-files): every module,
    however deep its package (infx/results/noise/fit.py is two folders down), as the
    manifest's own matcher reads the patterns."""
    found, unmatched = matching(Snapshot.at(ROOT, None), load(ROOT).job_files)
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "infx").rglob("*.py")}
    assert unmatched == []
    assert sorted(modules - set(found)) == []
    assert "infx/results/noise/fit.py" in found
