"""perfgym.timing."""
