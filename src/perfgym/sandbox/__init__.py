"""perfgym.sandbox."""
