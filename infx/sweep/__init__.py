"""Sweeps as the workflows start them. Pure: `labels` (what a PR's labels ask),
`label_lists` (the label names workflows spell out), `record` (what a run keeps of
itself) and the use cases `plan` (`sweep plan`, `sweep mode`), `jobs` (`canary`,
`outputs`, `chunk`, `row-env`, `validate`) and `budget` (`sweep status`), which return an
`outcome`. Reads: `facts` (the event, the repository at the plan's refs, who added a
budgeted label)."""
