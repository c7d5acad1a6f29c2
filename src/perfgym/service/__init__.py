"""perfgym.service."""
