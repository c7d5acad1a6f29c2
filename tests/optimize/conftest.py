"""Make the shared builders (optimize_helpers.py) importable under importlib mode, and share the
one `perfgym optimize` run (session scope) that several tests read."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from optimize_helpers import core_run  # noqa: E402,F401  (the session fixture)
