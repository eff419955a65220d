"""Rerun only what failed: triage, the rerun plan and the reads it needs."""
