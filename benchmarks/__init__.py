"""Benchmarks of desktop_agent.session; run with ``python -m benchmarks``."""
