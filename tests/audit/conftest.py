"""Audit tests: audit_tasks.py (the tasks built to fail or pass each probe) importable."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the real `perfgym` entry point and the one-line error check the CLI tests use
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cli"))
# sum_programs.py: one sum program per language, for the per-language probe writers
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "judge")
)
