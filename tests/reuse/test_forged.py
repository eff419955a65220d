"""Derive, do not trust (issue 25, provenance 1): an insider with write access pushes a
commit A whose sweep workflow uploads results of their choosing beside the manifest an
honest sweep of the final head would write, then a commit B that restores the workflow. The
run of A says it measured exactly what merges; git says it ran other code. Each attack was
a "yes" of the reuse gate first."""

from __future__ import annotations

import json

import pytest

from tests.github.scenario import RUN, Green, green_pr, manifest_zip, seal, zipped

WORKFLOW = ".github__workflows__run-sweep.yml"
TEMPLATE = ".github__workflows__benchmark-tmpl.yml"
HONEST = """\
name: run-sweep
on: {pull_request: {}, push: {branches: [main]}}
jobs:
  setup:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - run: infx sweep plan --from-event --manifest sweep-manifest.json
  single:
    needs: setup
    uses: ./.github/workflows/benchmark-tmpl.yml
"""
FORGED = HONEST.replace(
    "      - run: infx sweep plan --from-event --manifest sweep-manifest.json\n",
    "      - run: curl -s https://example.invalid/numbers.json > results.json\n",
)
TEMPLATE_TEXT = (
    "on: {workflow_call: {}}\njobs: {bench: {runs-on: mi355x, steps: [{run: bash r.sh}]}}\n"
)
FORGED_TABLE = json.dumps({"rows": [{"throughput": 1e9}]})


def with_workflows(pr: Green) -> None:
    """Main holds the sweep workflow and its template; the PR merges main."""
    pr.branch.on_main("workflows", **{WORKFLOW: HONEST, TEMPLATE: TEMPLATE_TEXT})
    pr.branch.merge_main()


def honest_manifest(pr: Green, sha: str) -> dict:
    """The manifest an honest sweep of `sha` writes (computable from git by anyone)."""
    manifest = pr.record_run(9999, sha, 1)
    pr.state.runs[:] = [r for r in pr.state.runs if r["id"] != 9999]
    del pr.state.artifacts[9999]
    return manifest


def forged_run(pr: Green, run_id: int, sha: str, manifest: dict, **run: object) -> None:
    """A run of `sha` whose workflow uploaded a table of its choosing and `manifest`."""
    names = ["results_bmk", "sweep-manifest", "changelog-metadata", "sweep-receipt"]
    names += run.pop("extra", [])
    pr.state.add_run(run_id, head_sha=sha, minute=90, artifacts=names, **run)
    for artifact in pr.state.artifacts[run_id]:
        blob = {
            "results_bmk": zipped("results.json", FORGED_TABLE),
            "sweep-manifest": manifest_zip(manifest),
        }.get(artifact["name"], zipped(f"{artifact['name']}.json", "{}"))
        pr.state.blobs[artifact["id"]] = blob
    # The forged workflow writes whatever claim it likes: a consistent one. It ran for the
    # PR's merge with main (a pull_request run), as GitHub's record of it says.
    merge = pr.merge_commit(sha)
    if pr.state.runs[-1]["event"] == "pull_request":
        pr.publish_merge(run_id, merge)
    seal(pr.state, run_id, json.dumps(manifest).encode(), merge)


def ask(pr: Green, body: str) -> None:
    pr.state.comments[:] = [c for c in pr.state.comments if "/reuse-sweep-run" not in c["body"]]
    pr.state.add_comment(7, "maintainer", body, 150)


def attack(
    pr: Green, forged_files: dict[str, str], honest_files: dict[str, str]
) -> tuple[str, str, dict]:
    """Commit A edits the files, commit B restores them; the honest manifest of B."""
    sha_a = pr.branch.commit("faster sweep", **forged_files)
    sha_b = pr.branch.commit("restore", **honest_files)
    return sha_a, sha_b, honest_manifest(pr, sha_b)


def refused(pr: Green, says: str, **gate: str) -> dict:
    _, out = pr.gate(**gate)
    assert out.get("reuse-enabled", "false") == "false" and out.get("skip-pr-sweep") != "true", out
    assert says in out["reuse-reason"], out["reuse-reason"]
    return out


def test_a_run_of_a_commit_with_a_forged_workflow_is_refused(api) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    sha_a, _, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, "/reuse-sweep-run 2000")
    says = "run 2000 ran other code than what merges: .github/workflows/run-sweep.yml"
    refused(pr, says)


