"""A PR with green full sweeps and an authorized /reuse-sweep-run, ready to tweak and merge.

Everything is real but GitHub itself: a bare origin repository with `main` and the PR
branch `feature`; each sweep run is recorded as its planning job would record it (the
PR's merge commit with main at that moment, checked out, planned by `infx sweep plan
--from-event --manifest` under the PR's labels), its `sweep-manifest` artifact served by
the fake API; the merge is a squash commit pushed to main; `infx reuse gate` runs in a
checkout of the pushed commit, as the sweep workflow's reuse-gate job does.
"""

from __future__ import annotations

import atexit
import functools
import io
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner, Result

from infx.cli import cli
from infx.matrix.manifest import evaluated
from infx.reuse.preview import merge_preview
from tests.conftest import HISTORY, LINK, GitRepo, entry, make_repo
from tests.github.fake_api import REPO, T0, FakeGitHub, State
from tests.github.sigstore import Fulcio, identity

OTHER_SHA = "a2" * 20  # a commit that is not the PR's
RUN = 1039
LABELS = ("full-sweep-fail-fast",)
PR_ENTRY = entry(description="PR change")
MAIN_ENTRY = entry(keys=["llama-fp8-mi355x-sglang"], link=f"{LINK}30", description="Main change")


def changelog(*entries: str, link: str | None = None, history: str = HISTORY) -> str:
    """The history plus `entries`; `link` replaces the last entry's placeholder."""
    last = entries[-1].replace("pr-link: XXX", f"pr-link: {link}") if link else entries[-1]
    return "\n".join([history, *entries[:-1], last])


@contextmanager
def inside(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


class PrBranch:
    """A bare origin with `main` and the PR branch `feature`, grown commit by commit."""

    def __init__(self, origin: Path) -> None:
        self.origin = origin
        self._work: GitRepo | None = None

    @property
    def work(self) -> GitRepo:
        if self._work is None:
            path = self.origin.with_name(self.origin.stem + "-work")
            subprocess.run(["git", "clone", "-q", str(self.origin), str(path)], check=True)
            self._work = GitRepo(path)
            self._work.git("config", "user.email", "ci@example.invalid")
            self._work.git("config", "user.name", "CI")
            self._work.git("config", "commit.gpgsign", "false")
            self._work.git("checkout", "-q", "feature")
        return self._work

    def commit(self, message: str = "change", **files: str | bytes) -> str:
        sha = self.work.commit(message, **files)
        self.work.git("push", "-q", "origin", "feature")
        return sha

    def on_main(self, message: str = "main change", **files: str | bytes) -> str:
        self.work.git("checkout", "-q", "main")
        sha = self.work.commit(message, **files)
        self.work.git("push", "-q", "origin", "main")
        self.work.git("checkout", "-q", "feature")
        return sha

    def merge_main(self, **resolved: str | bytes) -> str:
        """Merge main into the PR branch; `resolved` gives the content of conflicted files."""
        self.work.git("merge", "-q", "--no-edit", "main", check=False)
        for name, data in resolved.items():
            self.work.write(name.replace("__", "/"), data)
            self.work.git("add", name.replace("__", "/"))
        self.work.git("commit", "-q", "--no-edit", check=False)
        self.work.git("push", "-q", "origin", "feature")
        return self.work.git("rev-parse", "HEAD")


def seed_origin(tmp: Path, files: dict[str, str | bytes] | None = None) -> tuple[Path, PrBranch]:
    """A bare origin.git with `main` (the base history and master config, or `files`) and a
    `feature` branch at the same commit."""
    seed = make_repo(tmp / "seed")
    if files:
        for name in list(seed.path.iterdir()):
            if name.name != ".git":
                shutil.rmtree(name) if name.is_dir() else name.unlink()
        seed.commit("base", **files)
    seed.git("branch", "feature")
    origin = tmp / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed.path), str(origin)], check=True)
    return origin, PrBranch(origin)


def unzipped(data: bytes) -> dict[str, bytes]:
    """Every member of a small archive the fake API serves."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {i.filename: archive.read(i) for i in archive.infolist() if not i.is_dir()}


def zip_files(files: dict[str, bytes]) -> bytes:
    """An artifact archive of these files, as GitHub serves one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def zipped(name: str, data: str) -> bytes:
    return zip_files({name: data.encode()})


