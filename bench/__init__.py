"""Benchmarks (`make bench`). Each prints ratios against a baseline measured in the same run."""
