"""Master configs and their expansion into a GitHub Actions benchmark matrix."""

MASTER_GLOB = "configs/*-master.yaml"
RUNNERS_FILE = "configs/runners.yaml"
