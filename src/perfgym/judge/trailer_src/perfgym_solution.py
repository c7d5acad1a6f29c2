"""perfgym: stands in for the solution a PerfCodeBench Python harness loads; the solution itself
runs in a process of its own, and its names reach the harness as plain values or as functions
that call it there (perfgym_split.py)."""

import sys

__getattr__ = sys.modules["perfgym_split_handoff"].load(__name__)  # once per load
del sys
