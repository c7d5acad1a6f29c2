"""Make the shared builders (report_data.py) importable under importlib mode."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
