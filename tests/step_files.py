"""The files a GitHub Actions step writes back (GITHUB_OUTPUT, GITHUB_ENV), read as the
runner reads them: `key=value` lines and `key<<DELIMITER` heredocs."""

from __future__ import annotations

from pathlib import Path


def read_step_file(path: Path) -> dict[str, str]:
    """Every key the step set, the last value winning; a missing file sets nothing."""
    values: dict[str, str] = {}
    if not path.exists():
        return values
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i)
            values[key] = "\n".join(lines[i:end])
            i = end + 1
        elif "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
    return values
