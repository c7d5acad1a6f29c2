"""perfgym.simulate."""
