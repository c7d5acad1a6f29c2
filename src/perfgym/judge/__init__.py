"""perfgym.judge."""
