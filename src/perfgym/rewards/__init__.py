"""perfgym.rewards."""
