"""What a workflow or action file makes a job run beside its own text, read as YAML.

A line regex misses a call written as a flow mapping (`- {uses: ./x}`) or reached through
an anchor (`*bench`), so the file is parsed (YAML 1.2, as GitHub reads workflows, with
anchors and aliases resolved) and every `uses:` a job or step can reach is named: reusable
workflows and local actions of this repository (whose bytes a record can hold), and
everything a record cannot hold, each as one line: a remote action or workflow at a ref
that is not a full commit SHA (a tag or a branch moves), a container image without a
digest, a repository or organization variable (`vars.*`, whose value no file holds), a
file that is not YAML or not shaped as a workflow or an action.

Pure: bytes in, values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_SHA = re.compile(r"[0-9a-f]{40}")
_IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_VARS = re.compile(r"(?<![\w.])vars\s*(?:\.\s*([A-Za-z_][\w-]*)|\[)")
# Keys whose whole value is an expression without ${{ }}.
_BARE_EXPRESSIONS = ("if",)


@dataclass(frozen=True)
class Uses:
    """What one file calls: local reusable workflows and local action folders (repository
    paths; "" is the repository root), remote refs pinned by commit, images pinned by
    digest, and what runs unrecorded (one line each)."""

    workflows: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    remote: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    unrecorded: tuple[str, ...] = ()


@dataclass
class _Found:
    workflows: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    remote: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)

    def frozen(self) -> Uses:
        return Uses(*(tuple(dict.fromkeys(getattr(self, n))) for n in Uses.__dataclass_fields__))


def parse(name: str, data: bytes) -> tuple[Any, str | None]:
    """The file as plain data (aliases resolved), or None and why it cannot be read."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from infx.yamlio import yaml_error_text

    yaml = YAML(typ="safe", pure=True)
    try:
        return yaml.load(data), None
    except (YAMLError, UnicodeDecodeError, ValueError) as exc:
        return None, f"{name} is not YAML ({yaml_error_text(exc)}), so what it runs is unknown"


def uses_of(name: str, data: bytes, *, action: bool) -> Uses:
    """What the workflow (or, with `action`, the action metadata file) `name` calls."""
    doc, problem = parse(name, data)
    found = _Found()
    if problem is not None:
        found.unrecorded.append(problem)
        return found.frozen()
    if not isinstance(doc, Mapping):
        found.unrecorded.append(f"{name} is not a mapping, so what it runs is unknown")
        return found.frozen()
    if action:
        _action(name, doc, found)
    else:
        jobs = doc.get("jobs")
        if jobs is not None and not isinstance(jobs, Mapping):
            found.unrecorded.append(f"{name}: jobs is not a mapping, so what it runs is unknown")
        for job_id, job in (jobs or {}).items():
            if not isinstance(job, Mapping):
                continue
            if "uses" in job:
                _call(name, f"job {job_id}", job["uses"], found, workflow=True)
            _steps(name, f"job {job_id}", job.get("steps"), found)
    found.unrecorded += [
        f"{name} reads the variable vars.{var} (its value is in no file, so no record "
        "holds it); move it into the settings file or a job file"
        for var in sorted(_variables(doc))
    ]
    return found.frozen()


def _action(name: str, doc: Mapping[str, Any], found: _Found) -> None:
    runs = doc.get("runs")
    if not isinstance(runs, Mapping):
        found.unrecorded.append(f"{name}: no runs: section, so what it runs is unknown")
        return
    using = str(runs.get("using", ""))
    if using == "composite":
        _steps(name, "runs", runs.get("steps"), found)
    elif using == "docker":
        image = str(runs.get("image", ""))
        if image.startswith("docker://"):
            _image(name, "runs.image", image, found)
        # Any other image is a Dockerfile in the action's folder, every file of which counts.


def _steps(name: str, where: str, steps: Any, found: _Found) -> None:
    if steps is None:
        return
    if not isinstance(steps, list):
        found.unrecorded.append(f"{name}: {where} steps are not a list")
        return
    for index, step in enumerate(steps):
        if isinstance(step, Mapping) and "uses" in step:
            _call(name, f"{where} step {index + 1}", step["uses"], found, workflow=False)


def _call(name: str, where: str, uses: Any, found: _Found, *, workflow: bool) -> None:
    text = str(uses).strip() if isinstance(uses, str) else ""
    if not text or "${{" in text:
        found.unrecorded.append(f"{name}: {where} uses {uses!r}, which names nothing fixed")
        return
    if text.startswith("docker://"):
        _image(name, where, text, found)
        return
    local = next((text[2:] for p in ("./", "$/") if text.startswith(p)), None)
    if local is not None:
        path = "/".join(p for p in local.split("/") if p not in ("", "."))
        if workflow or path.endswith((".yml", ".yaml")):
            found.workflows.append(path)
        else:
            found.actions.append(path)
        return
    target, at, ref = text.rpartition("@")
    if not at or target.count("/") < 1:
        found.unrecorded.append(f"{name}: {where} uses {text}, which names no repository ref")
    elif not _SHA.fullmatch(ref):
        found.unrecorded.append(
            f"{name}: {where} uses {text}, a ref that can move; pin it to a full commit SHA"
        )
    else:
        found.remote.append(text)


def _image(name: str, where: str, image: str, found: _Found) -> None:
    if _IMAGE_DIGEST.search(image):
        found.images.append(image)
    else:
        found.unrecorded.append(
            f"{name}: {where} uses {image}, an image tag that can move; pin it by @sha256: digest"
        )


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string of the document with the key it sits under."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k, "")
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key)
    elif isinstance(value, str):
        yield key, value


def _variables(doc: Any) -> set[str]:
    """The `vars.*` names the file's expressions read (`vars[...]` reads as `[...]`)."""
    found: set[str] = set()
    for key, text in _strings(doc):
        pieces = _EXPRESSION.findall(text)
        if key in _BARE_EXPRESSIONS and "${{" not in text:
            pieces.append(text)
        for piece in pieces:
            found.update(m.group(1) or "[...]" for m in _VARS.finditer(piece))
    return found
