"""perfgym: the performance-feedback environment for code LLMs."""

__version__ = "0.1.0"
