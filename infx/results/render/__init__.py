"""What people read: the PR comment (`comment`, `model`), the run summary (`summary`), the
steps on main (`changes`), their shared cells (`cells`), all through `infx.markdown`; and
the Pareto plots (`plot`, the PNG edge)."""