def manifest_zip(manifest: dict) -> bytes:
    return zipped("sweep-manifest.json", json.dumps(manifest))


def seal(
    state: State,
    run_id: int,
    manifest: bytes | None,
    checked_out: str,
    images: list[dict] | None = None,
) -> dict:
    """The run's claim, as its collect job writes it (schemas/receipt.schema.json): the
    members of its other artifacts as the fake API serves them, its manifest, `images`; the
    sweep-receipt artifact's blob becomes it (when the run has that artifact). Then the
    issuer seals the run (`issue`), as sweep-receipt.yml does when the run completes."""
    from infx.reuse.receipt import RunFacts, run_receipt
    from infx.reuse.receipt_files import zip_members

    run = next(r for r in state.runs if r["id"] == run_id)
    published = {
        a["name"]: zip_members(state.blobs[a["id"]], a["name"])
        for a in state.artifacts[run_id]
        if a["name"] in ("results_bmk", "eval_results_all", "changelog-metadata")
        and a["id"] in state.blobs
    }
    facts = RunFacts(
        REPO, run_id, run["run_attempt"], run["event"], run["path"], checked_out,
        run["head_sha"], "refs/pull/7/merge",
    )  # fmt: skip
    receipt = run_receipt(facts, {}, manifest, published, {}, images or [])
    for artifact in state.artifacts[run_id]:
        if artifact["name"] == "sweep-receipt":
            state.blobs[artifact["id"]] = zipped("receipt.json", json.dumps(receipt))
    state.run_checkouts.setdefault(run_id, ("refs/pull/7/merge", checked_out))
    issue(state, run_id, images)
    return receipt


FULCIO = Fulcio()
ISSUER_RUNS = 10**6  # the issuer's run of sweep run N is ISSUER_RUNS + N


