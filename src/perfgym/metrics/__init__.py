"""perfgym.metrics."""
