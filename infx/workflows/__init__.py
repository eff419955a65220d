"""GitHub Actions glue: label modes, and an evaluator for workflow expressions."""