@pytest.mark.parametrize("command", ["/reuse-sweep-run 2000", "/use 2000"])
def test_the_synchronize_gate_and_the_ack_refuse_it_before_the_merge(api, command) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    sha_a, sha_b, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, command)
    refused(
        pr,
        "run 2000 ran other code than what merges",
        event="pull_request",
        sha=sha_b,
        event_action="synchronize",
        pr_number="7",
        ref="refs/pull/7/merge",
    )


def test_a_forged_template_the_workflow_calls_is_refused(api) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    evil = TEMPLATE_TEXT.replace("bash r.sh", "echo fake")
    sha_a, _, manifest = attack(pr, {TEMPLATE: evil}, {TEMPLATE: TEMPLATE_TEXT})
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, "/use 2000")
    refused(pr, "ran other code than what merges: .github/workflows/benchmark-tmpl.yml")


def test_a_new_workflow_the_forged_one_calls_is_refused(api) -> None:
    """A calls a reusable workflow B deletes: the file exists only where the run ran."""
    pr = green_pr(api.state)
    with_workflows(pr)
    calls = HONEST + "  fake:\n    uses: ./.github/workflows/numbers.yml\n"
    sha_a = pr.branch.commit("A", **{WORKFLOW: calls, ".github__workflows__numbers.yml": "x: 1\n"})
    pr.branch.work.git("rm", "-q", ".github/workflows/numbers.yml")
    sha_b = pr.branch.commit("B", **{WORKFLOW: HONEST})
    forged_run(pr, 2000, sha_a, honest_manifest(pr, sha_b))
    ask(pr, "/use 2000")
    refused(pr, ".github/workflows/numbers.yml")


def test_a_forged_local_action_is_refused(api) -> None:
    """`uses: ./` installs from action.yml: its steps ran too."""
    pr = green_pr(api.state)
    with_action = HONEST.replace(
        "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n",
        "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n      - uses: ./\n",
    )
    pr.branch.on_main(
        "action",
        **{
            WORKFLOW: with_action,
            TEMPLATE: TEMPLATE_TEXT,
            "action.yml": "runs: {using: composite, steps: []}\n",
        },
    )
    pr.branch.merge_main()
    evil = "runs: {using: composite, steps: [{run: echo fake, shell: bash}]}\n"
    sha_a, _, manifest = attack(
        pr, {"action.yml": evil}, {"action.yml": "runs: {using: composite, steps: []}\n"}
    )
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, "/use 2000")
    refused(pr, "ran other code than what merges: action.yml")


# --- infx's own repository: a PR that edits infx/*.py ---------------------------------------


INFX_FILES = {
    "pyproject.toml": '[project]\nname = "infx"\n',
    "infx__results__ingest__collect.py": "def collect(rows):\n    return rows\n",
    "infx____init__.py": "",
}


def test_in_infx_s_own_repository_a_run_of_edited_infx_code_is_refused(api) -> None:
    pr = green_pr(api.state)
    pr.branch.on_main("infx itself", **{WORKFLOW: HONEST, TEMPLATE: TEMPLATE_TEXT, **INFX_FILES})
    pr.branch.merge_main()
    forged = "def collect(rows):\n    return [{'throughput': 1e9}]\n"
    sha_a, _, manifest = attack(
        pr,
        {"infx__results__ingest__collect.py": forged},
        {"infx__results__ingest__collect.py": INFX_FILES["infx__results__ingest__collect.py"]},
    )
    assert "infx/results/ingest/collect.py" in manifest["measured"]["files"]
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, "/use 2000")
    refused(pr, "ran other code than what merges: infx/results/ingest/collect.py")


# --- a dispatched rerun on the PR branch: its head_sha is what counts ------------------------


def rerun_record(run_id: int, sha: str, root: int, source: int, depth: int = 1) -> str:
    from infx.matrix.options import PlanOptions
    from infx.sweep.record import RunRecord

    record = RunRecord(
        run_id=run_id, event="workflow_dispatch", sha=sha, pr=7,
        category="full-sweep-fail-fast", options=PlanOptions(), canary=True, fail_fast=True,
        agentx_fast=False, root=root, source=source, scope="missing", depth=depth,
    )  # fmt: skip
    return json.dumps(record.as_json())


