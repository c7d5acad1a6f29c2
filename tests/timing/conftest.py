"""Timing fixtures: small real tasks of graded speed, a competing load, a CPU-quota cgroup."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
