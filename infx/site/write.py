"""Write a built site into its folder: the pages' own files (package data in
`infx/site/static/`) and the data files, each atomically (a temporary file renamed over
it), so a server or browser reading the folder never sees half a file. Data files an
earlier build wrote and this one did not are removed; nothing else in the folder is."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from infx.site.build import INDEX, Site
from infx.yamlio import atomic_write

ASSETS = ("index.html", "style.css", "charts.js", "views.js", "history.js", "overlay.js", "app.js")
_MODE = 0o644  # what a web server (and GitHub Pages' artifact) needs to serve a file


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data, _MODE)


def asset(name: str) -> bytes:
    return (resources.files("infx.site") / "static" / name).read_bytes()


def write_site(out: Path, site: Site) -> int:
    """Write the site; returns the number of files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for path, data in site.files.items():
        if path != INDEX:
            _write(out / path, data)
            written += 1
    for name in ASSETS:
        _write(out / name, asset(name))
        written += 1
    _write(out / ".nojekyll", b"")  # GitHub Pages serves the files as they are
    _write(out / INDEX, site.files[INDEX])  # last: it names the files above
    written += 2
    wanted = {out / path for path in site.files}
    for stale in sorted((out / "data").rglob("*.js")):
        if stale not in wanted:
            stale.unlink()
    return written
