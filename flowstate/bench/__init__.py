"""Benchmarks behind `flowstate bench`: engine speed, token economy, tau-bench, faults."""
