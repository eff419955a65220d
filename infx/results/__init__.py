"""Benchmark results: client output to result rows, a run's table, its verdict against main's
history, and what is said about it. Subpackages, top to bottom (`[tool.importlinter]`):

- `compare`: the `compare` request and outcome, and its GitHub edge (main's runs, the PR);
- `ingest`: client output to rows, a run's table (`collect`), and the file edge;
- `render`: Markdown for people (the comment, the run summary, steps on main) and plots;
- `verdict`: the judging: a PR against main, steps on main, acknowledgements, floors;
- `noise`: the fitted noise model of main's history (NumPy);
- `table`: what a row is, and how rows are keyed, matched and named.
"""
