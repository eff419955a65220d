"""A static results site built from main's history: Pareto pages, each config's history
with its steps explained by the changelog, PR overlays, verdicts and coverage, as HTML,
CSS, JavaScript and data files that open from file:// and GitHub Pages.

    facts = gather(history, repo_dir, ...)   # infx.site.facts: database, git, files
    site = build_site(facts)                 # infx.site.build: pure
    write_site(out, site)                    # infx.site.write: atomic files

Importing this package loads nothing heavy; the noise model needs NumPy (the
`compare` extra).
"""

from __future__ import annotations

import importlib.util

STATS = ("numpy",)


def missing_requirements() -> list[str]:
    """The libraries of the `compare` extra this Python lacks."""
    return [name for name in STATS if importlib.util.find_spec(name) is None]


def require_compare() -> None:
    """The site draws with the `compare` extra: a usage error naming what this Python lacks."""
    from infx.errors import UsageError

    if missing := missing_requirements():
        raise UsageError(f"the site needs {', '.join(missing)}: pip install 'infx[compare]'")
