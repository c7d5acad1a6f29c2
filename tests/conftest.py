"""Every test directory can import the shared builders in tests/helpers/ (importlib mode)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))

# pytest exports COLUMNS=80 to the processes tests start, and perfgym's console honours COLUMNS:
# give them the width a CI log gets (tests read ids out of printed tables).
os.environ["COLUMNS"] = "220"

# The reference's runs are kept on disk between judges by default (perfgym.judge.reference_disk):
# tests start from none, as a first run does (the tests of that cache set their own roots).
os.environ.setdefault("PERFGYM_REFERENCE_CACHE", "off")
