"""perfgym.store."""
