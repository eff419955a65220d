"""Container images: which tags move, and whether a run's jobs recorded what they pulled.

A tag names whatever its registry holds under it now; a digest (`@sha256:...`) names bytes.
A tag is **moving** when the image carries no digest pin and the tag is not release-looking:
no tag at all (docker reads `latest`), a tag that does not start with a version number
(`v0.5.12...`, `1.3.0rc14`, `0.8.1.post2` start with one; `kimi-k3`, `rocm7.2.2_...` do
not), or one holding a word of the moving kind (`latest`, `nightly`, `dev`, `main`,
`master`, `edge`, `head`, `unstable`, `snapshot`, `canary`, `preview`, `experimental`)
among its `-`/`.`/`_`/`+`-separated words (`dev-nightly-0820`, `1.3.0-dev.1-cuda13`).

Pure: the run receipt (`infx.reuse.receipt`) carries what each job recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MOVING_WORDS = frozenset(
    {
        "latest",
        "nightly",
        "dev",
        "main",
        "master",
        "edge",
        "head",
        "unstable",
        "snapshot",
        "canary",
        "preview",
        "experimental",
    }
)
_RELEASE = re.compile(r"^v?[0-9]+(\.[0-9]+)+")
_WORDS = re.compile(r"[-._+]")
_DIGEST = re.compile(r"@(sha256:[0-9a-f]{64})$")


def parts(image: str) -> tuple[str, str | None, str | None]:
    """(name, tag, digest) of an image reference; a registry's port is not a tag."""
    digest_match = _DIGEST.search(image)
    digest = digest_match.group(1) if digest_match else None
    rest = image[: digest_match.start()] if digest_match else image
    slash = max(rest.rfind("/"), rest.rfind("#"))
    colon = rest.rfind(":")
    if colon > slash:
        return rest[:colon], rest[colon + 1 :], digest
    return rest, None, digest


def moving(image: str) -> bool:
    """Whether `image` may name other bytes tomorrow (see the module's definition)."""
    _, tag, digest = parts(image)
    if digest is not None:
        return False
    if not tag or not _RELEASE.match(tag):
        return True
    return any(word in MOVING_WORDS for word in _WORDS.split(tag.lower()))


def config_images(configs: Mapping[str, Any]) -> dict[str, str]:
    """Config key -> its image, for the selected configs of a manifest."""
    return {
        key: config["image"]
        for key, config in configs.items()
        if isinstance(config, Mapping) and isinstance(config.get("image"), str)
    }


def moving_problem(configs: Mapping[str, Any], policy: str) -> str | None:
    """With `[reuse] moving-tags = "refuse"`, why a sweep of these configs is never reused
    (None: it may be): the first config whose image is a moving tag."""
    if policy != "refuse":
        return None
    for key, image in sorted(config_images(configs).items()):
        if moving(image):
            return (
                f"config {key}: image {image} is a moving tag, and [reuse] moving-tags = "
                '"refuse" (pin it by digest or a release tag)'
            )
    return None


def digest_problem(images: Iterable[Mapping[str, Any]], run_id: int) -> str | None:
    """Why the images a run's jobs recorded do not say which bytes ran (None: they do):
    every job with results recorded a digest, jobs of one image agree on it, and an image
    pinned by digest ran that digest."""
    seen: dict[str, set[str]] = {}
    for job in images:
        image, digest = str(job["image"]), job["digest"]
        if not digest:
            return (
                f"run {run_id}: job {job['job']} recorded no digest for image {image}, so what "
                "it pulled is unknown"
            )
        pinned = parts(image)[2]
        if pinned is not None and not str(digest).endswith(pinned):
            return f"run {run_id}: job {job['job']} ran {digest}, not the pinned {image}"
        seen.setdefault(image, set()).add(str(digest))
    for image, digests in sorted(seen.items()):
        if len(digests) > 1:
            shown = ", ".join(sorted(d.rsplit("@", 1)[-1][:19] for d in digests))
            return (
                f"run {run_id}: image {image} resolved to {len(digests)} digests across its "
                f"jobs ({shown}): the tag moved during the sweep"
            )
    return None