def _main_tip(state: State) -> str:
    if not state.git_remote:
        return "e" * 40
    done = subprocess.run(["git", "rev-parse", "refs/heads/main"], cwd=state.git_remote,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def issue(
    state: State,
    run_id: int,
    images: list[dict] | None = None,
    *,
    attest_claim: bool = True,
    attest_receipt: bool = True,
) -> dict:
    """What sweep-receipt.yml does when run `run_id` completes, with the issuer's own code
    (`issued_receipt`) over what the fake API serves: the run's claim attested by the run
    itself (a pull_request run's certificate names the ref and commit GitHub checked out,
    `State.run_checkouts`), the issuer's receipt uploaded by an issuer run of main's tip
    and attested with the issuer's identity. `attest_claim` False: the run made no
    attestation (the issuer then lists the pull requests of its branch)."""
    from infx.github.reading import Json
    from infx.github.reading import run as read_run
    from infx.matrix.manifest import canonical, sha256
    from infx.reuse.issue_facts import _table
    from infx.reuse.issuer import (
        CLAIM_ARTIFACT,
        CLAIM_FILE,
        ISSUED_FILE,
        ISSUER_WORKFLOW,
        SEALED,
        Checkout,
        IssueFacts,
        Issuer,
        issued_artifact,
        issued_receipt,
        pulls_facts,
    )  # fmt: skip

    found = next(r for r in state.runs if r["id"] == run_id)
    run = read_run(Json(found))
    files, archives = {}, {}
    for artifact in state.artifacts[run_id]:
        if artifact["name"] in SEALED and not artifact["expired"] and artifact["id"] in state.blobs:
            archives[artifact["name"]] = sha256(state.blobs[artifact["id"]])
            files[artifact["name"]] = unzipped(state.blobs[artifact["id"]])
    claim_bytes = files.get(CLAIM_ARTIFACT, {}).get(CLAIM_FILE)
    claim = sha256(claim_bytes) if claim_bytes is not None else None
    ref, sha = state.run_checkouts.get(run_id, (f"refs/heads/{run.head_branch}", run.head_sha))
    pulls = None
    if run.event != "pull_request":
        checkout = Checkout(f"refs/heads/{run.head_branch}", run.head_sha, "event")
    elif attest_claim and claim is not None:
        fields = identity(REPO, run.path, ref, sha, run.event, run.id, run.run_attempt)
        state.attestations.setdefault(claim, []).append(FULCIO.attest(claim, fields))
        checkout = Checkout(ref, sha, "attestation", "github-hosted")
    else:
        checkout = Checkout(None, None, "pulls")
        from infx.github.reading import pull as read_pull

        mine = [read_pull(Json(p)) for p in state.pulls.values()
                if p["head"]["ref"] == run.head_branch]  # fmt: skip
        changed = {p.number: [e for e in state.timeline.get(p.number, [])
                              if e["event"] == "base_ref_changed"] for p in mine}  # fmt: skip
        pulls = pulls_facts(mine, changed)
    tip = _main_tip(state)
    issuer_id = ISSUER_RUNS + run_id
    facts = IssueFacts(
        REPO, Issuer(ISSUER_WORKFLOW, "refs/heads/main", tip, issuer_id, 1), run, checkout,
        pulls, claim, {n: {m: sha256(d) for m, d in f.items()} for n, f in files.items()},
        archives, files.get("sweep-manifest", {}).get("sweep-manifest.json"), images or [],
        {}, _table(files.get("results_bmk")),
    )  # fmt: skip
    receipt = issued_receipt(facts)
    data = canonical(receipt)
    state.runs[:] = [r for r in state.runs if r["id"] != issuer_id]
    created = datetime.fromisoformat(found["created_at"].replace("Z", "+00:00"))
    state.add_run(issuer_id, head_sha=tip, minute=(created - T0).total_seconds() / 60 + 40,
                  branch="main", event="workflow_run", path=ISSUER_WORKFLOW,
                  artifacts=[issued_artifact(run_id, run.run_attempt)],
                  title=f"seal run {run_id} ({run.event})")  # fmt: skip
    state.runs.insert(0, state.runs.pop())  # the sweep runs stay last, as tests expect
    state.blobs[state.artifacts[issuer_id][0]["id"]] = zipped(ISSUED_FILE, data.decode())
    if attest_receipt:
        fields = identity(REPO, ISSUER_WORKFLOW, "refs/heads/main", tip, "workflow_run", issuer_id)
        state.attestations.setdefault(sha256(data), []).append(FULCIO.attest(sha256(data), fields))
    return receipt


@dataclass
class Green:
    """The PR of green_pr: its branch, the commits adding its entry and fixing the link, and
    a checkout (`runner`) where planning jobs and the reuse gate run."""

    state: State
    branch: PrBranch
    sha0: str
    sha1: str
    runner: GitRepo
    merged: str | None = None  # the squash commit on main, once merged
    before: str | None = None  # main before it
    manifests: dict[int, dict] = field(default_factory=dict)

    def _sync(self) -> None:
        self.runner.git("fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*")

    def merge_commit(self, head: str) -> str:
        """GitHub's test merge of `head` into main as it is now (refs/pull/7/merge)."""
        self._sync()
        tree = merge_preview(self.runner.path, "origin/main", head, "perf-changelog.yaml")
        return self.runner.git(
            "commit-tree", tree, "-p", "origin/main", "-p", head, "-m", "Merge into main"
        )

    def record_run(
        self,
        run_id: int,
        sha: str,
        minute: float,
        *,
        labels: tuple[str, ...] = LABELS,
        artifacts: list[str] | None = None,
        **run: object,
    ) -> dict:
        """A sweep run of `sha`: its planning job checks out the PR's merge commit with main
        and writes the manifest under `labels`; the run uploads it and `results_bmk`
        (`eval_results_all` too when it planned evals)."""
        merge = self.merge_commit(sha)
        self.runner.git("checkout", "-q", "--detach", merge)
        payload = {
            "action": "synchronize",
            "number": 7,
            "repository": {"full_name": REPO},
            "pull_request": {
                "number": 7,
                "draft": False,
                "labels": [{"name": name} for name in labels],
                "head": {"sha": sha, "ref": "feature", "repo": {"full_name": REPO}},
                "base": {"ref": "main", "repo": {"full_name": REPO}},
            },
        }
        event = self.runner.path.parent / f"event-{run_id}.json"
        event.write_text(json.dumps(payload))
        out = self.runner.path.parent / f"manifest-{run_id}.json"
        env = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event)}
        plan = self.runner.path.parent / f"plan-{run_id}.json"
        # Planning reads who set the sweep labels; those reads belong to the sweep run this
        # builds, not to the command a test then counts the requests of.
        asked = len(self.state.requests)
        with inside(self.runner.path):
            result = CliRunner().invoke(
                cli,
                ["sweep", "plan", "--from-event", "--output", str(plan), "--manifest", str(out)],
                env=env,
            )
        assert result.exit_code == 0, result.output
        del self.state.requests[asked:]
        manifest = json.loads(out.read_text())
        if artifacts is None:
            artifacts = ["results_bmk", "sweep-manifest", "changelog-metadata", "sweep-receipt"]
            if evaluated(manifest):
                artifacts.append("eval_results_all")
        self.state.add_run(run_id, head_sha=sha, minute=minute, artifacts=artifacts, **run)
        self.publish_merge(run_id, merge)
        for artifact in self.state.artifacts[run_id]:
            if artifact["name"] == "sweep-manifest":
                self.state.blobs[artifact["id"]] = manifest_zip(manifest)
            elif artifact["name"] != "sweep-receipt":
                self.state.blobs[artifact["id"]] = zipped(f"{artifact['name']}.json", "{}")
        seal(self.state, run_id, out.read_bytes(), merge)
        self.manifests[run_id] = manifest
        return manifest

    def publish_merge(self, run_id: int, merge: str) -> None:
        """GitHub's test merge as origin keeps it (refs/pull/7/merge; fetchable by id later),
        and the run's checkout as GitHub records it."""
        self.runner.git("push", "-q", "-f", "origin", f"{merge}:refs/pull/7/merge",
                        f"{merge}:refs/runs/{run_id}")  # fmt: skip
        self.state.run_checkouts[run_id] = ("refs/pull/7/merge", merge)

    def merge(self, **files: str | bytes) -> str:
        """Squash-merge the PR into main (its merge with main, or `files` on top of it)."""
        self._sync()
        head = self.runner.git("rev-parse", "origin/feature")
        tree = merge_preview(self.runner.path, "origin/main", head, "perf-changelog.yaml")
        self.before = self.runner.git("rev-parse", "origin/main")
        self.runner.git("checkout", "-q", "--detach", self.before)
        self.runner.git("read-tree", "-u", "--reset", tree)
        for name, data in files.items():
            self.runner.write(name.replace("__", "/"), data)
        self.runner.git("add", "-A")
        self.runner.git("commit", "-q", "-m", "Squash-merge PR #7")
        self.merged = self.runner.git("rev-parse", "HEAD")
        self.runner.git("push", "-q", "origin", "HEAD:refs/heads/main")
        pull = self.state.pulls[7]
        pull["merged_at"] = "2026-11-30T20:20:00Z"
        pull["state"] = "closed"
        pull["merge_commit_sha"] = self.merged
        self.state.commit_pulls[self.merged] = [7]
        return self.merged

    def gate(self, event: str = "push", **extra: str) -> tuple[Result, dict]:
        """`infx reuse gate` as the sweep workflow's reuse-gate job runs it: a push of the
        merge (merged first if needed), or a PR event on GitHub's merge commit."""
        if event == "push":
            sha = extra.pop("sha", None) or self.merged or self.merge()
            before = extra.pop("before", self.before)
            if self.runner.git("cat-file", "-t", sha, check=False) == "commit":
                self.runner.git("checkout", "-q", "--detach", sha)
            args = ["--commit-sha", sha, "--before", before or ""]
        else:
            sha = extra.pop("sha", None) or self.state.pulls[7]["head"]["sha"]
            self.runner.git("checkout", "-q", "--detach", self.merge_commit(sha))
            args = ["--commit-sha", sha]
        args += ["--event-name", event, "--ref", extra.pop("ref", "refs/heads/main")]
        for key, value in extra.items():
            args += [f"--{key.replace('_', '-')}", value]
        with inside(self.runner.path):
            result = CliRunner().invoke(cli, ["reuse", "gate", "--repo", REPO, *args])
        outputs = json.loads(result.stdout) if result.exit_code == 0 else {}
        return result, outputs

    def at_main(self) -> GitRepo:
        """The runner checked out at main with every branch fetched (a comment workflow's
        checkout with full history)."""
        self._sync()
        self.runner.git("checkout", "-q", "--detach", "origin/main")
        # Its own branches too, so that a clone of it (the workflow harness's checkout)
        # holds every branch as origin/*, as actions/checkout with fetch-depth 0 does.
        self.runner.git("fetch", "-q", "origin", "+refs/heads/*:refs/heads/*")
        return self.runner


