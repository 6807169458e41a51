"""Benchmark drivers behind `alas bench ...`: each module runs one benchmark and writes its tables."""

__all__: list[str] = []
