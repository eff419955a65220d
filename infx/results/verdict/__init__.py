"""The judging: a pull request's rows against main's history (`judge`, on the noise model:
`decide`, `power`, `curves`, `points`), its values (`report`) and JSON (`document`), who may
wave a failing gate through (`gate`), steps on main (`changes`, `steps`), repeats and
accuracy floors. Pure."""
