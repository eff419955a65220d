"""A moving image tag (issue 25, provenance 6): each job records the digest it pulled
(benchmark-tmpl.yml), the run's receipt seals them, and reuse checks at merge that every
job recorded one and that jobs of one tag agree; `[reuse] moving-tags = "refuse"` refuses a
moving tag outright."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from infx.reuse.images import moving, parts
from tests.actions.harness import load
from tests.conftest import MASTER, SHARED
from tests.github.scenario import RUN, Green, green_pr, seal

IMAGE = "vllm/vllm-openai-rocm:v0.11.0"
DIGEST_A = "vllm/vllm-openai-rocm@sha256:" + "a" * 64
DIGEST_B = "vllm/vllm-openai-rocm@sha256:" + "b" * 64


@pytest.mark.parametrize(
    ("image", "is_moving"),
    [
        ("lmsysorg/sglang:dev-nightly-0820", True),
        ("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0-dev.1-cuda13", True),
        ("vllm/vllm-openai:latest", True),
        ("vllm/vllm-openai:nightly", True),
        ("vllm/vllm-openai", True),  # no tag: docker pulls latest
        ("lmsysorg/sglang:nightly-dev-20260527-14f81a67", True),
        ("vllm/vllm-openai:kimi-k3", True),  # not a version
        ("lmsysorg/sglang:v0.5.12-rocm700-mi35x", False),
        ("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14", False),
        ("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post2", False),
        ("lmsysorg/sglang:dev-nightly-0820@sha256:" + "c" * 64, False),  # pinned
        ("localhost:5000/engine", True),  # a registry's port is no tag
    ],
)
def test_what_moving_means(image: str, is_moving: bool) -> None:
    assert moving(image) is is_moving


def test_a_registry_port_is_not_a_tag() -> None:
    assert parts("localhost:5000/engine:v1.2") == ("localhost:5000/engine", "v1.2", None)


@pytest.mark.skipif(not (SHARED / "configs").is_dir(), reason="needs ../shared/inferencex")
def test_inferencex_s_images_split_into_moving_and_release_tags() -> None:
    """On the real master configs: every nightly or dev tag is moving, every vX.Y.Z tag
    without such a word is not, and the figure is written down in docs/reuse.md."""
    import re

    images = set()
    for path in sorted((SHARED / "configs").glob("*-master.yaml")):
        images |= {m.strip('"') for m in re.findall(r"^\s*image:\s*(\S+)", path.read_text(), re.M)}
    movers = {i for i in images if moving(i)}
    assert all(moving(i) for i in images if "nightly" in i or "-dev" in i or ":dev" in i)
    assert not any(moving(i) for i in images if re.search(r":v\d+\.\d+\.\d+(-rocm|-cu|$)", i))
    assert (len(images), len(movers)) == (94, 43)


# --- the job records what it pulled ------------------------------------------------------------


def record_step() -> tuple[dict, list[str]]:
    steps = load("benchmark-tmpl.yml")["jobs"]["benchmark"]["steps"]
    names = [s.get("name", "") for s in steps]
    (step,) = [s for s in steps if s.get("name") == "Record the image the job ran"]
    return step, names


def test_the_template_records_the_digest_after_the_recipe_whatever_it_did() -> None:
    step, names = record_step()
    assert step["if"] == "always()"
    at = names.index("Record the image the job ran")
    assert names.index("Run the recipe") < at < names.index("Upload results")


@pytest.mark.parametrize(("docker", "written"), [("digest", DIGEST_A), ("fails", "")])
def test_the_step_writes_the_repository_digest_docker_gives(
    tmp_path: Path, docker, written
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "docker"
    body = f'echo "{DIGEST_A}"' if docker == "digest" else "echo 'No such image' >&2; exit 1"
    fake.write_text(
        f'#!/bin/bash\n[ "$1 $2 $3" = "image inspect --format" ] || exit 9\n'
        f'[ "$5" = "{IMAGE}" ] || exit 8\n{body}\n'
    )
    fake.chmod(0o755)
    step, _ = record_step()
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "IMAGE": IMAGE,
           "RESULTS_DIR": str(tmp_path / "results")}  # fmt: skip
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", step["run"]], env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "results" / "image-digest.txt").read_text().strip() == written


# --- reuse checks them -----------------------------------------------------------------------


def jobs(*digests: str | None, image: str = IMAGE) -> list[dict]:
    return [
        {"job": f"results_bmk/bmk_llama_0_{i}", "image": image, "digest": d}
        for i, d in enumerate(digests)
    ]


def sealed_with(pr: Green, images: list[dict], run_id: int = RUN) -> None:
    manifest = json.dumps(pr.manifests[run_id]).encode()
    seal(pr.state, run_id, manifest, pr.sha1, images)


def test_every_job_recorded_one_digest_per_tag_and_reuse_holds(api) -> None:
    pr = green_pr(api.state)
    sealed_with(pr, jobs(DIGEST_A, DIGEST_A))
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


@pytest.mark.parametrize(
    ("images", "says"),
    [
        (jobs(DIGEST_A, None), "job results_bmk/bmk_llama_0_1 recorded no digest for image"),
        (jobs(DIGEST_A, DIGEST_B), "resolved to 2 digests across its jobs"),
        (
            jobs(DIGEST_B, image=f"vllm/vllm-openai-rocm@sha256:{'a' * 64}"),
            "ran " + DIGEST_B + ", not the pinned",
        ),
    ],
    ids=["missing", "moved mid-sweep", "not the pin"],
)
def test_a_run_whose_jobs_do_not_say_what_they_pulled_is_not_reused(api, images, says) -> None:
    pr = green_pr(api.state)
    sealed_with(pr, images)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and says in out["reuse-reason"], out["reuse-reason"]


def test_a_run_the_issuer_never_sealed_is_not_reused(api) -> None:
    """The run's own claim (its sweep-receipt) vouches for nothing: the issuer's does."""
    from tests.github.scenario import ISSUER_RUNS

    pr = green_pr(api.state)
    api.state.artifacts[ISSUER_RUNS + RUN] = []
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} has no receipt from the issuer (run-receipt-{RUN}-1)" in out["reuse-reason"]


@pytest.mark.parametrize(("policy", "reused"), [("record", "true"), ("refuse", "false")])
def test_moving_tags_refuse_refuses_a_moving_tag_outright(api, policy, reused) -> None:
    pr = green_pr(api.state)
    nightly = "vllm/vllm-openai-rocm:dev-nightly-0820"
    pr.branch.on_main(
        "nightly image",
        **{
            "configs__amd-master.yaml": MASTER.replace(IMAGE, nightly),
            "infx.toml": f'[reuse]\nmoving-tags = "{policy}"\n',
        },
    )
    head = pr.branch.merge_main()
    pr.record_run(1080, head, 80)
    seal(pr.state, 1080, json.dumps(pr.manifests[1080]).encode(), head,
         jobs(DIGEST_A, DIGEST_A, image=nightly))  # fmt: skip
    _, out = pr.gate()
    assert out["reuse-enabled"] == reused, out["reuse-reason"]
    if reused == "false":
        assert f"image {nightly} is a moving tag" in out["reuse-reason"]
