"""Benchmark results: process client output, collect a run, compare with main."""
