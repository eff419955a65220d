"""GitHub Actions glue: label modes, matrix rows, comment commands."""
