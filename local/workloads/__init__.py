"""Data sets the benchmarks measure and the tests check: the same shapes in both."""
