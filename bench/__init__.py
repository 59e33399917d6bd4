"""Benchmarks that run this project and its peers on the same work in one process."""
