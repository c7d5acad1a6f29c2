"""The repository agent (PerfAgent): profile, patch, validate, measure, keep the best patch."""

from perfgym.agent.mswea import quiet_import

# before any submodule imports mini-swe-agent (it prints a banner and writes a config folder
# at import time)
quiet_import()
