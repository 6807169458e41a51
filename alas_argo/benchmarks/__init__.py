"""Benchmark drivers behind `alas bench ...`."""
