"""Repository settings (infx.toml or [tool.infx]) and where the repository slug comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.context import slug_from_url
from tests.conftest import REPO, GitRepo, entry, make_repo

UPSTREAM = "SemiAnalysisAI/InferenceX"


def _append(repo: GitRepo, text: str) -> None:
    repo.write("perf-changelog.yaml", repo.read().decode() + "\n" + text)


def test_a_fork_clone_links_upstream(repo: GitRepo) -> None:
    repo.git("remote", "set-url", "origin", "git@github.com:alice/InferenceX.git")
    repo.commit("settings", **{"infx.toml": f'repository = "{UPSTREAM}"\n'})
    repo.git("tag", "-f", "base")
    _append(repo, entry())
    result = repo.infx("changelog", "canonicalize", "--base", "base", "--pr", "3058")
    assert result.exit_code == 0, result.output
    assert b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/3058\n" in repo.read()
    assert b"alice" not in repo.read() and "note:" not in result.output


def test_pyproject_tool_table_when_there_is_no_infx_toml(repo: GitRepo) -> None:
    repo.write(
        "pyproject.toml", f'[project]\nname = "x"\n\n[tool.infx]\nrepository = "{UPSTREAM}"\n'
    )
    _append(repo, entry(link=f"https://github.com/{UPSTREAM}/pull/9"))
    assert repo.infx("changelog", "check", "--base", "base", "--pr", "9").exit_code == 0
    repo.write("infx.toml", f'repository = "{REPO}"\n')
    assert repo.infx("changelog", "check", "--base", "base", "--pr", "9").exit_code == 1


def test_precedence_option_settings_environment_remote(repo: GitRepo) -> None:
    _append(repo, entry(link="https://github.com/one/x/pull/9"))
    check = ("changelog", "check", "--base", "base", "--pr", "9", "--format", "json")
    repo.write("infx.toml", 'repository = "two/x"\n')
    env = {"GITHUB_REPOSITORY": "three/x"}
    assert repo.infx(*check, "--repo", "one/x", env=env).exit_code == 0
    assert repo.infx(*check, env=env).exit_code == 1  # settings say two/x
    (repo.path / "infx.toml").unlink()
    assert repo.infx(*check, env={"GITHUB_REPOSITORY": "one/x"}).exit_code == 0
    remote = repo.infx(*check)  # origin is acme/bench
    assert remote.exit_code == 1
    assert f"links point at {REPO}, taken from the origin remote" in remote.stderr
    repo.git("remote", "add", "upstream", "https://github.com/one/x.git")
    from_upstream = repo.infx(*check)
    assert from_upstream.exit_code == 0 and "taken from the upstream remote" in from_upstream.stderr


def test_without_a_slug_the_three_ways_are_named(tmp_path: Path) -> None:
    # A history whose links name no repository: it cannot tell the slug either.
    repo = make_repo(tmp_path / "repo", history=entry(link="XXX"))
    repo.git("remote", "remove", "origin")
    _append(repo, entry())
    result = repo.infx("changelog", "check", "--base", "base", "--pr", "9")
    assert result.exit_code == 2
    for way in ("--repo OWNER/NAME", "in infx.toml", "GITHUB_REPOSITORY"):
        assert way in result.output


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('repositry = "a/b"\n', "unknown key(s) repositry"),
        ('repository = "not a slug"\n', "repository"),
        ("master-configs = []\n", "master-configs"),
        ("[labels]\nno-such-label = 'x'\n", "labels"),
        ("repository = \n", "not valid TOML"),
        ("[results]\nacknowledge-label = ''\n", "results"),
        ("[results]\nhistory-runs = 0\n", "results"),
        ("[results]\nno-such = 1\n", "results"),
        # A path outside the repository: `sweep validate` crashed on an absolute glob (exit 3)
        # and read another checkout's files through '..'.
        ('master-configs = ["/etc/*"]\n', "master-configs.0: a glob of paths inside"),
        ('master-configs = ["../other/configs/*.yaml"]\n', "master-configs.0"),
        ('changelog = "/etc/passwd"\n', "changelog: Path of the changelog inside"),
        ('runners = "../other/configs/runners.yaml"\n', "runners: Path of the runners file"),
        ('accuracy-floors = "/etc/passwd"\n', "accuracy-floors"),
    ],
)
def test_bad_settings_are_a_usage_error_naming_the_key(
    repo: GitRepo, table: str, message: str
) -> None:
    repo.write("infx.toml", table)
    result = repo.infx("sweep", "validate")
    assert result.exit_code == 2
    assert "infx.toml" in result.output and message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("tool", ["[tool]\ninfx = 5\n", "[tool]\ninfx = [1]\n"])
def test_a_tool_infx_that_is_not_a_table_is_a_usage_error(repo: GitRepo, tool: str) -> None:
    """`[tool] infx = 5` in pyproject.toml crashed every command (`dict(5)`: exit 3)."""
    repo.write("pyproject.toml", tool)
    for command in (("changelog", "lint"), ("sweep", "plan", "--base", "base", "--head", "HEAD")):
        result = repo.infx(*command)
        assert result.exit_code == 2, result.output
        assert "pyproject.toml" in result.stderr and "tool.infx must be a table" in result.stderr
        assert "Traceback" not in result.output
    repo.write("pyproject.toml", "tool = 5\n")  # no [tool.infx] table at all: the defaults
    assert repo.infx("changelog", "lint").exit_code == 0


def test_an_infx_toml_that_is_a_folder_is_not_read_as_no_settings(repo: GitRepo) -> None:
    """A folder named infx.toml was skipped silently: every setting fell back to its default."""
    (repo.path / "infx.toml").mkdir()
    result = repo.infx("changelog", "lint")
    assert result.exit_code == 2 and "infx.toml is not a file" in result.stderr


def test_settings_name_the_files_every_command_reads(repo: GitRepo) -> None:
    repo.git("mv", "perf-changelog.yaml", "CHANGES.yaml")
    repo.git("mv", "configs", "recipes-config")
    repo.commit(
        "moved",
        **{
            "infx.toml": 'changelog = "CHANGES.yaml"\nmaster-configs = ["recipes-config/*.yaml"]\n'
            f'repository = "{REPO}"\n'
        },
    )
    repo.git("tag", "-f", "base")
    repo.write("CHANGES.yaml", repo.read("CHANGES.yaml").decode() + "\n" + entry())
    repo.commit("entry")
    gate = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "4")
    assert gate.exit_code == 0, gate.output
    planned = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    assert planned.exit_code == 0, planned.output
    assert len(json.loads(planned.stdout)["single_node"]["1k1k"]) == 4
    assert repo.infx("sweep", "validate").exit_code == 0


@pytest.mark.parametrize(
    ("url", "server", "slug"),
    [
        ("git@github.com:acme/bench.git", "https://github.com", "acme/bench"),
        ("https://github.com/acme/bench", "https://github.com", "acme/bench"),
        ("ssh://git@github.com/acme/bench.git", "https://github.com", "acme/bench"),
        ("https://ghe.example.com/acme/bench.git", "https://github.com", None),
        ("git@github.com:acme/bench.git", "https://ghe.example.com", None),
        ("https://github.com/acme", "https://github.com", None),
    ],
)
def test_only_remotes_of_the_configured_server_count(url: str, server: str, slug) -> None:
    assert slug_from_url(url, server) == slug


def test_links_follow_settings_but_the_api_follows_the_actions_repository(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from infx.context import repository
    from infx.settings import Settings

    settings = Settings(repository=UPSTREAM, source="infx.toml")
    monkeypatch.setenv("GITHUB_REPOSITORY", "alice/InferenceX")
    assert repository(None, repo.path, settings).slug == UPSTREAM
    assert repository(None, repo.path, settings, for_api=True).slug == "alice/InferenceX"
    assert repository("bob/x", repo.path, settings, for_api=True).slug == "bob/x"
    monkeypatch.delenv("GITHUB_REPOSITORY")
    assert repository(None, repo.path, settings, for_api=True).slug == UPSTREAM


def test_results_settings_name_the_acknowledge_label(repo: GitRepo, tmp_path) -> None:
    """A renamed label acknowledges; the default name then does not."""
    from tests.results.compare.test_compare import curve, save

    repo.write("infx.toml", '[results]\nacknowledge-label = "perf-ok"\nhistory-runs = 3\n')
    from infx.settings import load

    settings = load(repo.path).results
    assert (settings.acknowledge_label, settings.history_runs) == ("perf-ok", 3)
    assert settings.change_issues is False and settings.change_issue_label == "performance-change"
    base = save(tmp_path / "main.json", curve())
    mine = save(tmp_path / "pr.json", curve(0.5))
    result = repo.infx("results", "compare", str(mine), "--baseline", str(base))
    assert result.exit_code == 1 and "add the label `perf-ok`" in result.output
