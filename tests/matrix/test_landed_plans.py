"""The planner plans what landed, even when its layout broke a gate rule, and refuses only
what it cannot attribute (a deleted or edited history line)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import GitRepo
from tests.matrix.conftest import AMD

OLD = '- config-keys:\n    - "llama-fp8-mi355x-vllm"\n  description:\n    - "first"\n  pr-link: https://github.com/acme/bench/pull/1\n'
NEW = '- config-keys:\n    - "dsv41flash-fp4-mi355x-vllm-agentic"\n  description:\n    - "second"\n  pr-link: https://github.com/acme/bench/pull/2\n'
LAST = '- config-keys:\n    - "dsr1-fp4-mi355x-sglang-disagg"\n  description:\n    - "third"\n  pr-link: https://github.com/acme/bench/pull/3\n'


@pytest.fixture
def landed(bench: GitRepo) -> GitRepo:
    bench.commit("history", **{"perf-changelog.yaml": OLD + "\n" + LAST})
    bench.git("tag", "-f", "base")
    return bench


def _plan(repo: GitRepo):
    return repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")


def _gate(repo: GitRepo):
    return repo.infx(
        "changelog", "check", "--base", "base", "--head", "HEAD", "--repo", "acme/bench"
    )


@pytest.mark.parametrize(
    ("layout", "warning"),
    [
        (OLD + "\n" + LAST + "\n\n" + NEW, "2 empty lines before this entry"),
        (OLD + "\n" + LAST + "  \n" + NEW, "holds spaces"),
        (OLD + "\n" + LAST + "\n" + NEW + "\n\n", "ends with blank lines"),
        (OLD + "\n" + NEW + "\n" + LAST, "entry inserted at line 7"),
    ],
    ids=["two-blank-lines", "spaces-separator", "blank-lines-at-end", "inserted-mid-file"],
)
def test_landed_layout_plans_with_a_warning(landed: GitRepo, layout: str, warning: str) -> None:
    landed.commit(**{"perf-changelog.yaml": layout})
    assert _gate(landed).exit_code == 1
    result = _plan(landed)
    assert result.exit_code == 0, result.output
    assert warning in result.stderr and "infx: warning:" in result.stderr
    payload = json.loads(result.stdout)
    assert [r["conc"] for r in payload["single_node"]["agentic"]] == [1, 4, 16, 32]
    assert [e["description"] for e in payload["changelog_metadata"]["entries"]] == [["second"]]
    assert "1k1k" not in payload["single_node"] and payload["multi_node"] == {}


def test_deleted_history_line_is_refused_with_the_gates_words(landed: GitRepo) -> None:
    landed.commit(
        **{"perf-changelog.yaml": OLD.replace('    - "first"\n', "") + "\n" + LAST + "\n" + NEW}
    )
    result = _plan(landed)
    assert result.exit_code == 1
    assert "history was edited" in result.output
    assert "line(s) of history were removed" in result.output or "history changed" in result.output


def test_edited_history_line_is_refused(landed: GitRepo) -> None:
    edited = OLD.replace('"first"', '"first, reworded"') + "\n" + LAST + "\n" + NEW
    landed.commit(**{"perf-changelog.yaml": edited})
    result = _plan(landed)
    assert result.exit_code == 1 and "history was edited" in result.output


def test_a_line_added_inside_an_old_entry_is_refused(landed: GitRepo) -> None:
    grown = OLD + "\n" + LAST + "  all-evals: true\n"
    landed.commit(**{"perf-changelog.yaml": grown})
    result = _plan(landed)
    assert result.exit_code == 1 and "history was edited" in result.output


def test_pr_link_corrections_plan_nothing(landed: GitRepo) -> None:
    corrected = OLD.replace("/pull/1", "/pull/11") + "\n" + LAST
    landed.commit(**{"perf-changelog.yaml": corrected})
    result = _plan(landed)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["single_node"] == {} and payload["changelog_metadata"]["entries"] == []


def test_invalid_added_entry_is_refused(landed: GitRepo) -> None:
    bad = NEW.replace('  description:\n    - "second"\n', "")
    landed.commit(**{"perf-changelog.yaml": OLD + "\n" + bad + "\n" + LAST})
    result = _plan(landed)
    assert result.exit_code == 1 and "description" in result.output


def test_refs_are_recorded_as_given(landed: GitRepo) -> None:
    landed.commit(**{"perf-changelog.yaml": OLD + "\n" + LAST + "\n" + NEW})
    sha = landed.git("rev-parse", "base")
    result = landed.infx("sweep", "plan", "--base", sha, "--head", "HEAD")
    metadata = json.loads(result.stdout)["changelog_metadata"]
    assert (metadata["base_ref"], metadata["head_ref"]) == (sha, "HEAD")
    # The fixture holds nothing an older format needs: the newest (pr3058) records no-evals.
    assert metadata["entries"][0] == {
        "config-keys": ["dsv41flash-fp4-mi355x-vllm-agentic"],
        "description": ["second"],
        "pr-link": "https://github.com/acme/bench/pull/2",
        "evals-only": False,
        "all-evals": False,
        "no-evals": False,
        "append-only": False,
    }


def test_master_configs_are_read_at_head(landed: GitRepo) -> None:
    landed.commit(**{"perf-changelog.yaml": OLD + "\n" + LAST + "\n" + NEW})
    (landed.path / "configs" / "amd-master.yaml").write_text(
        AMD.replace("conc-list: [1, 4, 16]", "conc-list: [2]")
    )
    result = _plan(landed)
    assert [r["conc"] for r in json.loads(result.stdout)["single_node"]["agentic"]] == [
        1,
        4,
        16,
        32,
    ]


def test_an_entry_saved_with_crlf_plans_with_a_warning(landed: GitRepo) -> None:
    # YAML reads CRLF as a line break, so the entry is attributable: it plans, as a whole
    # file saved with CRLF does, rather than being called an edit of the last old entry.
    landed.commit(**{"perf-changelog.yaml": OLD + "\n" + LAST + "\n" + NEW.replace("\n", "\r\n")})
    result = _plan(landed)
    assert result.exit_code == 0, result.output
    assert "CRLF" in result.stderr and "history was edited" not in result.output
    payload = json.loads(result.stdout)
    assert [e["description"] for e in payload["changelog_metadata"]["entries"]] == [["second"]]


@pytest.mark.parametrize(
    ("start", "said"),
    [
        ("- config-keys: ", "followed by trailing spaces"),
        ("- config-keys: # bump", "followed by '# bump'"),
        ("- config-keys: &keys", "followed by '&keys'"),
        ('- config-keys: ["dsv41flash-fp4-mi355x-vllm-agentic"]', "followed by '["),
        ("---\n- config-keys:", "top-level line '---' is not an entry start"),
    ],
    ids=["trailing-space", "comment", "anchor", "flow-list", "document-start"],
)
def test_an_appended_entry_whose_start_is_not_cut_is_refused_not_called_an_edit(
    landed: GitRepo, start: str, said: str
) -> None:
    new = NEW.replace("- config-keys:", start, 1)
    if start.startswith("- config-keys: ["):
        new = new.replace('    - "dsv41flash-fp4-mi355x-vllm-agentic"\n', "")
    landed.commit(**{"perf-changelog.yaml": OLD + "\n" + LAST + "\n" + new})
    result = _plan(landed)
    assert result.exit_code == 1, result.output
    assert "history was edited" not in result.output and "continues" not in result.output
    assert "an added changelog entry is invalid" in result.output and said in result.output
    gate = _gate(landed)
    assert gate.exit_code == 1 and said in gate.output


def test_a_problem_of_the_whole_appended_text_names_no_line(landed: GitRepo) -> None:
    # Too many entries is about the whole appended text: it was printed as "line 1:", a
    # line of history.
    many = "".join("\n" + NEW for _ in range(10_001))
    landed.commit(**{"perf-changelog.yaml": OLD + "\n" + LAST + many})
    result = _plan(landed)
    assert result.exit_code == 1
    assert "  10,001 entries to check; infx checks at most 10,000" in result.output
    assert "line 1:" not in result.output
