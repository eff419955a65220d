"""`infx changelog new` appends a checked entry with the XXX placeholder."""

from __future__ import annotations

from tests.conftest import HISTORY, GitRepo


def test_appends_formatted_entry(repo: GitRepo) -> None:
    result = repo.infx(
        "changelog",
        "new",
        "--config-key",
        "llama-fp8-*",
        "--description",
        'Use "fast" path',
        "--description",
        "Second point",
        "--scenario-type",
        "fixed-seq-len",
    )
    assert result.exit_code == 0, result.output
    assert repo.read().decode() == HISTORY + (
        "\n- config-keys:\n    - llama-fp8-*\n  scenario-type:\n    - fixed-seq-len\n"
        '  description:\n    - "Use \\"fast\\" path"\n    - "Second point"\n  pr-link: XXX\n'
    )
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "new")
    assert (
        repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "3").exit_code
        == 0
    )


def test_quotes_keys_that_yaml_would_misread(repo: GitRepo) -> None:
    result = repo.infx("changelog", "new", "--config-key", "*-mi355x-vllm", "--description", "x")
    assert result.exit_code == 0, result.output
    assert '    - "*-mi355x-vllm"\n' in repo.read().decode()


def test_unknown_key_refused_and_file_untouched(repo: GitRepo) -> None:
    result = repo.infx(
        "changelog", "new", "--config-key", "llama-fp8-mi355x-vlm", "--description", "x"
    )
    assert result.exit_code == 1 and "did you mean 'llama-fp8-mi355x-vllm'" in result.output
    assert repo.read().decode() == HISTORY


def test_append_only_with_evals_refused(repo: GitRepo) -> None:
    result = repo.infx(
        "changelog",
        "new",
        "--config-key",
        "llama-fp8-mi355x-vllm",
        "--description",
        "x",
        "--append-only",
        "--evals-only",
    )
    assert result.exit_code == 1
    assert repo.read().decode() == HISTORY
