"""Small shared rules of the site's data: numbers, units, page names, data files."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from infx.site.model import METRICS


@dataclass(frozen=True)
class Shown:
    label: str
    unit: str
    scale: float  # stored value x scale = shown value


SHOWN: dict[str, Shown] = {
    "tput_per_gpu": Shown("Throughput per GPU", "tok/s/GPU", 1.0),
    "intvty": Shown("Interactivity", "tok/s/user", 1.0),
    "median_ttft": Shown("TTFT p50", "ms", 1000.0),
    "p99_ttft": Shown("TTFT p99", "ms", 1000.0),
    "median_tpot": Shown("TPOT p50", "ms", 1000.0),
    "p99_tpot": Shown("TPOT p99", "ms", 1000.0),
}
assert set(SHOWN) == set(METRICS)

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NAME_CHARS = 60
_NAME = re.compile(rf"[a-z0-9_](?:[a-z0-9._-]{{0,{_NAME_CHARS - 2}}}[a-z0-9_])?")


def num(value: float | None, digits: int = 4) -> float | None:
    """A number as the site stores it: `digits` significant digits (smaller files; the
    charts cannot show more), None for a missing or non-finite one."""
    if value is None or not math.isfinite(value):
        return None
    if value == 0:
        return 0.0
    return float(f"{value:.{digits}g}")


def shown(metric: str, value: float | None) -> float | None:
    return None if value is None else num(value * SHOWN[metric].scale)


def shown_all(metric: str, values: list[float | None]) -> list[float | None]:
    """`shown` of a whole series at once (NumPy: a config page holds ~10,000 values)."""
    if not values:
        return []
    array = np.array([np.nan if v is None else v for v in values], dtype=float)
    array *= SHOWN[metric].scale
    finite = np.isfinite(array) & (array != 0)
    digits = np.zeros(len(array), dtype=int)
    digits[finite] = 3 - np.floor(np.log10(np.abs(array[finite]))).astype(int)
    rounded = [
        None if not math.isfinite(v) else (round(v, d) if v else 0.0)
        for v, d in zip(array.tolist(), digits.tolist(), strict=True)
    ]
    return rounded


def name(text: str) -> str:
    """A URL- and file-safe piece of a page name, one per text: the text itself when it is
    already such a name (`dsr1`, `agentic-coding`), else what is safe of it (at most
    `_NAME_CHARS` characters, never starting with a dot: the pages' router refuses that, and
    `..` is no file name) and a hash of the whole text, so `Foo`, `foo`, two names of
    non-ASCII letters or two long names sharing a beginning never share a page."""
    if _NAME.fullmatch(text):
        return text
    safe = _SAFE.sub("-", text).strip("-.").lower()[:_NAME_CHARS].rstrip("-.")
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    return f"{safe}-{digest}" if safe else digest


def scenario_name(identity: Mapping[str, Any]) -> str:
    """`1024x1024` for a fixed-seq-len config, else the scenario itself (`agentic-coding`)."""
    if identity.get("scenario") == "fixed-seq-len" and "isl" in identity:
        return f"{identity['isl']}x{identity['osl']}"
    return name(str(identity.get("scenario", "")))


def model_name(identity: Mapping[str, Any]) -> str:
    return name(str(identity.get("model-prefix") or identity.get("model") or ""))


def parallelism(identity: Mapping[str, Any]) -> str:
    """`tp8 ep8 dpa` and the like: what tells a family's configs apart on one chart."""
    if identity.get("multinode"):
        parts = []
        for role, short in (("prefill", "P"), ("decode", "D")):
            worker = identity.get(role) or {}
            part = f"{short}{worker.get('num-worker', 1)}x tp{worker.get('tp', 1)}"
            if worker.get("ep", 1) != 1:
                part += f" ep{worker['ep']}"
            if worker.get("dp-attn"):
                part += " dpa"
            parts.append(part)
        return " / ".join(parts)
    text = f"tp{identity.get('tp', 1)}"
    for key, short in (("pp", "pp"), ("ep", "ep"), ("dcp-size", "dcp"), ("pcp-size", "pcp")):
        if identity.get(key, 1) != 1:
            text += f" {short}{identity[key]}"
    if identity.get("dp-attn"):
        text += " dpa"
    return text


def data_file(key: str, value: Any) -> bytes:
    """A data file the pages load with a <script> tag (fetch() is refused under file://):
    it hands its document to the page's global `INFX_DATA` under `key`. JSON is valid
    JavaScript; `<` is escaped so no text in it can end a script element."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    head = "(window.INFX_DATA=window.INFX_DATA||{})"
    return f"{head}[{json.dumps(key)}]={text};\n".encode()
