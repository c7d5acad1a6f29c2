"""Every test directory can import the shared builders in tests/helpers/ (importlib mode)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))

# pytest exports COLUMNS=80 to the processes tests start, and perfgym's console honours COLUMNS:
# give them the width a CI log gets (tests read ids out of printed tables).
os.environ["COLUMNS"] = "220"
