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


def test_whole_file_is_checked_before_writing(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", "entries: []\n")
    result = repo.infx(
        "changelog", "new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"
    )
    assert result.exit_code == 1
    assert "already breaks a rule, so nothing was appended" in result.output
    assert repo.read() == b"entries: []\n"


def test_history_problem_is_named_with_its_line(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY.replace("    - llama-fp8-*", "    - &k llama-fp8-*"))
    result = repo.infx(
        "changelog", "new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"
    )
    assert result.exit_code == 1 and "line 8: anchor '&k' is not allowed" in result.output


def test_identical_entry_gets_a_warning(repo: GitRepo) -> None:
    args = ["changelog", "new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"]
    first = repo.infx(*args)
    assert first.exit_code == 0 and "warning" not in first.output
    second = repo.infx(*args)
    assert second.exit_code == 0
    line = HISTORY.count("\n") + 2
    assert (
        f"infx: warning: perf-changelog.yaml:{line}: an entry with the same keys, description "
        "and flags already exists" in second.stderr
    )
    assert repo.read().decode().count('    - "x"\n') == 2


def test_a_warning_quoting_the_file_name_prints_it_escaped(repo: GitRepo) -> None:
    """The duplicate-entry warning quoted --file raw, outside the error printer: a
    right-to-left override (U+202E) in the name reversed the rest of the line."""
    name = "perf-\u202elmay.\x07-é.yaml"
    repo.write(name, HISTORY)
    args = ["changelog", "new", "--config-key", "llama-fp8-mi355x-vllm", "--description", "x"]
    assert repo.infx(*args, "--file", name).exit_code == 0
    second = repo.infx(*args, "--file", name)
    assert second.exit_code == 0, second.output
    assert "\u202e" not in second.stderr and "\x07" not in second.stderr
    line = HISTORY.count("\n") + 2
    assert f"infx: warning: perf-\\u202elmay.\\x07-é.yaml:{line}: an entry" in second.stderr


def test_new_refuses_an_entry_that_selects_no_job(inferencex) -> None:
    before = inferencex.read()
    result = inferencex.infx(
        "changelog", "new", "--config-key", "dsv4-fp4-mi355x-vllm",
        "--description", "Try the agentic traces", "--scenario-type", "agentic-coding",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "selects no benchmark job" in result.output and "has only fixed-seq-len" in result.output
    assert inferencex.read() == before


def test_arguments_that_are_not_utf8_are_refused_and_the_file_untouched(repo: GitRepo) -> None:
    """A shell passes bytes that are not UTF-8 as surrogates; writing them crashed (exit 3)."""
    before = repo.read()
    for key, description in (("llama-fp8-*", "caf\udce9"), ("llama\udcff", "x")):
        result = repo.infx("changelog", "new", "--config-key", key, "--description", description)
        assert result.exit_code == 2, result.output
        assert "is not valid UTF-8" in result.output and "Traceback" not in result.output
    assert repo.read() == before
