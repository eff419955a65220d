"""The `infx` command's entry point, kept outside the infx package.

SemiAnalysis InferenceX names its own Python package `infx` too. With its folder on
PYTHONPATH (as its CI and scripts put it), `import infx` finds InferenceX's package first,
and a console script that imports `infx.cli` would run (or fail on) InferenceX's code.
This module is found under its own name, so it runs first: it checks which `infx` Python
would import and, when that is another package, says so in one line and runs the infx
installed beside it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

OURS = Path(__file__).resolve().parent / "infx"


def _found() -> Path | None:
    """The folder of the regular package `import infx` would load (None: none)."""
    try:
        spec = importlib.util.find_spec("infx")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent


def main() -> None:
    found = _found()
    if found != OURS:
        if not (OURS / "__init__.py").is_file():
            sys.stderr.write(f"infx: error: this infx's package is missing at {OURS}\n")
            sys.exit(2)
        shadow = found if found is not None else "nothing"
        sys.stderr.write(
            f"infx: warning: `import infx` finds another package named infx first ({shadow}), "
            f"ahead of this infx ({OURS}) on sys.path (PYTHONPATH?); InferenceX names its own "
            "package infx. Running this infx; keep the other folder off PYTHONPATH to "
            "silence this.\n"
        )
        sys.path.insert(0, str(OURS.parent))
        for name in [m for m in sys.modules if m == "infx" or m.startswith("infx.")]:
            del sys.modules[name]
    from infx.cli import main as run

    run()


if __name__ == "__main__":  # pragma: no cover
    main()
