"""`infx changelog check`: one test per rule, each on a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.changelog.conftest import real_entry
from tests.conftest import HISTORY, LINK, REPO, GitRepo, entry, make_repo


def append(repo: GitRepo, text: str) -> str:
    return repo.commit("append", **{"perf-changelog.yaml": HISTORY + text})


def run_check(repo: GitRepo, *extra: str, pr: int | None = 7):
    args = ["changelog", "check", "--base", "base", "--head", "HEAD"]
    if pr is not None:
        args += ["--pr", str(pr)]
    return repo.infx(*args, *extra)


def violated(repo: GitRepo, *extra: str, pr: int | None = 7) -> list[str]:
    """The rules the gate names, from its JSON verdict; the gate must have failed."""
    result = run_check(repo, "--format", "json", *extra, pr=pr)
    assert result.exit_code == 1, result.output
    return sorted(v["rule"] for v in json.loads(result.stdout)["violations"])


def test_placeholder_entry_passes(repo: GitRepo) -> None:
    append(repo, "\n" + entry())
    result = run_check(repo)
    assert result.exit_code == 0, result.output
    assert "1 appended entry" in result.output


@pytest.mark.parametrize("link", ["XXX", f"{LINK}XXX", f"{LINK}7"])
def test_accepted_links_with_pr(repo: GitRepo, link: str) -> None:
    append(repo, "\n" + entry(link=link))
    assert run_check(repo).exit_code == 0


@pytest.mark.parametrize(
    "link",
    [
        f"{LINK}PENDING",
        f"{LINK}TBD",
        f"{LINK}8",
        f"http://github.com/{REPO}/pull/7",
        f"{LINK}7/",
        "https://github.com/other/repo/pull/7",
        "TBD",
    ],
)
def test_rejected_links_name_line_value_and_forms(repo: GitRepo, link: str) -> None:
    append(repo, "\n" + entry(link=link))
    result = run_check(repo)
    assert result.exit_code == 1
    pr_line = HISTORY.count("\n") + 6
    assert f"perf-changelog.yaml:{pr_line}: pr-link:" in result.output
    assert repr(link) in result.output
    assert f"use XXX or {LINK}XXX or {LINK}7" in result.output


def test_without_pr_only_canonical_links_pass(repo: GitRepo) -> None:
    append(repo, "\n" + entry(link="XXX"))
    assert violated(repo, pr=None) == ["pr-link"]
    append(repo, "\n" + entry(link=f"{LINK}12"))
    assert run_check(repo, pr=None).exit_code == 0


def test_server_url_sets_link_host(repo: GitRepo) -> None:
    append(repo, "\n" + entry(link=f"https://ghe.example.com/{REPO}/pull/7"))
    env = {"GITHUB_SERVER_URL": "https://ghe.example.com"}
    args = ("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7")
    # The github.com origin is not a remote of the configured server: not trusted.
    untrusted = repo.infx(*args, env=env)
    assert untrusted.exit_code == 2 and "cannot tell the repository" in untrusted.output
    repo.git("remote", "set-url", "origin", f"https://ghe.example.com/{REPO}.git")
    assert repo.infx(*args, env=env).exit_code == 0


def test_repo_flag_beats_environment_and_remote(repo: GitRepo) -> None:
    append(repo, "\n" + entry(link="https://github.com/fork/x/pull/7"))
    assert run_check(repo, "--repo", "fork/x").exit_code == 0
    env = {"GITHUB_REPOSITORY": "fork/x"}
    assert (
        repo.infx(
            "changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7", env=env
        ).exit_code
        == 0
    )
    assert violated(repo) == ["pr-link"]


def test_unknown_config_key_suggests_closest(repo: GitRepo) -> None:
    append(repo, "\n" + entry(keys=["llama-fp8-mi355x-vlm"]))
    result = run_check(repo)
    assert result.exit_code == 1
    assert "'llama-fp8-mi355x-vlm' is not defined" in result.output
    assert "did you mean 'llama-fp8-mi355x-vllm'?" in result.output


def test_wildcard_must_match_a_key(repo: GitRepo) -> None:
    append(repo, "\n" + entry(keys=["llama-*-vllm"]))
    assert run_check(repo).exit_code == 0
    append(repo, "\n" + entry(keys=["qwen-*"]))
    result = run_check(repo)
    assert (
        result.exit_code == 1 and "wildcard 'qwen-*' matches no master config key" in result.output
    )


def test_keys_resolve_against_head_configs(repo: GitRepo) -> None:
    master = (repo.path / "configs/amd-master.yaml").read_text()
    new_cfg = master.replace("llama-fp8-mi355x-sglang:", "qwen-fp8-mi355x-sglang:")
    repo.commit(
        "new config",
        **{
            "configs__amd-master.yaml": new_cfg,
            "perf-changelog.yaml": HISTORY + "\n" + entry(["qwen-fp8-mi355x-sglang"]),
        },
    )
    assert run_check(repo).exit_code == 0


def test_history_edit_is_rejected(repo: GitRepo) -> None:
    repo.commit(
        **{"perf-changelog.yaml": HISTORY.replace("Bring up", "Brought up") + "\n" + entry()}
    )
    result = run_check(repo)
    assert result.exit_code == 1
    assert "perf-changelog.yaml:4: history:" in result.output
    assert violated(repo) == ["history"]


def test_history_deletion_is_rejected(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY.split("\n\n")[0] + "\n"})
    result = run_check(repo)
    assert result.exit_code == 1 and "removed" in result.output
    assert violated(repo) == ["history"]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            lambda h: h.replace("  pr-link: " + LINK + "1\n", ""),
            "perf-changelog.yaml:5: history: 1 line(s) of history were removed at line 5, "
            "the first '  pr-link: " + LINK + "1'",
        ),
        (
            lambda h: h.replace("\n\n", "\n\n\n", 1),
            "perf-changelog.yaml:7: history: 1 line(s) inserted into history at line 7",
        ),
        (
            lambda h: h.replace('    - "Bring up', '    - "Also this"\n    - "Bring up'),
            "perf-changelog.yaml:4: history: 1 line(s) inserted into history at line 4",
        ),
    ],
    ids=["line-removed", "empty-line-inserted", "line-inserted"],
)
def test_a_line_inserted_or_removed_before_an_append_is_named(
    repo: GitRepo, edit: object, said: str
) -> None:
    # With an entry appended too, one line added to or taken from history used to read as
    # every later line changed ("history changed at line 5: ... (8 lines differ)").
    assert callable(edit)
    repo.commit(**{"perf-changelog.yaml": edit(HISTORY) + "\n" + entry()})
    result = run_check(repo)
    assert result.exit_code == 1 and said in result.output, result.output
    assert "lines differ" not in result.output
    assert violated(repo) == ["history"]


def test_a_replaced_last_entry_is_a_change_not_a_removal(repo: GitRepo) -> None:
    # The last entry's lines replaced by others (a merge resolved by taking one side): no
    # later history line follows them, so it is not named as lines removed.
    first = HISTORY.split("\n\n")[0]
    repo.commit(**{"perf-changelog.yaml": first + "\n\n" + entry(link=f"{LINK}2")})
    result = run_check(repo)
    assert result.exit_code == 1
    assert "history changed at line 8: '    - llama-fp8-*' became" in result.output, result.output


def test_reordering_is_rejected(repo: GitRepo) -> None:
    first, second = HISTORY.split("\n\n")
    repo.commit(**{"perf-changelog.yaml": second + "\n" + first + "\n"})
    assert violated(repo) == ["history"]


def test_pr_link_correction_alone_passes(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY.replace(f"{LINK}2", f"{LINK}3")})
    result = run_check(repo, "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["corrections"][0]["new"] == f"{LINK}3"


def test_pr_link_correction_must_be_canonical(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY.replace(f"{LINK}2", f"{LINK}PENDING")})
    result = run_check(repo)
    assert result.exit_code == 1 and "corrected pr-link must be a canonical link" in result.output


def test_correction_and_append_together_rejected(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY.replace(f"{LINK}2", f"{LINK}3") + "\n" + entry()})
    result = run_check(repo)
    assert result.exit_code == 1 and "both corrects pr-link lines and appends" in result.output


@pytest.mark.parametrize(
    ("sep", "message"),
    [
        ("", "no empty line before this entry"),
        ("\n\n", "2 empty lines before this entry"),
        ("  \n", "holds spaces"),
    ],
)
def test_separator_from_history(repo: GitRepo, sep: str, message: str) -> None:
    append(repo, sep + entry())
    result = run_check(repo)
    assert result.exit_code == 1 and message in result.output


def test_separator_between_new_entries(repo: GitRepo) -> None:
    append(repo, "\n" + entry() + entry())
    result = run_check(repo)
    assert result.exit_code == 1
    assert f"perf-changelog.yaml:{HISTORY.count(chr(10)) + 7}: separator" in result.output


def test_file_must_end_with_one_newline(repo: GitRepo) -> None:
    append(repo, "\n" + entry().rstrip("\n"))
    assert violated(repo) == ["file-ending"]
    assert "does not end with a newline" in run_check(repo).output
    append(repo, "\n" + entry() + "\n")
    assert "ends with blank lines" in run_check(repo).output
    assert violated(repo) == ["file-ending"]


@pytest.mark.parametrize(
    ("bad", "rule"), [("\r", "carriage return (CR)"), ("\t", "tab"), ("\0", "NUL byte")]
)
def test_control_characters(repo: GitRepo, bad: str, rule: str) -> None:
    append(repo, "\n" + entry(description=f"x{bad}y"))
    result = run_check(repo)
    assert result.exit_code == 1 and f"{rule} is not allowed" in result.output


@pytest.mark.parametrize("char", ["\x07", "\x1b", "\x7f", "\x80"])
def test_a_control_character_is_named_at_its_own_line_and_column(repo: GitRepo, char: str) -> None:
    # YAML refuses it while reading, before any line is known: it used to be named at the
    # entry's first line, with "fix the entry's YAML syntax".
    append(repo, "\n" + entry(description=f"Tune{char} flags"))
    result = run_check(repo)
    line = HISTORY.count("\n") + 5
    code = f"{ord(char):04X}"
    assert result.exit_code == 1
    assert (
        f"perf-changelog.yaml:{line}:12: yaml: invalid YAML: unacceptable character U+{code}"
        in result.output
    ), result.output
    assert f"write it as \\u{code.lower()}" in result.output


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85"])
def test_a_yaml_line_break_inside_a_line_keeps_lines_right_and_never_crashes(
    repo: GitRepo, brk: str
) -> None:
    # libyaml breaks lines at NEL, LS and PS, git does not: lines of the entry were counted
    # in YAML's lines, one too many after it, and with no final newline the gate, the
    # planner, fix and lint crashed (exit 3, IndexError).
    text = entry(link="http://x").replace('    - "Tune', brk + '    - "Tune').rstrip("\n")
    append(repo, "\n" + text)
    start = HISTORY.count("\n") + 2
    result = run_check(repo)
    assert result.exit_code == 1, result.output
    assert f"perf-changelog.yaml:{start + 3}:1: characters:" in result.output
    assert f"perf-changelog.yaml:{start + 4}: pr-link: 'http://x'" in result.output
    for command in (("changelog", "lint"), ("changelog", "fix", "--base", "base")):
        assert repo.infx(*command).exit_code == 1
    assert repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD").exit_code in (0, 1)


def test_invalid_utf8(repo: GitRepo) -> None:
    repo.commit(
        **{
            "perf-changelog.yaml": HISTORY.encode()
            + b"\n"
            + entry().encode().replace(b"Tune", b"T\xffne")
        }
    )
    result = run_check(repo)
    assert result.exit_code == 1 and "not valid UTF-8" in result.output


def test_conflict_markers(repo: GitRepo) -> None:
    append(repo, "\n<<<<<<< HEAD\n" + entry() + "=======\n" + entry() + ">>>>>>> main\n")
    result = run_check(repo)
    assert result.exit_code == 1 and "merge-conflict marker" in result.output


def test_every_entry_starts_with_config_keys(repo: GitRepo) -> None:
    text = entry().replace(
        "- config-keys:\n    - llama-fp8-mi355x-vllm\n  description:", "- description:"
    )
    append(
        repo, "\n" + text.replace("  pr-link", "  config-keys: [llama-fp8-mi355x-vllm]\n  pr-link")
    )
    result = run_check(repo)
    assert result.exit_code == 1 and "is not an entry start" in result.output


def test_root_must_be_a_list(repo: GitRepo) -> None:
    repo.commit(**{"perf-changelog.yaml": "entries: []\n"})
    result = repo.infx("changelog", "lint")
    assert result.exit_code == 1
    assert "perf-changelog.yaml:1: root: the changelog must be a YAML list" in result.output


def test_duplicate_keys_rejected(repo: GitRepo) -> None:
    append(repo, "\n" + entry(extra="  pr-link: XXX\n"))
    result = run_check(repo)
    assert result.exit_code == 1 and "duplicate key" in result.output


def test_schema_unknown_key_and_types(repo: GitRepo) -> None:
    append(repo, "\n" + entry(extra="  evals-only: yes\n  owner: me\n"))
    result = run_check(repo)
    assert result.exit_code == 1
    assert "unknown key(s) owner" in result.output
    assert "evals-only: 'yes' is not of type 'boolean'" in result.output


def test_append_only_with_eval_field_rejected(repo: GitRepo) -> None:
    append(repo, "\n" + entry(extra="  append-only: true\n  evals-only: true\n"))
    result = run_check(repo)
    assert result.exit_code == 1 and "cannot be combined with any eval field" in result.output


def test_every_violation_listed(repo: GitRepo) -> None:
    append(repo, "\n" + entry(link="TBD") + "\n" + entry(keys=["nope"], extra="  who: x\n"))
    result = run_check(repo, "--format", "json")
    rules = sorted(v["rule"] for v in json.loads(result.stdout)["violations"])
    assert result.exit_code == 1
    assert rules == ["config-keys", "pr-link", "schema"]


def test_github_format_annotations_and_summary(repo: GitRepo, tmp_path) -> None:
    append(repo, "\n" + entry(link=f"{LINK}PENDING"))
    summary = tmp_path / "summary.md"
    result = repo.infx(
        "changelog",
        "check",
        "--base",
        "base",
        "--head",
        "HEAD",
        "--pr",
        "7",
        "--format",
        "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    line = HISTORY.count("\n") + 6
    assert result.exit_code == 1
    assert result.stdout.startswith(
        f"::error file=perf-changelog.yaml,line={line},title=perf-changelog%3A pr-link::"
    )
    text = summary.read_text()
    assert "failed with 1 problem(s)" in text and "llama-fp8-mi355x-vllm" in text


def test_control_characters_in_a_settings_key_are_printed_escaped(repo: GitRepo) -> None:
    """An ESC or BEL in an infx.toml key reached the terminal raw in the error, where it
    could retitle the window or clear the screen: it is printed escaped, in one line."""
    repo.write("infx.toml", 'repository = "acme/bench"\n"x\\u001b]0;pwned\\u0007\\ry" = 1\n')
    append(repo, "\n" + entry())
    result = run_check(repo)
    assert result.exit_code == 2, result.output
    assert result.output == (
        "infx: error: infx.toml: entry: unknown key(s) x\\x1b]0;pwned\\x07\\x0dy\n"
    )


def test_control_characters_in_an_annotation_are_escaped(repo: GitRepo) -> None:
    """The gate that could not run says why in an annotation: a control character of the
    file name went into the job log raw; it is escaped and the annotation stays one line."""
    name = "perf\x1b]0;x\x07\r\n::warning::.yaml"
    result = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7",
                       "--format", "github", "--file", name)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert not any(c in result.stdout for c in "\x1b\x07\r"), repr(result.stdout)
    (line,) = result.stdout.splitlines()
    shown = "perf\\x1b]0;x\\x07%0D%0A::warning::.yaml"
    assert line == (
        f"::error file={shown.replace(':', '%3A')},title=perf-changelog gate::the gate could "
        f"not run: no such file: {shown} (neither at HEAD nor at base)"
    )


def test_bidirectional_and_invisible_characters_are_printed_escaped(repo: GitRepo) -> None:
    """A right-to-left override (U+202E) in an infx.toml key reached the terminal raw, where
    it made the rest of the error line read backwards ("Trojan Source"); it and the other
    invisible format characters are printed escaped, and letters of any script stay."""
    key = "d\u202egnp.\u2066é中\u200f\u2028\ufeffx"
    repo.write("infx.toml", f'repository = "acme/bench"\n"{key}" = 1\n')
    append(repo, "\n" + entry())
    result = run_check(repo)
    assert result.exit_code == 2, result.output
    assert result.output == (
        "infx: error: infx.toml: entry: unknown key(s) d\\u202egnp.\\u2066é中\\u200f\\u2028\\ufeffx\n"
    )


def test_bidirectional_characters_in_an_annotation_are_escaped(repo: GitRepo) -> None:
    """A file name with a right-to-left override went raw into the annotation GitHub shows
    on the PR, reading otherwise than the file it names; it is escaped as in errors."""
    name = "perf-\u202elmay.\u2069-é.yaml"
    result = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7",
                       "--format", "github", "--file", name)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "\u202e" not in result.stdout and "\u2069" not in result.stdout
    assert "no such file: perf-\\u202elmay.\\u2069-é.yaml (neither" in result.stdout


def test_the_summary_shows_a_hostile_config_key_as_plain_text(repo: GitRepo, tmp_path) -> None:
    """A PR author writes the entry: in the step summary a pipe in a key stays inside its
    cell, and a tag or a mention stays text."""
    key = "'llama|<img src=x>@ops'"
    append(repo, "\n" + entry(keys=[key]))
    summary = tmp_path / "summary.md"
    result = repo.infx(
        "changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7",
        "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert result.exit_code == 1
    text = summary.read_text()
    assert "<img" not in text and "@ops" not in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) == 3 and all(r.count("|") - r.count("\\|") == 4 for r in rows)


def test_the_summary_shows_bidi_and_invisible_characters_escaped(repo: GitRepo, tmp_path) -> None:
    """A config key with a right-to-left override (or an isolate, a zero-width space, a
    line separator) went raw into the step summary, where it reads otherwise than the key
    it names ("Trojan Source"); it is shown escaped, as the error printer shows it."""
    key = '"nosuch-\\u202egnp.\\u2066x\\u200b\\L\\e"'  # YAML's escapes: written by no editor
    append(repo, "\n" + entry(keys=[key]))
    summary = tmp_path / "summary.md"
    result = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7",
                       "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert result.exit_code == 1, result.output
    text = summary.read_text()
    assert not {"\u202e", "\u2066", "\u200b", "\u2028", "\x1b"} & set(text), text
    assert "nosuch-\\\\u202egnp.\\\\u2066x\\\\u200b \\\\x1b" in text, text  # `\\u202e` as Markdown


def test_the_summary_shows_entry_text_never_renders_it(repo: GitRepo, tmp_path) -> None:
    """Issue 31, case 11: a config key written as HTML reached the step summary raw."""
    append(repo, "\n" + entry(keys=["nosuch-<b>x</b>"], description="<img src=x onerror=1>"))
    summary = tmp_path / "summary.md"
    result = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7",
                       "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert result.exit_code == 1
    text = summary.read_text()
    assert "nosuch-&lt;b&gt;x&lt;/b&gt;" in text
    assert "<b>" not in text and "<img" not in text


def test_json_verdict_lists_entries(repo: GitRepo) -> None:
    append(repo, "\n" + entry())
    payload = json.loads(run_check(repo, "--format", "json").stdout)
    assert payload["ok"] is True
    assert payload["entries"][0]["line"] == HISTORY.count("\n") + 2
    assert payload["entries"][0]["config-keys"] == ["llama-fp8-mi355x-vllm"]


def test_working_tree_is_default_head(repo: GitRepo) -> None:
    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry(link="TBD"))
    result = repo.infx("changelog", "check", "--base", "base", "--pr", "7", "--format", "json")
    assert result.exit_code == 1
    assert [v["rule"] for v in json.loads(result.stdout)["violations"]] == ["pr-link"]


def test_unknown_ref_is_usage_error(repo: GitRepo) -> None:
    result = repo.infx("changelog", "check", "--base", "nope", "--pr", "7")
    assert result.exit_code == 2 and "unknown git ref 'nope'" in result.output


def test_not_a_repository_is_usage_error(tmp_path) -> None:
    other = GitRepo(tmp_path / "plain")
    other.path.mkdir()
    result = other.infx("changelog", "check", "--base", "main")
    assert result.exit_code == 2 and "not inside a git repository" in result.output


def test_missing_repository_slug_is_usage_error(tmp_path: Path) -> None:
    """No --repo, settings, GITHUB_REPOSITORY or remote, and a history whose links name no
    repository: nothing tells where links point."""
    repo = make_repo(tmp_path / "repo", history=entry(link="XXX"))
    repo.git("remote", "remove", "origin")
    append(repo, "\n" + entry())
    result = run_check(repo)
    assert result.exit_code == 2 and "pass --repo" in result.output


def test_unchanged_file_passes(repo: GitRepo) -> None:
    repo.commit("no change")
    result = run_check(repo)
    assert result.exit_code == 0 and "no change" in result.output


def test_unquoted_leading_wildcard_gets_a_hint(repo: GitRepo) -> None:
    append(repo, "\n" + entry(keys=["*-mi355x-vllm"]))
    result = run_check(repo)
    assert result.exit_code == 1 and "quote values that start with '*'" in result.output


# A pr-link a rewrite cannot splice: block scalars, a quoted or plain value continued on the
# next line, a value below its key. Each reads as a placeholder or a link to YAML.
SPREAD_LINKS = {
    "literal block": "|-\n    XXX",
    "folded block": ">-\n    XXX",
    "quoted, continued": '"XX\\\n    X"',
    "plain, continued": f"{LINK}\n    7",
    "below its key": "\n    XXX",
}


@pytest.mark.parametrize("value", SPREAD_LINKS.values(), ids=SPREAD_LINKS.keys())
def test_pr_link_must_be_written_on_its_line(repo: GitRepo, value: str) -> None:
    append(repo, "\n" + entry(link=value))
    result = run_check(repo)
    assert result.exit_code == 1, result.output
    line = HISTORY.count("\n") + 6
    assert f"perf-changelog.yaml:{line}: pr-link: " in result.output
    assert "fix: write `pr-link: XXX` on one line" in result.output


def test_the_gate_refuses_a_value_that_keeps_trailing_blank_lines(repo: GitRepo) -> None:
    """Any later append would change it, though history stays a byte prefix."""
    keeps = entry(extra="  all-evals: false\n").replace(
        '    - "Tune flags"', "    - |+\n      Tune flags"
    )
    append(repo, "\n" + keeps)
    result = run_check(repo)
    assert result.exit_code == 1
    line = HISTORY.count("\n") + 5
    assert f"perf-changelog.yaml:{line}: yaml: " in result.output
    assert "keeps trailing blank lines" in result.output


# --- on the real InferenceX layout ---------------------------------------------------------

NOTHING_SELECTED = {
    "agentic scenario of a fixed-seq-len config": (
        "dsv4-fp4-mi355x-vllm",
        "  scenario-type:\n    - agentic-coding\n",
        "scenario-type agentic-coding: dsv4-fp4-mi355x-vllm has only fixed-seq-len",
    ),
    "prefill ep above every eval point": (
        "dsv4-fp4-mi355x-sglang-disagg",
        "  evals-only: true\n  eval-min-prefill-ep: 1000\n",
        "eval-min-prefill-ep 1000 is above the prefill ep of every eval point (highest: ",
    ),
}


@pytest.mark.parametrize(
    ("key", "extra", "why"), NOTHING_SELECTED.values(), ids=NOTHING_SELECTED.keys()
)
def test_an_entry_that_selects_no_job_fails(
    inferencex: GitRepo, key: str, extra: str, why: str
) -> None:
    """The plan would print "Nothing to run" and the sweep go green having run nothing."""
    history = inferencex.read().decode()
    inferencex.write("perf-changelog.yaml", history + real_entry(key=key, extra=extra))
    result = inferencex.infx("changelog", "check")
    assert result.exit_code == 1, result.output
    line = history.count("\n") + 2
    assert f"perf-changelog.yaml:{line}: selection: this entry selects no benchmark job" in (
        result.output
    )
    assert why in result.output


@pytest.mark.parametrize(
    ("key", "extra"),
    [
        ("dsv4-fp4-mi355x-*", "  scenario-type:\n    - agentic-coding\n"),
        ("dsv4-fp4-mi355x-sglang-disagg", "  evals-only: true\n  eval-min-prefill-ep: 1\n"),
        ("dsv4-fp4-mi355x-vllm", "  evals-only: true\n"),
    ],
)
def test_an_entry_that_selects_jobs_passes(inferencex: GitRepo, key: str, extra: str) -> None:
    history = inferencex.read().decode()
    inferencex.write("perf-changelog.yaml", history + real_entry(key=key, extra=extra))
    result = inferencex.infx("changelog", "check")
    assert result.exit_code == 0, result.output


READ_AS_ANOTHER_TYPE = {
    # A plain value YAML reads as a date or timestamp: a description point, or the pr-link.
    "date in a description": ("  description:\n    - 2026-12-03\n  pr-link: XXX\n", 16, "date"),
    "timestamp in a description": (
        "  description:\n    - 2026-12-03 17:00:00\n  pr-link: XXX\n",
        16,
        "date",
    ),
    "date as the pr-link": ('  description:\n    - "x"\n  pr-link: 2026-12-03\n', 17, "date"),
    # Strings to YAML 1.2, but booleans and numbers to YAML 1.1 readers (PyYAML, InferenceX).
    "yes": ("  description:\n    - yes\n  pr-link: XXX\n", 16, "boolean"),
    "off": ('  description:\n    - "x"\n    - off\n  pr-link: XXX\n', 17, "boolean"),
    "sexagesimal": ("  description:\n    - 12:30\n  pr-link: XXX\n", 16, "integer"),
}


@pytest.mark.parametrize(
    ("body", "line", "kind"), READ_AS_ANOTHER_TYPE.values(), ids=READ_AS_ANOTHER_TYPE.keys()
)
def test_a_value_some_reader_takes_for_another_type_is_named(
    repo: GitRepo, body: str, line: int, kind: str
) -> None:
    """Every field of an entry is text, a list of text, a boolean or a number; a plain value
    that a YAML reader turns into something else (a date, or under YAML 1.1 a boolean or a
    number) is named at its line with the fix, never a crash or a pass."""
    append(repo, "\n- config-keys:\n    - llama-fp8-mi355x-vllm\n" + body)
    result = run_check(repo)
    assert result.exit_code == 1, result.output
    assert f"perf-changelog.yaml:{line}" in result.output
    assert f"as a {kind}" in result.output and "quote it" in result.output
    lint = repo.infx("changelog", "lint")
    assert lint.exit_code == 1 and f"as a {kind}" in lint.output


def test_quoted_they_pass(repo: GitRepo) -> None:
    append(
        repo,
        "\n"
        + entry(description="2026-12-03")
        + entry(description="yes").replace("- config-keys", "\n- config-keys"),
    )
    assert run_check(repo).exit_code == 0