def rerun(
    pr: Green, run_id: int, sha: str, manifest: dict, root: int, source: int, depth=1
) -> None:
    forged_run(pr, run_id, sha, manifest, event="workflow_dispatch", extra=["sweep-plan"])
    plan = next(a for a in pr.state.artifacts[run_id] if a["name"] == "sweep-plan")
    pr.state.blobs[plan["id"]] = zipped(
        "rerun.json", rerun_record(run_id, sha, root, source, depth)
    )


def test_a_dispatched_rerun_of_a_forged_commit_is_refused(api) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    honest_run = pr.record_run(1500, pr.branch.work.git("rev-parse", "HEAD"), 70)
    sha_a, _, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    assert honest_run["measured"] == manifest["measured"]
    rerun(pr, 2000, sha_a, manifest, root=1500, source=1500)
    ask(pr, "/use 2000")
    refused(pr, "run 2000 ran other code than what merges: .github/workflows/run-sweep.yml")


def test_an_honest_rerun_of_a_forged_run_is_refused(api) -> None:
    """B's rerun merges A's forged table as the earlier layer of its own."""
    pr = green_pr(api.state)
    with_workflows(pr)
    sha_a, sha_b, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    forged_run(pr, 2000, sha_a, manifest, conclusion="failure")
    rerun(pr, 2001, sha_b, manifest, root=2000, source=2000)
    ask(pr, "/use 2001")
    refused(pr, "run 2001's lineage: run 2000 ran other code than what merges")


def test_a_forged_rerun_in_the_middle_of_a_lineage_is_refused(api) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    root_sha = pr.branch.work.git("rev-parse", "HEAD")
    pr.record_run(1500, root_sha, 70)
    api.state.runs[-1]["conclusion"] = "failure"
    sha_a, sha_b, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    rerun(pr, 2000, sha_a, manifest, root=1500, source=1500)
    api.state.runs[-1]["conclusion"] = "failure"
    rerun(pr, 2001, sha_b, manifest, root=1500, source=2000, depth=2)
    ask(pr, "/use 2001")
    refused(pr, "run 2001's lineage: run 2000 ran other code than what merges")
    # The same lineage without the forged middle run reuses: honest reruns stay reusable.
    ask(pr, "/use 1500")
    api.state.runs[[r["id"] for r in api.state.runs].index(1500)]["conclusion"] = "success"
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


# --- the uploaded manifest is a cross-check ---------------------------------------------------


def test_an_uploaded_manifest_that_differs_from_git_is_refused_naming_the_field(api) -> None:
    """The run's commit holds what merges, but its record says otherwise: the difference is
    named (here a file the record claims the jobs read)."""
    pr = green_pr(api.state)
    lying = json.loads(json.dumps(pr.manifests[RUN]))
    lying["measured"]["files"]["recipes/x.sh"] = "sha256:" + "0" * 64
    api.state.blobs[
        next(a["id"] for a in api.state.artifacts[RUN] if a["name"] == "sweep-manifest")
    ] = manifest_zip(lying)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file recipes/x.sh: read only by the run" in out["reuse-reason"]


def test_a_run_whose_commit_cannot_be_fetched_is_refused(api) -> None:
    pr = green_pr(api.state)
    api.state.runs[-1]["head_sha"] = "f" * 40
    api.state.pull_commits[7].append("f" * 40)
    pr.state.git_remote = None
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"


LAUNCHER = "def main():\n    from infx.cli import cli\n    cli()\n"


def test_a_run_of_an_edited_infx_launcher_is_refused(api) -> None:
    """infx_launcher.py is the `infx` command every job runs (pyproject's [project.scripts],
    built into the wheel beside infx/): one that rewrites the results before infx reads
    them is code that ran, outside infx/."""
    pr = green_pr(api.state)
    files = {WORKFLOW: HONEST, TEMPLATE: TEMPLATE_TEXT, **INFX_FILES, "infx_launcher.py": LAUNCHER}
    pr.branch.on_main("infx itself", **files)
    pr.branch.merge_main()
    forged = LAUNCHER.replace(
        "    cli()", "    __import__('os').environ['FAST'] = '1000'\n    cli()"
    )
    sha_a, _, manifest = attack(pr, {"infx_launcher.py": forged}, {"infx_launcher.py": LAUNCHER})
    assert "infx_launcher.py" in manifest["measured"]["files"]
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, "/use 2000")
    refused(pr, "ran other code than what merges: infx_launcher.py")
