"""Maintainer checks and upkeep: the code-owner sign-off of a pull request, the Pareto
coverage of its sweep, CI priority scores and labels, the success rate of the benchmark
jobs per hardware label, and the recovery of a main run's missing ingest.

Pure rules (`codeowners`, `signoff`, `pareto`, `priority`, `success`) and their edges
(`facts` for GitHub, `schedule` for the plan and policy files, `recover` for the run's
artifacts and the history); `infx/cli/review.py` is the command line.
"""