@functools.cache
def _green_origin() -> tuple[Path, str, str]:
    """green_pr's repository, built once per test session and copied for each test."""
    tmp = Path(tempfile.mkdtemp(prefix="infx-green-pr-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    origin, branch = seed_origin(tmp)
    sha0 = branch.commit("entry", **{"perf-changelog.yaml": changelog(PR_ENTRY)})
    sha1 = branch.commit("link", **{"perf-changelog.yaml": changelog(PR_ENTRY, link=f"{LINK}7")})
    return origin, sha0, sha1


def open_pr(
    state: State,
    origin: Path,
    sha0: str,
    sha1: str,
    *,
    labels: tuple[str, ...] = LABELS,
    copy: bool = True,
) -> Green:
    """PR #7 over `origin` (a copy of it unless `copy` is False), open, labelled, with a
    checkout to run jobs in."""
    workdir = state.workdir or Path(tempfile.mkdtemp())
    workdir.mkdir(parents=True, exist_ok=True)
    if copy:
        target = workdir / "origin.git"
        shutil.copytree(origin, target, ignore=shutil.ignore_patterns("hooks"))  # fewer files
        origin = target
    branch = PrBranch(origin)
    # GitHub serves any commit of the repository by id (a merge commit of a PR included).
    subprocess.run(["git", "config", "uploadpack.allowAnySHA1InWant", "true"], cwd=origin,
                   check=True)  # fmt: skip
    state.git_remote = str(origin)
    state.add_pull(7, head_sha=sha1, labels=list(labels), commits=[sha0, sha1])
    state.label(7, "labeled", labels[0], 10)
    path = workdir / "runner"
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True)
    runner = GitRepo(path)
    runner.git("config", "user.email", "ci@example.invalid")
    runner.git("config", "user.name", "CI")
    return Green(state, branch, sha0, sha1, runner)


def green_pr(state: State, *, comments: int = 3, runs: int = 3) -> Green:
    """PR #7: sha0 appends its entry, sha1 canonicalizes the link. Runs before RUN ran sha0,
    RUN ran sha1; a maintainer asked for reuse after them. Not merged yet: `merge()` or
    `gate()` (a push) merges it."""
    template, sha0, sha1 = _green_origin()
    green = open_pr(state, template, sha0, sha1)
    for i in range(comments):
        state.add_comment(7, f"reader{i % 4}", f"looks good {i}", 20 + i * 0.1, "CONTRIBUTOR")
    for i in range(runs - 1):
        green.record_run(RUN - runs + 1 + i, sha0, 30 + i)
    green.record_run(RUN, sha1, 60)
    state.permissions.update({"maintainer": "write", "owner": "admin", "reader0": "read"})
    state.add_comment(7, "maintainer", "Green sweep.\n/reuse-sweep-run\n", 100)
    return green


def comment_event(
    tmp: Path, comment: dict, *, action: str = "created", on_pr: bool = True, number: int = 7
) -> dict[str, str]:
    issue = {"number": number, **({"pull_request": {"url": "x"}} if on_pr else {})}
    payload = {
        "action": action,
        "issue": issue,
        "comment": comment,
        "repository": {"full_name": REPO},
    }
    path = tmp / "event.json"
    path.write_text(json.dumps(payload))
    return {"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(path)}


def invoke(args: list[str], env: dict[str, str], cwd: Path | None = None) -> Result:
    if cwd is None:
        return CliRunner().invoke(cli, args, env=env)
    with inside(cwd):
        return CliRunner().invoke(cli, args, env=env)


__all__ = [
    "MAIN_ENTRY",
    "OTHER_SHA",
    "PR_ENTRY",
    "RUN",
    "FakeGitHub",
    "Green",
    "PrBranch",
    "changelog",
    "comment_event",
    "green_pr",
    "inside",
    "invoke",
    "open_pr",
    "seal",
    "seed_origin",
]
