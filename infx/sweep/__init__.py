"""Sweeps as the workflows start them: what a PR's labels ask, the record a run keeps."""
