"""perfgym.report."""
