"""Security tests: their shared helpers (attack_tasks.py) importable."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
