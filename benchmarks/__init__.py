"""Benchmarks of webcorpus: `python -m benchmarks.throughput --help`."""
