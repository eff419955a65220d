"""Rerun only what failed, and say why jobs failed. Pure rules: `rules` (rows without a
valid result, the rerun plan, refusals), `triage` (failure classes), and the use cases
`decide` (`sweep rerun`, `/rerun-failed`, `dispatch-rerun`), `plan` (`sweep rerun-plan`)
and `jobs` (`sweep triage`, `sweep timings`). Reads: `facts` (artifacts, logs, files) and
`reads` (what each use case reads, in order)."""
